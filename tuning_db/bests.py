"""Best configurations (the best-configuration part of :class:`tuning_db.Store`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sssp.classes import GraphClass

from . import rows
from .mapping import best_record, device_record, fill_best
from .models import BestConfig, Device, GraphClassRow, KernelVersion
from .records import BestRecord, DeviceRecord
from .storebase import StoreBase


class BestsMixin(StoreBase):
    """Best configurations of :class:`tuning_db.Store`: sessions come from its
    :meth:`~tuning_db.Store.transact`, key rows from :mod:`tuning_db.rows`."""

    # -- best configurations -------------------------------------------------------------------

    def put_best(self, best: BestRecord) -> None:
        """Insert or replace the best configuration of its (device, kernel version, class,
        algorithm, variant)."""

        def work(session: Session) -> None:
            dev = rows.device_row(session, best.device, update=True)
            kv = rows.kernel_version_row(session, best.kernel_version)
            gc = rows.class_row(session, best.graph_class)
            row = rows.best_row(session, dev, kv, gc, best.algorithm, best.variant)
            if row is None:
                row = rows.new_best(dev, kv, gc, best.algorithm, best.variant)
                session.add(row)
            fill_best(row, best, best.run_id)
            session.flush()

        self.transact(work)

    def _bests(self, *clauses: Any) -> list[BestRecord]:
        def work(session: Session) -> list[BestRecord]:
            stmt = (
                select(BestConfig)
                .join(BestConfig.device)
                .join(BestConfig.kernel_version)
                .join(BestConfig.graph_class)
                .where(*clauses)
            )
            return [best_record(r) for r in session.scalars(stmt).unique()]

        return self.transact(work, retries=0)

    def best(
        self, device_uuid: str, digest: str, graph_class: GraphClass, algorithm: str, variant: str
    ) -> BestRecord | None:
        """The stored best configuration of exactly this key, or ``None`` (when the digest was
        tuned under several compile-option sets, the newest)."""
        out = self._bests(
            Device.uuid == device_uuid,
            KernelVersion.digest == digest,
            GraphClassRow.size == graph_class.size,
            GraphClassRow.degree == graph_class.degree,
            GraphClassRow.diameter == graph_class.diameter,
            BestConfig.algorithm == algorithm,
            BestConfig.variant == variant,
        )
        return max(out, key=lambda b: b.updated_at, default=None)

    def best_for_device(
        self,
        device_uuid: str,
        digest: str | None = None,
        algorithm: str = "crauser",
        variant: str = "successors",
    ) -> list[BestRecord]:
        """Every class's best configuration on one device (all kernel versions with
        ``digest=None``), by class size, then degree, newest first within a class."""
        clauses = [
            Device.uuid == device_uuid,
            BestConfig.algorithm == algorithm,
            BestConfig.variant == variant,
        ]
        if digest is not None:
            clauses.append(KernelVersion.digest == digest)
        out = self._bests(*clauses)
        out.sort(key=lambda b: b.updated_at, reverse=True)
        out.sort(key=lambda b: (b.graph_class.nodes, b.graph_class.mean_degree))
        return out

    def all_best(self, device_name: str | None = None) -> list[BestRecord]:
        """All best configurations (of one device name when given), for reports; by device,
        class (size, degree), algorithm, variant."""
        out = self._bests(*([] if device_name is None else [Device.name == device_name]))
        out.sort(
            key=lambda b: (
                b.device.name,
                b.device.uuid,
                b.graph_class.nodes,
                b.graph_class.mean_degree,
                b.algorithm,
                b.variant,
                b.kernel_version.digest,
                b.kernel_version.compile_options,
            )
        )
        return out

    def devices(self) -> list[DeviceRecord]:
        """Every device the store has seen, by name then UUID."""

        def work(session: Session) -> list[DeviceRecord]:
            stmt = select(Device).order_by(Device.name, Device.uuid)
            return [device_record(r) for r in session.scalars(stmt)]

        return self.transact(work, retries=0)
