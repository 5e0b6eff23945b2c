"""Export, import and seeding of the tuning database (the document format is
:mod:`tuning_db.export`).

An import writes the project's rows (devices, kernel versions, runs, best configurations) in one
transaction, then the runs' trials into their Optuna studies. Every step is idempotent: runs
are matched by key and start time, trials by (run, kernel, configuration), best configurations
by key (the newer ``updated_at`` wins), so an interrupted import is completed by running it
again.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sssp.errors import StoreError

from . import export, rows
from .mapping import device_record, fill_best, kernel_version_record, run_record
from .models import BestConfig, Device, KernelVersion, TuningRun
from .records import (
    KERNEL_KINDS,
    BestRecord,
    RunRecord,
    RunStatus,
    TrialRecord,
    device_name_matches,
    is_engine2,
    is_engine2_run,
)

if TYPE_CHECKING:
    from .store import Store

logger = logging.getLogger(__name__)

_OPEN = (RunStatus.RUNNING.value, RunStatus.INTERRUPTED.value)


def shipped_kernel_versions() -> set[tuple[str, str]]:
    """(digest, compile options) of every kernel version the shipped ``tuning_db/data/*.json``
    name, read without validating the documents (:func:`shipped_documents` does: the larger
    part of a second on this project's host, where this takes about 20 ms)."""
    found: set[tuple[str, str]] = set()
    for _, text in export.shipped_exports():
        try:
            doc = json.loads(text)
            found.update(
                (str(kv["digest"]), str(kv.get("compile_options", "")))
                for kv in doc.get("kernel_versions", [])
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            continue  # a broken shipped file is reported where it is imported
    return found


def take_newer_shipped(store: Store) -> int:
    """Import the shipped documents into ``store`` (runs and best configurations; of two records
    of a class the newer wins, as ``tune import --shipped``) when they name a kernel version the
    database has never seen: a database seeded by an older version of the package holds no
    record of the kernels shipped since, and a tuned solve would fall back to the default
    configuration. Returns the records written (0 where nothing was missing)."""
    shipped = shipped_kernel_versions()
    if not shipped:
        return 0
    known = store.transact(
        lambda session: {
            (d, o)
            for d, o in session.execute(select(KernelVersion.digest, KernelVersion.compile_options))
        }
    )
    if shipped <= known:
        return 0
    return store.seed_from_package()


def shipped_documents() -> list[tuple[str, export.ExportDoc]]:
    """Every shipped ``tuning_db/data/*.json``, parsed (all of them before anything is written)."""
    return [
        (name, export.parse_text(text, f"shipped data {name}"))
        for name, text in export.shipped_exports()
    ]


def export_json(
    store: Store,
    target: Path,
    *,
    device_name: str | None = None,
    kernel: str | None = None,
    trials: bool = True,
    newest: bool = False,
) -> None:
    """Write the database as a human-readable JSON document (``indent=1``, sorted keys, no
    export timestamp so re-exports diff cleanly).

    The whole database by default; or a selection, as a shipped ``tuning_db/data/*.json``
    holds one GPU model's results of one kind: ``device_name`` keeps the GPUs of that full or
    short name (:func:`~tuning_db.records.device_name_matches`), ``kernel`` the runs and best
    configurations of engine 2 (``"engine"``: :func:`~tuning_db.records.is_engine2_run`,
    :func:`~tuning_db.records.is_engine2`) or of the paper's three kernels (``"paper"``),
    ``trials=False`` drops the runs' trials, ``newest=True`` keeps of the best configurations
    of a class on cards of one model only the newest (the one a lookup on another card of the
    model takes: :func:`tuning_db.provider.pick`). Devices and kernel versions no kept record
    names are left out.

    Raises
    ------
    StoreError
        ``device_name`` names no GPU of the database, ``kernel`` is not one of
        :data:`~tuning_db.records.KERNEL_KINDS`, or the file cannot be written.
    """

    def work(session: Session) -> tuple[list, list, list[RunRecord], list]:
        from .mapping import best_record

        devices = [device_record(d) for d in session.scalars(select(Device).order_by(Device.uuid))]
        kvs = [
            kernel_version_record(k)
            for k in session.scalars(
                select(KernelVersion).order_by(KernelVersion.digest, KernelVersion.compile_options)
            )
        ]
        runs = [
            run_record(r)
            for r in session.scalars(select(TuningRun).order_by(TuningRun.id)).unique()
        ]
        bests = [
            best_record(b)
            for b in session.scalars(select(BestConfig).order_by(BestConfig.id)).unique()
        ]
        return devices, kvs, runs, bests

    devices, kvs, runs, bests = store.transact(work, retries=0)
    if device_name is not None:
        called = {d.uuid: d.name for d in devices if device_name_matches(d.name, device_name)}
        gpus = set(called)
        if len(set(called.values())) > 1:  # one shipped file holds one model's records
            models = ", ".join(sorted(set(called.values())))
            raise StoreError(
                f"{device_name!r} names several GPU models in the tuning database ({models}): "
                "give the full name"
            )
        if not gpus:
            known = ", ".join(sorted({d.name for d in devices})) or "none"
            raise StoreError(
                f"no GPU called {device_name!r} in the tuning database: known GPUs are {known}"
            )
        runs = [r for r in runs if r.key.device.uuid in gpus]
        bests = [b for b in bests if b.device.uuid in gpus]
    if kernel is not None:
        if kernel not in KERNEL_KINDS:
            raise StoreError(f"kernel must be one of {', '.join(KERNEL_KINDS)}, got {kernel!r}")
        engine = kernel == "engine"
        runs = [r for r in runs if is_engine2_run(r) == engine]
        bests = [b for b in bests if is_engine2(b) == engine]
    if newest:
        latest: dict[tuple, BestRecord] = {}
        for b in bests:
            model = (b.device.name, b.device.compute_capability, b.kernel_version)
            slot = (*model, b.graph_class, b.algorithm, b.variant)
            if slot not in latest or b.updated_at > latest[slot].updated_at:
                latest[slot] = b
        kept = {id(b) for b in latest.values()}
        bests = [b for b in bests if id(b) in kept]
    if device_name is not None or kernel is not None or newest:
        named = {r.key.device.uuid for r in runs} | {b.device.uuid for b in bests}
        devices = [d for d in devices if d.uuid in named]
        used = {r.key.kernel_version for r in runs} | {b.kernel_version for b in bests}
        kvs = [k for k in kvs if k in used]
    run_docs = []
    for run in runs:
        run_trials = (
            [
                export.trial_doc(t, done)
                for k in store.run_kernels(run)
                for t, done in store.study_trials(run, k)
            ]
            if trials
            else []
        )
        run_docs.append(export.run_doc(run, run_trials))
    doc = export.document(devices, kvs, run_docs, bests)
    try:
        target.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    except OSError as err:
        raise StoreError(f"cannot write tuning export {target}: {err}") from err
    logger.info("exported %d runs and %d best configs to %s", len(runs), len(bests), target)


def import_json(store: Store, source: Path, *, trials: bool = True) -> int:
    """Import a document written by :func:`export_json`; ``trials=False`` skips the trials.

    Returns
    -------
    int
        Number of runs, trials and best configurations written (0 when all were present).

    Raises
    ------
    StoreError
        The file cannot be read or is malformed; nothing is written then.
    """
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise StoreError(f"cannot read tuning export {source}: {err}") from err
    n = import_document(store, export.parse_text(text, str(source)), trials=trials)
    logger.info("imported %d records from %s into %s", n, source, store.url)
    return n


def import_document(store: Store, doc: export.ExportDoc, *, trials: bool) -> int:
    written, pending = store.transact(lambda s: import_rows(store, s, doc), retries=0)
    if trials:
        for run, run_trials in pending:
            written += store.add_trials(run, run_trials)
    return written


def import_rows(store: Store, session: Session, doc: export.ExportDoc) -> tuple[int, list[Any]]:
    written = 0
    devices = {d.uuid: rows.device_row(session, d, update=False) for d in doc.devices}
    for kv in doc.kernel_versions:
        rows.kernel_version_row(session, kv)
    run_rows: dict[int, TuningRun] = {}
    pending: list[tuple[TuningRun, list[tuple[TrialRecord, dt.datetime | None]]]] = []
    for run_doc in doc.runs:
        rec = run_doc.run
        parents = (
            devices[rec.key.device.uuid],
            rows.kernel_version_row(session, rec.key.kernel_version),
            rows.class_row(session, rec.key.graph_class),
        )
        stmt = select(TuningRun).where(
            *rows.run_key_clauses(rec.key, *parents), TuningRun.started_at == rec.started_at
        )
        row = session.scalars(stmt).first()
        if row is None:
            row = rows.new_run(rec.key, parents, budget=rec.budget, seed=rec.seed, owner="")
            row.status = rec.status.value
            row.started_at = rec.started_at
            row.finished_at = rec.finished_at
            row.wall_seconds = rec.wall_seconds
            row.heartbeat_at = None
            session.add(row)
            session.flush()
            written += 1
        elif row.status in _OPEN and rec.status.value not in _OPEN:
            # The file saw this run finish after our copy was taken.
            row.status = rec.status.value
            row.finished_at = rec.finished_at
            row.wall_seconds = rec.wall_seconds
            written += 1
        run_rows[rec.id] = row
        pending.append((row, [(t.trial, t.created_at) for t in run_doc.trials]))
    for best in doc.bests:
        dev = devices[best.device.uuid]
        kv_row = rows.kernel_version_row(session, best.kernel_version)
        gc = rows.class_row(session, best.graph_class)
        run_id = None if best.run_id is None else run_rows[best.run_id].id
        best_row = rows.best_row(session, dev, kv_row, gc, best.algorithm, best.variant)
        if best_row is None:
            best_row = rows.new_best(dev, kv_row, gc, best.algorithm, best.variant)
            session.add(best_row)
        elif best_row.updated_at >= best.updated_at:
            continue  # ours is as new or newer
        fill_best(best_row, best, run_id)
        written += 1
    session.flush()
    return written, [(run_record(r), t) for r, t in pending if t]
