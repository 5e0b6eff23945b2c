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
    records: list[BestRecord],
    graph_class: GraphClass,
    device_uuid: str | None = None,
    device_name: str | None = None,
) -> tuple[BestRecord | None, ConfigSource]:
    """The record for ``graph_class`` (exact) or the nearest one.

    A record of the graph's diameter class comes first, then one of the device's model
    (``device_name``; None: every record counts as the model's), then the nearest class
    (:meth:`GraphClass.distance`). So a record of another board (:func:`sibling`) answers only
    where the model has no record of the graph's diameter class. On an H100 whose records were
    all of road networks and meshes, random graphs of degree 200-1 000 ran 3.9-13x slower on
    them than on the H200's records of their classes, and their solvers took up to 22 s to
    build and solve instead of 0.1 (``benchmarks/results/h200/sibling_rule_ab_h100_run201_*``).
    Of records of the same class and model (its GPUs each keep their own) the device's own
    (``device_uuid``) wins, then the newest: a class searched again on another card replaces the
    older search."""
    if not records:
        return None, ConfigSource.DEFAULT

    def rank(r: BestRecord) -> tuple[bool, bool, float, int, float]:
        return (
            r.graph_class.diameter != graph_class.diameter,
            device_name is not None and r.device.name != device_name,
            r.graph_class.distance(graph_class),
            0 if r.device.uuid == device_uuid else 1,
            -r.updated_at.timestamp(),
        )

    best = min(records, key=rank)
    exact = best.graph_class == graph_class and device_name in (None, best.device.name)
    return best, ConfigSource.TUNED_EXACT if exact else ConfigSource.TUNED_NEAREST


def sibling(record: BestRecord, query: TunedQuery) -> bool:
    """Whether ``record`` is of another GPU model built on the same chip as the query's, given
    that its compute capability is the query's (the caller checks it): the same SM count (an
    H100 SXM and an H200: one GH100 die, the same shared memory and L2; the H200 has more and
    faster memory). Unknown SM count: no sibling."""
    return (
        record.device.name != query.device_name
        and query.sm_count is not None
        and record.device.sm_count == query.sm_count
    )


class StoreProvider:
    """Tuned configurations from the tuning database: the records of the query's kernel digest,
    algorithm, variant and compute capability, of the device's model (its name) or of a board of
    the same chip (:func:`sibling`); of these :func:`pick`'s: the graph's own class, else the
    nearest stored one, the model's before a sibling's."""

    def lookup(self, query: TunedQuery) -> TunedChoice | None:
        records = [
            r
            # [] with a warning when the database is unusable
            for r in tuned_records(query.db)
            if r.kernel_version.digest == query.kernel_digest
            and r.algorithm == query.algorithm
            and r.variant == query.variant
            and r.device.compute_capability == query.compute_capability
            and (r.device.name == query.device_name or sibling(r, query))
        ]
        record, source = pick(records, query.graph_class, query.device_uuid, query.device_name)
        if record is None:
            return None
        detail = f"class {query.graph_class} -> stored class {record.graph_class}"
        if record.device.name != query.device_name:
            detail += (
                f" of {record.device.name} (the same compute capability and SM count; no "
                f"{query.device_name} record is of the {query.graph_class.diameter} class)"
            )
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
