"""The tuning database as ``sssp``'s configuration provider (:class:`sssp.tuned.ConfigProvider`).

Declared in ``pyproject.toml`` under the entry-point group ``sssp.config_providers``, so that
``solve(tuned=True)`` finds it without ``sssp`` importing this package.
"""

from __future__ import annotations

from collections.abc import Hashable

from sssp.classes import GraphClass
from sssp.config import ConfigSource
from sssp.tuned import TunedChoice, TunedQuery

from .lookup import problem, state, tuned_records
from .records import BestRecord

__all__ = ["StoreProvider", "pick"]


def pick(
    records: list[BestRecord], graph_class: GraphClass, device_uuid: str | None = None
) -> tuple[BestRecord | None, ConfigSource]:
    """The record for ``graph_class`` (exact) or the nearest one. Of records of the same class
    (GPUs of one model each keep their own), the device's own (``device_uuid``) wins, then the
    newest: a class searched again on another card of the model replaces the older search."""
    if not records:
        return None, ConfigSource.DEFAULT

    def rank(r: BestRecord) -> tuple[float, int, float]:
        return (
            r.graph_class.distance(graph_class),
            0 if r.device.uuid == device_uuid else 1,
            -r.updated_at.timestamp(),
        )

    best = min(records, key=rank)
    exact = best.graph_class == graph_class
    return best, ConfigSource.TUNED_EXACT if exact else ConfigSource.TUNED_NEAREST


class StoreProvider:
    """Tuned configurations from the tuning database: the records of the device's model (its
    name and compute capability), of the query's kernel digest, algorithm and variant; the
    graph's own class, else the nearest stored one."""

    def lookup(self, query: TunedQuery) -> TunedChoice | None:
        records = [
            r
            # [] with a warning when the database is unusable
            for r in tuned_records(query.db, query.device_name)
            if r.kernel_version.digest == query.kernel_digest
            and r.algorithm == query.algorithm
            and r.variant == query.variant
            and r.device.compute_capability == query.compute_capability
        ]
        record, source = pick(records, query.graph_class, query.device_uuid)
        if record is None:
            return None
        detail = f"class {query.graph_class} -> stored class {record.graph_class}"
        if record.kept_default:
            detail += " (tuning did not beat the default there; the default is stored)"
        if record.replay:
            detail += " [record from a replay of recorded measurements]"
        if record.measured_on:
            detail += (
                f" [measured on kernels {record.measured_on}, carried to these kernels "
                "without re-measuring]"
            )
        return TunedChoice(
            record.config,
            source,
            record.chosen_algorithm,
            record.delta_scale if record.chosen_algorithm == "near-far" else None,
            detail,
            record.graph_class,
            record.fallback,
        )

    def state(self, db: str | None) -> Hashable | None:
        return state(db)

    def unavailable(self, db: str | None) -> str | None:
        return problem(db)

    def __repr__(self) -> str:
        return "StoreProvider()"
