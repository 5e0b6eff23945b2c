"""Key rows: the get-or-create of the rows other rows refer to (devices, kernel versions, graph
classes), and the selections of a run's and a best configuration's key.

Plain functions on an open session (:meth:`tuning_db.Store.transact` hands one out), shared by
the store's parts (runs, trials, best configurations) and by export/import
(:mod:`tuning_db.transfer`), so that none of them reaches into another's private members.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sssp.classes import GraphClass
from sssp.errors import StoreError

from .models import BestConfig, Device, GraphClassRow, KernelVersion, TuningRun, utcnow
from .records import DeviceRecord, KernelVersionRecord, RunKey, RunStatus

KeyRows = tuple[Device, KernelVersion, GraphClassRow]


def device_row(session: Session, rec: DeviceRecord, *, update: bool) -> Device:
    """The row of ``rec``'s device (by UUID), made when missing; ``update`` refreshes its
    facts (a live device may have a newer driver than when it was first seen)."""
    row = session.scalars(select(Device).where(Device.uuid == rec.uuid)).one_or_none()
    if row is None:
        row = Device(uuid=rec.uuid)
        session.add(row)
    elif not update:
        return row
    row.name = rec.name
    row.compute_capability = rec.compute_capability
    row.sm_count = rec.sm_count
    row.driver_version = rec.driver_version
    row.cuda_version = rec.cuda_version
    session.flush()
    return row


def kernel_version_row(session: Session, rec: KernelVersionRecord) -> KernelVersion:
    """The row of (digest, compile options), made when missing."""
    stmt = select(KernelVersion).where(
        KernelVersion.digest == rec.digest, KernelVersion.compile_options == rec.compile_options
    )
    row = session.scalars(stmt).one_or_none()
    if row is None:
        row = KernelVersion(digest=rec.digest, compile_options=rec.compile_options)
        session.add(row)
        session.flush()
    return row


def class_row(session: Session, gc: GraphClass) -> GraphClassRow:
    """The row of a graph class, made when missing."""
    stmt = select(GraphClassRow).where(
        GraphClassRow.size == gc.size,
        GraphClassRow.degree == gc.degree,
        GraphClassRow.diameter == gc.diameter,
    )
    row = session.scalars(stmt).one_or_none()
    if row is None:
        row = GraphClassRow(size=gc.size, degree=gc.degree, diameter=gc.diameter)
        session.add(row)
        session.flush()
    return row


def key_rows(session: Session, key: RunKey, *, update: bool = True) -> KeyRows:
    """(device, kernel version, class) rows of a run key."""
    return (
        device_row(session, key.device, update=update),
        kernel_version_row(session, key.kernel_version),
        class_row(session, key.graph_class),
    )


def run_key_clauses(
    key: RunKey, dev: Device, kv: KernelVersion, gc: GraphClassRow, device: Any = None
) -> list[Any]:
    """The clauses that select ``key``'s runs (``device``: another clause for the device)."""
    return [
        TuningRun.device_id == dev.id if device is None else device,
        TuningRun.kernel_version_id == kv.id,
        TuningRun.graph_class_id == gc.id,
        TuningRun.algorithm == key.algorithm,
        TuningRun.variant == key.variant,
        TuningRun.kernel == key.kernel,
        TuningRun.strategy == key.strategy,
        TuningRun.instance == key.instance,
        TuningRun.replay == key.replay,
    ]


def new_run(key: RunKey, rows: KeyRows, *, budget: int | None, seed: int, owner: str) -> TuningRun:
    """A new, running run of ``key`` held by ``owner`` (not yet added to the session)."""
    dev, kv, gc = rows
    now = utcnow()
    return TuningRun(
        device=dev,
        kernel_version=kv,
        graph_class=gc,
        algorithm=key.algorithm,
        variant=key.variant,
        kernel=key.kernel,
        strategy=key.strategy,
        instance=key.instance,
        replay=key.replay,
        budget=budget,
        seed=seed,
        status=RunStatus.RUNNING.value,
        started_at=now,
        owner=owner,
        heartbeat_at=now,
    )


def run_row(session: Session, run_id: int, where: str) -> TuningRun:
    """The run ``run_id``; a :class:`StoreError` naming ``where`` (the database) when missing."""
    row = session.get(TuningRun, run_id)
    if row is None:
        raise StoreError(f"{where} has no tuning run with id {run_id}")
    return row


def best_row(
    session: Session,
    dev: Device,
    kv: KernelVersion,
    gc: GraphClassRow,
    algorithm: str,
    variant: str,
) -> BestConfig | None:
    """The best configuration of this key, or None."""
    stmt = select(BestConfig).where(
        BestConfig.device_id == dev.id,
        BestConfig.kernel_version_id == kv.id,
        BestConfig.graph_class_id == gc.id,
        BestConfig.algorithm == algorithm,
        BestConfig.variant == variant,
    )
    return session.scalars(stmt).one_or_none()


def new_best(
    dev: Device, kv: KernelVersion, gc: GraphClassRow, algorithm: str, variant: str
) -> BestConfig:
    """An empty best-configuration row of this key (filled by
    :func:`tuning_db.mapping.fill_best`)."""
    return BestConfig(
        device=dev, kernel_version=kv, graph_class=gc, algorithm=algorithm, variant=variant
    )
