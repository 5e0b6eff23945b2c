"""The export document: the whole tuning database as one human-readable JSON file.

Pure functions (no database access): :func:`document` builds the document from records,
:func:`parse_text` validates one completely before anything is written, naming the offending
place. Format version 2 adds the best configurations' ``options``, version 3 their
``chosen_algorithm`` and ``delta_scale`` (what runs; read from the options in older documents);
version 1 documents (the shipped ``tuning_db/data/h200.json``) are still read.
"""

from __future__ import annotations

import datetime as dt
import importlib.resources
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, overload

from sssp.classes import GraphClass
from sssp.config import KernelConfig
from sssp.errors import StoreError

from .mapping import configs as _configs
from .records import (
    BestRecord,
    DeviceRecord,
    KernelVersionRecord,
    RunKey,
    RunRecord,
    RunStatus,
    TrialRecord,
    TrialStatus,
)

EXPORT_FORMAT = "sssp-tune tuning database"
EXPORT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)


class Malformed(ValueError):
    """An export document that does not have the expected shape."""


@dataclass(frozen=True)
class TrialDoc:
    trial: TrialRecord
    created_at: dt.datetime | None


@dataclass(frozen=True)
class RunDoc:
    run: RunRecord  # ``id`` is the exporting database's id, used only to link best configs
    trials: tuple[TrialDoc, ...]


@dataclass(frozen=True)
class ExportDoc:
    devices: tuple[DeviceRecord, ...]
    kernel_versions: tuple[KernelVersionRecord, ...]
    runs: tuple[RunDoc, ...]
    bests: tuple[BestRecord, ...]  # ``run_id`` refers to a ``RunDoc.run.id`` of this document


def _field(
    obj: Any, key: str, kind: type | tuple[type, ...], where: str, *, null: bool = False
) -> Any:
    if not isinstance(obj, dict):
        raise Malformed(f"{where} must be an object, got {type(obj).__name__}")
    if key not in obj:
        raise Malformed(f"{where} lacks {key!r}")
    value = obj[key]
    if value is None and null:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) and bool not in kinds:
        raise Malformed(f"{where}.{key} must be {kinds[0].__name__}, got {value!r}")
    if not isinstance(value, kinds):
        raise Malformed(f"{where}.{key} must be {kinds[0].__name__}, got {value!r}")
    return value


@contextmanager
def _at(where: str) -> Iterator[None]:
    """Prefix errors of the records' own validation with where in the document they are."""
    try:
        yield
    except Malformed:
        raise
    except (ValueError, TypeError) as err:
        raise Malformed(f"{where}: {err}") from err


@overload
def _time(text: str) -> dt.datetime: ...
@overload
def _time(text: None) -> None: ...
def _time(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    value = dt.datetime.fromisoformat(text)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat()


def _device_doc(d: DeviceRecord) -> dict[str, Any]:
    return {
        "name": d.name,
        "uuid": d.uuid,
        "compute_capability": d.compute_capability,
        "sm_count": d.sm_count,
        "driver_version": d.driver_version,
        "cuda_version": d.cuda_version,
    }


def _kv_doc(k: KernelVersionRecord) -> dict[str, Any]:
    return {"digest": k.digest, "compile_options": k.compile_options}


def _class_doc(g: GraphClass) -> dict[str, Any]:
    # "diameter" only where it is not the default: documents of low-diameter classes read the
    # same as before the third key existed.
    doc = {"size": g.size, "degree": g.degree}
    return doc if g.diameter == "lowdiam" else {**doc, "diameter": g.diameter}


def _parse_kv(obj: Any, where: str) -> KernelVersionRecord:
    return KernelVersionRecord(
        digest=_field(obj, "digest", str, where),
        compile_options=_field(obj, "compile_options", str, where),
    )


def _parse_class(obj: Any, where: str) -> GraphClass:
    diameter = (
        _field(obj, "diameter", str, where)
        if isinstance(obj, dict) and "diameter" in obj
        else "lowdiam"
    )
    return GraphClass(_field(obj, "size", str, where), _field(obj, "degree", str, where), diameter)


def _labels(obj: Any, where: str) -> tuple[str, str, str]:
    return (
        _field(obj, "relax", str, where),
        _field(obj, "min", str, where),
        _field(obj, "update", str, where),
    )


def _parse_document(doc: Any) -> ExportDoc:
    """Validate a whole export document before anything is written.

    Raises
    ------
    Malformed
        Naming the offending place, e.g. ``runs[1].trials[0]: block size 999 is invalid``.
    """
    fmt = _field(doc, "format", str, "document")
    if fmt != EXPORT_FORMAT:
        raise Malformed(f"format is {fmt!r}, expected {EXPORT_FORMAT!r}")
    version = _field(doc, "schema_version", int, "document")
    if version not in READABLE_VERSIONS:
        raise Malformed(
            f"it was exported by format version {version}; this code reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    devices: dict[str, DeviceRecord] = {}
    for i, d in enumerate(_field(doc, "devices", list, "document")):
        with _at(f"devices[{i}]"):
            rec = _parse_device(d, f"devices[{i}]")
        devices[rec.uuid] = rec
    kvs = []
    for i, k in enumerate(_field(doc, "kernel_versions", list, "document")):
        with _at(f"kernel_versions[{i}]"):
            kvs.append(_parse_kv(k, f"kernel_versions[{i}]"))
    runs: dict[int, RunDoc] = {}
    for i, r in enumerate(_field(doc, "runs", list, "document")):
        with _at(f"runs[{i}]"):
            run_doc = _parse_run(r, f"runs[{i}]", devices)
        if run_doc.run.id in runs:
            raise Malformed(f"runs[{i}].id {run_doc.run.id} appears twice")
        runs[run_doc.run.id] = run_doc
    bests = []
    for i, b in enumerate(_field(doc, "best", list, "document")):
        with _at(f"best[{i}]"):
            best = _parse_best(b, f"best[{i}]", devices)
        if best.run_id is not None and best.run_id not in runs:
            raise Malformed(f"best[{i}].run {best.run_id} is not among the document's runs")
        bests.append(best)
    return ExportDoc(tuple(devices.values()), tuple(kvs), tuple(runs.values()), tuple(bests))


def _parse_device(d: Any, where: str) -> DeviceRecord:
    return DeviceRecord(
        name=_field(d, "name", str, where),
        uuid=_field(d, "uuid", str, where),
        compute_capability=_field(d, "compute_capability", str, where),
        sm_count=_field(d, "sm_count", int, where),
        driver_version=_field(d, "driver_version", str, where),
        cuda_version=_field(d, "cuda_version", str, where),
    )


def _device_ref(obj: Any, where: str, devices: dict[str, DeviceRecord]) -> DeviceRecord:
    uuid = _field(obj, "device", str, where)
    if uuid not in devices:
        raise Malformed(f"{where}.device {uuid!r} is not among the document's devices")
    return devices[uuid]


def _parse_run(r: Any, where: str, devices: dict[str, DeviceRecord]) -> RunDoc:
    key = RunKey(
        device=_device_ref(r, where, devices),
        kernel_version=_parse_kv(
            _field(r, "kernel_version", dict, where), f"{where}.kernel_version"
        ),
        graph_class=_parse_class(_field(r, "graph_class", dict, where), f"{where}.graph_class"),
        algorithm=_field(r, "algorithm", str, where),
        variant=_field(r, "variant", str, where),
        kernel=_field(r, "kernel", str, where),
        strategy=_field(r, "strategy", str, where),
        instance=_field(r, "instance", str, where),
        replay=_field(r, "replay", bool, where),
    )
    run = RunRecord(
        id=_field(r, "id", int, where),
        key=key,
        status=RunStatus(_field(r, "status", str, where)),
        budget=_field(r, "budget", int, where, null=True),
        seed=_field(r, "seed", int, where),
        started_at=_time(_field(r, "started_at", str, where)),
        finished_at=_time(_field(r, "finished_at", str, where, null=True)),
        wall_seconds=_field(r, "wall_seconds", float, where, null=True),
    )
    trials = []
    for j, t in enumerate(_field(r, "trials", list, where)):
        tw = f"{where}.trials[{j}]"
        with _at(tw):
            trials.append(_parse_trial(t, tw))
    return RunDoc(run, tuple(trials))


def _parse_trial(t: Any, where: str) -> TrialDoc:
    times = _field(t, "times_ms", list, where)
    ok = all(
        isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
        for x in times
    )
    if not ok:
        raise Malformed(f"{where}.times_ms must be a list of finite non-negative numbers")
    trial = TrialRecord(
        kernel=_field(t, "kernel", str, where),
        config=KernelConfig.parse(_field(t, "config", str, where)),
        status=TrialStatus(_field(t, "status", str, where)),
        times_ms=tuple(float(x) for x in times),
        applied_l1=_field(t, "applied_l1", str, where),
        message=_field(t, "message", str, where),
        number=_field(t, "number", int, where),
        measurements=_field(t, "kernel_tuner", dict, where) if "kernel_tuner" in t else {},
    )
    return TrialDoc(trial, _time(_field(t, "created_at", str, where, null=True)))


def _parse_best(b: Any, where: str, devices: dict[str, DeviceRecord]) -> BestRecord:
    options = _field(b, "options", dict, where) if "options" in b else {}
    config, tuned = _configs(
        _labels(_field(b, "config", dict, where), f"{where}.config"),
        _labels(_field(b, "tuned_config", dict, where), f"{where}.tuned_config"),
        options,
    )
    return BestRecord(
        device=_device_ref(b, where, devices),
        kernel_version=_parse_kv(
            _field(b, "kernel_version", dict, where), f"{where}.kernel_version"
        ),
        graph_class=_parse_class(_field(b, "graph_class", dict, where), f"{where}.graph_class"),
        algorithm=_field(b, "algorithm", str, where),
        variant=_field(b, "variant", str, where),
        config=config,
        tuned_config=tuned,
        tuned_median_ms=_field(b, "tuned_median_ms", float, where),
        default_median_ms=_field(b, "default_median_ms", float, where),
        speedup=_field(b, "speedup", float, where),
        n_sources=_field(b, "n_sources", int, where),
        kept_default=_field(b, "kept_default", bool, where),
        replay=_field(b, "replay", bool, where),
        run_id=_field(b, "run", int, where, null=True),
        updated_at=_time(_field(b, "updated_at", str, where)),
        options=options,
        # Versions 1 and 2 have neither: BestRecord reads them from the options.
        chosen_algorithm=_field(b, "chosen_algorithm", str, where)
        if "chosen_algorithm" in b
        else "",
        delta_scale=_field(b, "delta_scale", float, where, null=True)
        if "delta_scale" in b
        else None,
    )


def shipped_exports() -> list[tuple[str, str]]:
    """``(name, text)`` of every ``tuning_db/data/*.json`` shipped with the package, by name."""
    root = importlib.resources.files("tuning_db") / "data"
    if not root.is_dir():
        return []
    return [
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in sorted(root.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".json") and entry.is_file()
    ]


def parse_text(text: str, origin: str) -> ExportDoc:
    """Parse and validate a whole export document.

    Raises
    ------
    StoreError
        Naming ``origin`` and the offending place; nothing has been written.
    """
    try:
        return _parse_document(json.loads(text))
    except (ValueError, TypeError, KeyError) as err:
        # json.JSONDecodeError, Malformed, ConfigError and UnknownClassError are ValueErrors.
        raise StoreError(f"{origin} is not a valid tuning-database export: {err}") from err


def trial_doc(t: TrialRecord, created_at: dt.datetime | None) -> dict[str, Any]:
    return {
        "number": t.number,
        "kernel": t.kernel,
        "config": t.config.label,
        "status": t.status.value,
        "times_ms": list(t.times_ms),
        # Derived, for readers of the file; recomputed on import.
        "median_ms": t.median_ms,
        "applied_l1": t.applied_l1,
        "message": t.message,
        "created_at": _iso(created_at),
        "kernel_tuner": dict(t.measurements),
    }


def run_doc(rec: RunRecord, trials: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": rec.id,
        "device": rec.key.device.uuid,
        "kernel_version": _kv_doc(rec.key.kernel_version),
        "graph_class": _class_doc(rec.key.graph_class),
        "algorithm": rec.key.algorithm,
        "variant": rec.key.variant,
        "kernel": rec.key.kernel,
        "strategy": rec.key.strategy,
        "instance": rec.key.instance,
        "replay": rec.key.replay,
        "status": rec.status.value,
        "budget": rec.budget,
        "seed": rec.seed,
        "started_at": _iso(rec.started_at),
        "finished_at": _iso(rec.finished_at),
        "wall_seconds": rec.wall_seconds,
        "trials": trials,
    }


def best_doc(b: BestRecord) -> dict[str, Any]:
    return {
        "device": b.device.uuid,
        "kernel_version": _kv_doc(b.kernel_version),
        "graph_class": _class_doc(b.graph_class),
        "algorithm": b.algorithm,
        "variant": b.variant,
        "config": b.config.as_dict(),
        "tuned_config": b.tuned_config.as_dict(),
        "tuned_median_ms": b.tuned_median_ms,
        "default_median_ms": b.default_median_ms,
        "speedup": b.speedup,
        "n_sources": b.n_sources,
        "kept_default": b.kept_default,
        "replay": b.replay,
        "run": b.run_id,
        "updated_at": _iso(b.updated_at),
        "options": dict(b.options),
        "chosen_algorithm": b.chosen_algorithm,
        "delta_scale": b.delta_scale,
    }


def document(
    devices: list[DeviceRecord],
    kernel_versions: list[KernelVersionRecord],
    runs: list[dict[str, Any]],
    bests: list[BestRecord],
) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "schema_version": EXPORT_VERSION,
        "devices": [_device_doc(d) for d in devices],
        "kernel_versions": [_kv_doc(k) for k in kernel_versions],
        "runs": runs,
        "best": [best_doc(b) for b in bests],
    }
