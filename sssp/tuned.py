"""Which launch configuration ``solve(..., tuned=True)`` runs.

Lookup order, for the device's model (records of the same GPU UUID first, then any board with the
same name and compute capability), engine 2's exact kernel sources (digest), algorithm and
variant (records of ``tune engine``; ``tune run``'s per-kernel records of the paper's kernels
serve Table 1):

1. the graph's own class (``tuned-exact``);
2. the nearest stored class in (log2 size, log10 degree) distance (``tuned-nearest``);
3. the default configuration, 256 threads and L1 normal on the persistent loop (``default``).

``algorithm="auto"`` (``solve(tuned=True)`` without an algorithm) looks up the records of
``tune engine --algorithm auto``, which also store the algorithm the search chose for the class
(Crauser OUT, IN+OUT or near-far, with near-far's Δ as a multiple of its default rule):
:func:`resolve_choice`. Without such a record it runs Crauser OUT.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from .config import ConfigSource, LaunchConfig
from .graph import Graph

if TYPE_CHECKING:
    from tuning_db.records import BestRecord

    from .gpu.device import DeviceInfo

log = logging.getLogger(__name__)


def pick(
    records: list[BestRecord], graph_class, device_uuid: str | None = None
) -> tuple[BestRecord | None, ConfigSource]:
    """The record for ``graph_class`` (exact) or the nearest one; same-UUID records win ties."""
    if not records:
        return None, ConfigSource.DEFAULT

    def rank(r: BestRecord) -> tuple[float, int]:
        return (r.graph_class.distance(graph_class), 0 if r.device.uuid == device_uuid else 1)

    best = min(records, key=rank)
    exact = best.graph_class == graph_class
    return best, ConfigSource.TUNED_EXACT if exact else ConfigSource.TUNED_NEAREST


def resolve_choice(
    graph: Graph, device: DeviceInfo, *, variant: str = "successors", db: str | None = None
) -> tuple[str, float | None, LaunchConfig, ConfigSource, str]:
    """(algorithm, near-far's Δ or None, configuration, where it came from, detail) for
    ``graph`` on ``device`` from the ``"auto"`` records; Crauser OUT with the default
    configuration when there is none."""
    record, config, source, detail = _lookup(graph, device, "auto", variant, db)
    algorithm = str(record.options.get("algorithm", "crauser")) if record is not None else "crauser"
    delta = None
    if algorithm == "near-far":
        from .cpu.nearfar import scaled_delta

        scale = float(record.options.get("delta_scale", 1))
        if wide_beyond(graph, record, source):
            config, scale = replace(config, loop="wide"), 1.0
            detail += WIDE_DETAIL
        delta = scaled_delta(graph, scale)
        detail += f"; near-far, delta {delta} ({scale:g} x the default rule)"
    elif record is not None:
        detail += f"; {algorithm}"
    return algorithm, delta, config, source, detail


WIDE_MIN_NODES = 2**20
"""Low-diameter graphs of at least this many nodes run near-far on the wide loop when no stored
class is within a factor of :data:`WIDE_SIZE_GAP` of their size (:func:`wide_beyond`)."""
WIDE_SIZE_GAP = 4
WIDE_DETAIL = "; the wide loop (a low-diameter graph of 1M+ nodes beyond the stored classes' sizes)"


def wide_beyond(graph: Graph, record: BestRecord | None, source: ConfigSource) -> bool:
    """Whether a near-far solve of ``graph`` takes the wide loop (:mod:`sssp.gpu.wide`) instead of
    a stored class's loop: the graph has low diameter and at least :data:`WIDE_MIN_NODES` nodes,
    and the record is not its own class's but one :data:`WIDE_SIZE_GAP` or more times smaller
    (or there is none). Measured on the H200 (``benchmarks/results/h200/wide_probe_run62.csv``,
    ``wide_variants_run63.csv``): GAP's scale-22 graphs took 11-23 ms on the wide loop at Δ = the
    default rule against 38-71 ms on the persistent loop of the nearest stored class (98k/deg20),
    and Δ x0.5 or x16-256 was no faster; a tuned class keeps its own loop."""
    if source is ConfigSource.TUNED_EXACT or graph.n < WIDE_MIN_NODES:
        return False
    if record is not None:
        from .classes import parse_size

        if parse_size(record.graph_class.size) * WIDE_SIZE_GAP > graph.n:
            return False
    return graph.graph_class().diameter == "lowdiam"


def resolve_config(
    graph: Graph,
    device: DeviceInfo,
    *,
    algorithm: str = "crauser",
    variant: str = "successors",
    db: str | None = None,
) -> tuple[LaunchConfig, ConfigSource, str]:
    """(configuration, where it came from, a human-readable detail) for ``graph`` on ``device``."""
    record, config, source, detail = _lookup(graph, device, algorithm, variant, db)
    if algorithm == "near-far" and wide_beyond(graph, record, source):
        config = replace(config, loop="wide")
        detail += WIDE_DETAIL
    return config, source, detail


def _lookup(
    graph: Graph, device: DeviceInfo, algorithm: str, variant: str, db: str | None
) -> tuple[BestRecord | None, LaunchConfig, ConfigSource, str]:
    import kernels
    from tuning_db import tuned_records

    # Engine 2's records (the solver runs engine 2); the paper kernels' per-kernel records
    # describe the legacy loop and serve Table 1.
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    records = [
        r
        for r in tuned_records(db, device.name)  # [] with a warning when the database is unusable
        if r.kernel_version.digest == digest
        and r.algorithm == algorithm
        and r.variant == variant
        and r.device.compute_capability == device.cc_string
    ]
    gc = graph.graph_class()
    record, source = pick(records, gc, device.uuid)
    if record is None:
        detail = (
            f"no tuned configuration stored for {device.name} (kernels {digest}, "
            f"{algorithm}/{variant}); using the default configuration"
        )
        log.info(detail)
        return None, LaunchConfig.default(), ConfigSource.DEFAULT, detail
    detail = f"class {gc} -> stored class {record.graph_class}"
    if record.kept_default:
        detail += " (tuning did not beat the default there; the default is stored)"
    if record.replay:
        detail += " [record from a replay of recorded measurements]"
    return record, record.config, source, detail
