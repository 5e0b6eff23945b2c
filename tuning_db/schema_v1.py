"""Reading a database of schema 1 (trials in the project's own ``sssp_trials`` table), so that
``tune upgrade`` can move it to Optuna studies in place.

The old tables are read into an export document of format version 1 (the shape that release's
``tune export`` wrote), validated like any import, then dropped; the store creates the current
tables and imports the document, its trials included.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

from .export import EXPORT_FORMAT

SCHEMA_V1_TABLES = (
    "sssp_best_configs",
    "sssp_trials",
    "sssp_tuning_runs",
    "sssp_graph_classes",
    "sssp_kernel_versions",
    "sssp_devices",
    "sssp_schema",
)


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else value.isoformat()


def _rows(conn: Any, sql: str) -> list[dict[str, Any]]:
    return [dict(r._mapping) for r in conn.execute(text(sql))]


def read_schema_1(conn: Any) -> dict[str, Any]:
    """The whole schema-1 database as an export document (format version 1)."""
    devices = {r["id"]: r for r in _rows(conn, "SELECT * FROM sssp_devices")}
    kvs = {r["id"]: r for r in _rows(conn, "SELECT * FROM sssp_kernel_versions")}
    classes = {r["id"]: r for r in _rows(conn, "SELECT * FROM sssp_graph_classes")}
    trials: dict[int, list[dict[str, Any]]] = {}
    for t in _rows(conn, "SELECT * FROM sssp_trials ORDER BY run_id, number, id"):
        trials.setdefault(t["run_id"], []).append(
            {
                "number": t["number"],
                "kernel": t["kernel"],
                "config": t["config_label"],
                "status": t["status"],
                "times_ms": json.loads(t["times_ms"]),
                "applied_l1": t["applied_l1"],
                "message": t["message"],
                "created_at": _iso(t["created_at"]),
            }
        )

    def kv(i: int) -> dict[str, str]:
        return {"digest": kvs[i]["digest"], "compile_options": kvs[i]["compile_options"]}

    def gc(i: int) -> dict[str, str]:
        return {"size": classes[i]["size"], "degree": classes[i]["degree"]}

    runs = [
        {
            "id": r["id"],
            "device": devices[r["device_id"]]["uuid"],
            "kernel_version": kv(r["kernel_version_id"]),
            "graph_class": gc(r["graph_class_id"]),
            "algorithm": r["algorithm"],
            "variant": r["variant"],
            "kernel": r["kernel"],
            "strategy": r["strategy"],
            "instance": r["instance"],
            "replay": bool(r["replay"]),
            "status": r["status"],
            "budget": r["budget"],
            "seed": r["seed"],
            "started_at": _iso(r["started_at"]),
            "finished_at": _iso(r["finished_at"]),
            "wall_seconds": r["wall_seconds"],
            "trials": trials.get(r["id"], []),
        }
        for r in _rows(conn, "SELECT * FROM sssp_tuning_runs ORDER BY id")
    ]
    bests = [
        {
            "device": devices[b["device_id"]]["uuid"],
            "kernel_version": kv(b["kernel_version_id"]),
            "graph_class": gc(b["graph_class_id"]),
            "algorithm": b["algorithm"],
            "variant": b["variant"],
            "config": {k: b[f"{k}_label"] for k in ("relax", "min", "update")},
            "tuned_config": {k: b[f"tuned_{k}_label"] for k in ("relax", "min", "update")},
            "tuned_median_ms": b["tuned_median_ms"],
            "default_median_ms": b["default_median_ms"],
            "speedup": b["speedup"],
            "n_sources": b["n_sources"],
            "kept_default": bool(b["kept_default"]),
            "replay": bool(b["replay"]),
            "run": b["run_id"],
            "updated_at": _iso(b["updated_at"]),
        }
        for b in _rows(conn, "SELECT * FROM sssp_best_configs ORDER BY id")
    ]
    keys = ("name", "uuid", "compute_capability", "sm_count", "driver_version", "cuda_version")
    return {
        "format": EXPORT_FORMAT,
        "schema_version": 1,
        "devices": [{k: d[k] for k in keys} for d in devices.values()],
        "kernel_versions": [kv(i) for i in kvs],
        "runs": runs,
        "best": bests,
    }


def drop_schema_1(conn: Any) -> None:
    for table in SCHEMA_V1_TABLES:
        conn.execute(text(f"DROP TABLE {table}"))
