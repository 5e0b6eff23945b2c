"""The class search: a graph class's structural choices for engine 2 (``tune engine``), scored by
whole solves; what ``solve(tuned=True)`` runs.

Engine 2's kernels are short and their work depends on the phase, so per-kernel event times
measure launch latency rather than the kernel (the reason the paper-style characterisation kept
the default on every sparse class). Here every candidate point is scored by what a user waits
for: the median wall time of whole solves (``SSSPResult.timings["wall"]``: initialisation, every
phase, predecessors, the copy back and the result), with the CUDA-event time of the same solves
kept beside it, over several sources of the class's instance, each answer checked against
SciPy's distances. A class of several instances (:func:`tuner.workload.class_instances`: a road
and a grid for deg2 high-diameter classes) scores a point by the geometric mean of its median
wall time on each (:class:`CompositeScorer`). The tuning driver (:mod:`tuner.driver`) runs the
search: a tuning run per class (resumed after an interrupt, shared by workers), Optuna's TPE
(seeded) with the default enqueued first, and the acceptance rule of every tuning for the
stored record.

The space (:data:`SPACE`): loop ("persistent", "graph", "host"), block size, L1 state (the
paper's per-kernel knob, applied to every kernel of the solve), lanes per node in relax (the
degree-aware mapping: 1 thread, a lane group or a whole warp per frontier node; nodes of more than
``SSSP_BIG_DEGREE`` edges are always walked by a whole block), blocks per multiprocessor and the
block-local phase limit of the persistent loop.

With ``algorithm="auto"`` (what ``solve(tuned=True)`` uses) the algorithm joins the space
(:data:`AUTO_SPACE`): Crauser OUT, Crauser IN+OUT or near-far, and near-far's Δ as a multiple of
its default rule (:func:`sssp.cpu.nearfar.default_delta`), so that the choice carries over to
every graph of the class rather than fitting one instance's weights.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import kernels
from sssp.classes import GraphClass
from sssp.config import CORE_NODES_MAX, KernelConfig, LaunchConfig
from sssp.errors import TuningError
from sssp.graph import Graph, iter_sources
from sssp.tuned import TunedFallback
from tuning_db import Store
from tuning_db.records import (
    BestRecord,
    DeviceRecord,
    KernelVersionRecord,
    RunKey,
    RunRecord,
    RunStatus,
    fallback_options,
)

from . import driver, interrupt

log = logging.getLogger(__name__)

SPACE: dict[str, tuple] = {
    "loop": ("persistent", "graph", "host"),
    "block_size": (256, 512, 1024),
    "l1": ("N", "A", "S"),
    "lanes": (1, 2, 4, 8, 16, 32),
    "blocks_per_sm": (1, 2),
    "local_limit": (0, 2048, 8192, 32768),
}


AUTO_ALGORITHMS = ("crauser", "crauser-inout", "near-far")
DELTA_SCALES = (0.5, 1, 2, 4, 16, 64, 256)
CLUSTER_CHOICES = (0, 4, 16)
"""Cluster loop: the fewest blocks that hold the graph (0), or at least 4 or 16 (more threads to
walk a step's edges, more shared-memory round trips between blocks)."""
FUSE_CHOICES = (0, 1, 2)
"""Cluster loop: nodes spread v % C with one cluster barrier per step (0), in bands of a
bandwidth-reducing order with local rounds inside each block between the barriers (1), or local
work across blocks, one cluster barrier per bucket (2; ``LaunchConfig.fuse``)."""
SHORTCUTS = (0, 8, 16, 32)
"""Near-far on the persistent or cluster loop: shortcut edges per node
(``LaunchConfig.shortcuts``). On the CPU reference 8, 16 and 32 a node cut the steps of the
record's meshes and roads about 1.9x, 2.7x and 3.8x for 1.6-3.4, 2.6-6.7 and 4.5-13 times the
edges (``benchmarks/results/cpu/shortcut_steps.csv``); what that costs a step is the device's."""
CORE_CHOICES = (0, 512, 1024, 2048, 4096, CORE_NODES_MAX)
"""Phast loop: the most nodes of the hierarchy's top levels whose distances the host keeps in a
core table (``LaunchConfig.core``; 0: none; up to ``sssp.config.CORE_NODES_MAX``). On this
project's 2-core host a core of up to 1 024 nodes left 7-33 of the record's 32-110 levels to
sweep (``benchmarks/results/cpu/phast_core.csv``). Since a solve reads its source's upward search
from the labels kept on the device, a larger core costs no search: the table is built once per
solver (COL's and fe_body's in 1.8-2.1 s at 8 192 on that host's two threads, whose labels it
shrinks by 28-32 % against 4 096), and a label's merge through the wider table costs the
sweep's block 0 a few microseconds more while the levels it removes each cost 2.5-6 (H100,
runs 155 and 157, ``benchmarks/results/h200/``)."""
AUTO_SPACE: dict[str, tuple] = {
    **SPACE,
    "loop": (*SPACE["loop"], "cluster", "wide", "phast"),
    "algorithm": AUTO_ALGORITHMS,
    "delta_scale": DELTA_SCALES,
    "cluster": CLUSTER_CHOICES,
    "fuse": FUSE_CHOICES,
    "shortcuts": SHORTCUTS,
    "core": CORE_CHOICES,
}
"""The space of ``algorithm="auto"``: :data:`SPACE` plus the cluster, wide and phast loops, the
algorithm, near-far's Δ scale, the cluster's size and its fusion, shortcut edges and the phast
loop's core table."""


def space_for(algorithm: str) -> dict[str, tuple]:
    if algorithm == "auto":
        return AUTO_SPACE
    if algorithm == "near-far":
        return {
            **SPACE,
            "loop": ("persistent", "cluster", "wide", "phast"),
            "delta_scale": DELTA_SCALES,
            "cluster": CLUSTER_CHOICES,
            "fuse": FUSE_CHOICES,
            "shortcuts": SHORTCUTS,
            "core": CORE_CHOICES,
        }
    return SPACE


def canonical(p: dict) -> dict:
    """One representative of the points that run the same solve: near-far runs on the persistent,
    the cluster, the wide or the phast loop, the phase-synchronous algorithms on the other three
    and without Δ or shortcuts (the wide loop takes none either; a point of a space with Δ that
    names no shortcuts has none); the cluster loop has no blocks per multiprocessor, no
    block-local limit and fixed lanes (``kernels.CLUSTER_LANES``, its predecessor pass), the wide
    loop runs its own kernels (block size, L1, lanes and block-local limit mean nothing to it),
    the phast loop too and has no Δ, the cluster's size and fusion mean nothing to the other
    loops, and a core table nothing but to the phast loop."""
    q = dict(p)
    nearfar = q.get("algorithm", "near-far" if "delta_scale" in q else None) == "near-far"
    if nearfar:
        if q["loop"] not in ("persistent", "cluster", "wide", "phast"):
            q["loop"] = "persistent"
    elif "algorithm" in q:
        q["delta_scale"] = 1
        if q["loop"] in ("cluster", "wide", "phast"):
            q["loop"] = "persistent"
    if q["loop"] == "cluster":
        q.update(lanes=kernels.CLUSTER_LANES, blocks_per_sm=1, local_limit=0)
    if q["loop"] == "wide":  # its own kernels: fixed blocks, no lanes, no block-local moves
        q.update(block_size=kernels.WIDE_BLOCK, l1="N", lanes=8, blocks_per_sm=1, local_limit=0)
    if q["loop"] == "phast":  # one sweep of its own: fixed blocks, no Δ; local_limit: the
        # widest level block 0 sweeps alone (0: the grid sweeps every level)
        q.update(block_size=kernels.PHAST_BLOCK, l1="N", blocks_per_sm=1)
        if "delta_scale" in q:
            q["delta_scale"] = 1
    if q["loop"] != "cluster":
        if "cluster" in q:
            q["cluster"] = 0
        if "fuse" in q:
            q["fuse"] = 0
    if "delta_scale" in q or "shortcuts" in q:
        takes = nearfar and q["loop"] in ("persistent", "cluster")
        q["shortcuts"] = int(q.get("shortcuts", 0)) if takes else 0
    if "core" in q and q["loop"] != "phast":
        q["core"] = 0
    return q


def choice(p: Mapping[str, Any], algorithm: str) -> tuple[str, float | None]:
    """(algorithm, Δ scale or None) a point runs, for the searched ``algorithm``."""
    algo = str(p.get("algorithm", algorithm))
    return algo, (float(p.get("delta_scale", 1)) if algo == "near-far" else None)


def to_config(p: dict) -> LaunchConfig:
    """A launch configuration from one point of :data:`SPACE`."""
    bs, l1 = int(p["block_size"]), str(p["l1"])
    return LaunchConfig(
        KernelConfig(bs, l1, int(p["lanes"])),
        KernelConfig(bs, l1),
        KernelConfig(bs, l1),
        loop=str(p["loop"]),
        blocks_per_sm=int(p["blocks_per_sm"]),
        local_limit=int(p["local_limit"]),
        cluster=int(p.get("cluster", 0)),
        fuse=int(p.get("fuse", 0)) if p["loop"] == "cluster" else 0,
        shortcuts=int(p.get("shortcuts", 0)) if p["loop"] in ("persistent", "cluster") else 0,
        core=int(p.get("core", 0)) if p["loop"] == "phast" else 0,
    )


def from_config(c: LaunchConfig) -> dict:
    """Inverse of :func:`to_config` (the cluster's size and fusion only for the cluster loop,
    shortcuts and a core table only where there are some)."""
    point = {
        "loop": c.loop,
        "block_size": c.relax.block_size,
        "l1": c.relax.l1,
        "lanes": c.relax.lanes,
        "blocks_per_sm": c.blocks_per_sm,
        "local_limit": c.local_limit,
    }
    if c.loop == "cluster":
        point["cluster"] = c.cluster
        point["fuse"] = int(c.fuse)
    if c.shortcuts:
        point["shortcuts"] = c.shortcuts
    if c.core:
        point["core"] = c.core
    return point


DEFAULT_POINT = {
    "loop": "persistent",
    "block_size": 256,
    "l1": "N",
    "lanes": 1,
    "blocks_per_sm": 2,
    "local_limit": 2048,
}
"""LaunchConfig.default() as a point of the space (its local limit -1 means 8 x 256)."""

WARM_START = (
    {
        "loop": "persistent",
        "block_size": 1024,
        "l1": "N",
        "lanes": 4,
        "blocks_per_sm": 1,
        "local_limit": 8192,
    },
    {
        "loop": "persistent",
        "block_size": 1024,
        "l1": "N",
        "lanes": 32,
        "blocks_per_sm": 1,
        "local_limit": 0,
    },
    {
        "loop": "persistent",
        "block_size": 256,
        "l1": "N",
        "lanes": 4,
        "blocks_per_sm": 2,
        "local_limit": 8192,
    },
    {
        "loop": "graph",
        "block_size": 256,
        "l1": "N",
        "lanes": 32,
        "blocks_per_sm": 1,
        "local_limit": 0,
    },
)
"""Points measured well on the H200 across graph families (benchmarks/bench_engine.py): the
search starts from them and the default, then TPE explores."""

NEARFAR_WARM_START = tuple(
    {
        "loop": "cluster",
        "block_size": bs,
        "l1": "N",
        "lanes": kernels.CLUSTER_LANES,
        "blocks_per_sm": 1,
        "local_limit": 0,
        "algorithm": "near-far",
        "delta_scale": scale,
        "cluster": blocks,
        "fuse": fuse,
        "shortcuts": 0,
    }
    for bs, scale, blocks, fuse in (
        (1024, 1, 16, 0),
        (1024, 1, 16, 2),
        (1024, 0.5, 0, 1),
        (1024, 2, 0, 2),
        (1024, 2, 16, 0),
        (1024, 1, 0, 1),
        (1024, 0.5, 16, 0),
        (1024, 1, 0, 0),
    )
) + tuple(
    {
        "loop": "persistent",
        "block_size": 1024,
        "l1": "N",
        "lanes": lanes,
        "blocks_per_sm": 1,
        "local_limit": 8192,
        "algorithm": "near-far",
        "delta_scale": scale,
        "cluster": 0,
        "fuse": 0,
        "shortcuts": 0,
    }
    for lanes, scale in ((4, 16), (32, 16), (4, 64), (32, 256), (4, 1), (32, 4))
)
"""Near-far points measured well on the H200 (benchmarks/bench_nearfar.py), the cluster loop's
first (a 393k-node class's budget of 10 ran out before reaching them when they came last). On
the persistent loop sparse and mesh-like graphs favour Δ 16-256 times the default rule with 4
lanes, social and denser ones 32 lanes; on the cluster loop, whole blocks, 16 of them, and Δ
0.5-2 times the rule (its steps cost less, so fewer nodes pushed twice pays), and fused on FE
meshes (12-28 % less time than unfused on crack, fe_4elt2, fe_sphere, t60k; more on Delaunay
meshes, roads and random graphs: benchmarks/results/h200/nearfar_fused_run39.csv). Fused across
blocks (fuse=2, a step per bucket) comes second and fourth, at 1-2 x the rule, where
benchmarks/results/cpu/bucket_model.csv puts its best Δ; it is not yet measured."""

SHORTCUT_WARM_START = (
    {**NEARFAR_WARM_START[0], "delta_scale": 2, "shortcuts": 16},
    {**NEARFAR_WARM_START[-1], "shortcuts": 16},
)
"""Two of the points above with 16 shortcut edges a node (the cluster loop's 16 blocks at 2 x Δ,
the persistent loop's 32 lanes at 4 x): on the CPU reference 16 a node cut the steps of the
record's meshes and roads 2.3-3.5x (:data:`SHORTCUTS`). They follow the first near-far point
for high-diameter classes (:func:`start_points`); not measured on a GPU when they were added."""

PHAST_WARM_START = canonical(
    {**DEFAULT_POINT, "loop": "phast", "algorithm": "near-far", "delta_scale": 1, "cluster": 0,
     "fuse": 0, "shortcuts": 0, "core": 0, "local_limit": 2048, "lanes": 4}
)  # fmt: skip
"""Near-far's answer by a contraction hierarchy's sweep (``sssp.gpu.phast``), block 0 sweeping the
top levels of up to 2 048 nodes (the space's ``local_limit``; 0 leaves every level to the grid),
a node's in-edges over up to 4 lanes. It comes first for high-diameter classes
(:func:`start_points`): on the CPU the record's 17 meshes, roads and geometric graphs sweep in
45-176 levels of which only 3-28 hold more than 1 024 nodes, against 50-2 600 near-far steps
(``benchmarks/results/cpu/hierarchy_levels.csv``). 4 lanes rather than 1: 10-40 % less GPU time
on every mesh measured (H100, runs 122 and 134, ``benchmarks/results/h200/README.md``), where
a search of 4 trials never reached another lane count."""

PHAST_CORE_WARM_START = {**PHAST_WARM_START, "core": 1024}
"""The phast point with a core table of up to 1 024 nodes (:data:`CORE_CHOICES`). On this
project's 2-core host the core left cs4 21 of its 110 levels, cti 17 of 92, road-1M 33 of 106
(``benchmarks/results/cpu/phast_core_int32.csv``); on an H100 (run 138) the wall time of cs4,
cti, COL, grid-512 and the 1M road-like graph fell up to 1.48x, that of the 2-D meshes did not;
under the labels it won every class searched on an H100 against no core (run 154)."""

PHAST_WIDE_CORE_WARM_START = {**PHAST_WARM_START, "core": CORE_NODES_MAX}
"""The phast point with a core table of up to 8 192 nodes, the largest allowed: with the
labels, cs4, fe_body, t60k and wing_nodal swept 13-24 us faster under 4 096 nodes than under
1 024 (their levels below the core 6-9 instead of 14-21; H100,
``phast_probe_core_h100_run157.csv``), and the record's 14 meshes 2-79 us faster again under
8 192 (2-11 levels fewer; H100, ``phast_probe_core8192_h100_run186.csv``). It
leads the phast points of high-diameter classes (:func:`start_points`), the core of 1 024
follows: every such search measures both; the sweep without a core only where the search
samples it."""


WIDE_WARM_START = tuple(
    canonical(
        {
            **DEFAULT_POINT,
            "loop": "wide",
            "algorithm": "near-far",
            "delta_scale": scale,
            "cluster": 0,
            "fuse": 0,
        }
    )
    for scale in (0.5, 1)
)
"""Near-far on the wide loop at 0.5 and 1 x the default Δ, the best points on GAP's scale-22
graphs (benchmarks/results/h200/wide_split_run94.csv, wide_finish_run99.csv). They come first
for the low-diameter classes that hold graphs of ``sssp.tuned.WIDE_MIN_NODES`` nodes or more
(:func:`wide_first`): a small budget there would otherwise be spent on loops built for smaller
graphs (run 103's budget of 8 on 786k/deg20 never reached the wide loop)."""


CLUSTER_LAST_NODES = 786_432
"""From this class size on (either diameter) the cluster loop's warm-start points come last: on the
H200 every cluster point of the 786k-3145k classes fell back to the persistent loop (their
distances outgrow 16 blocks' shared memory) and failed (run 103), and with a budget of 8 the six
of them left the 786k classes two measured points. Those fused across blocks (fuse=2) keep their
place: there they run across the grid (``sssp_nf_async``), which is what they name."""


def _nodes(graph_class: GraphClass | None) -> int:
    """The nodes of a class (0 for none)."""
    from sssp.classes import parse_size

    return 0 if graph_class is None else parse_size(graph_class.size)


def wide_first(graph_class: GraphClass | None) -> bool:
    """Whether the wide loop's points lead the warm start of ``graph_class``: a low-diameter
    class that holds graphs of ``sssp.tuned.WIDE_MIN_NODES`` nodes or more (a class's graphs
    reach sqrt(2) times its size: 786k holds 1M-node graphs)."""
    from sssp.tuned import WIDE_MIN_NODES

    low = graph_class is not None and graph_class.diameter == "lowdiam"
    return low and _nodes(graph_class) * math.sqrt(2) > WIDE_MIN_NODES


def start_points(algorithm: str, graph_class: GraphClass | None = None) -> list[dict]:
    """The default first, then the warm start, as points of :func:`space_for` ``(algorithm)``.
    For a high-diameter class the phast points (:data:`PHAST_WIDE_CORE_WARM_START`, then
    :data:`PHAST_CORE_WARM_START`) lead and the shortcut
    points (:data:`SHORTCUT_WARM_START`) follow the first near-far point after it; for a class of :func:`wide_first`, the wide loop's points lead the warm start;
    from :data:`CLUSTER_LAST_NODES` nodes on the cluster loop's come last, except those fused
    across blocks (:func:`score` fails a point whose loop falls back to another; fuse=2 runs across
    the grid there)."""
    nearfar = list(NEARFAR_WARM_START)
    if graph_class is not None and graph_class.diameter == "highdiam":
        nearfar[1:1] = SHORTCUT_WARM_START
        nearfar[:0] = [PHAST_WIDE_CORE_WARM_START, PHAST_CORE_WARM_START]
    if _nodes(graph_class) >= CLUSTER_LAST_NODES:
        nearfar.sort(key=lambda p: p["loop"] == "cluster" and p["fuse"] != 2)
    if wide_first(graph_class):
        nearfar[:0] = WIDE_WARM_START
    nearfar = [{"core": 0, **p} for p in nearfar]  # a core table only where a point names one
    if algorithm == "auto":  # the default, then near-far's (a budget smaller than the list still
        # measures the cluster loop), then Crauser's
        phased = [
            {**p, "algorithm": "crauser", "delta_scale": 1, "cluster": 0, "fuse": 0,
             "shortcuts": 0, "core": 0}
            for p in (DEFAULT_POINT, *WARM_START)
        ]  # fmt: skip
        return [phased[0], *nearfar, *phased[1:]]
    if algorithm == "near-far":
        return [{k: v for k, v in p.items() if k != "algorithm"} for p in nearfar]
    return [DEFAULT_POINT, *WARM_START]


def previous_point(record: BestRecord, algorithm: str) -> dict | None:
    """The configuration a stored best record (``tuning_db.records.BestRecord``, typically of an
    older kernel version) runs, as a point of :func:`space_for` ``(algorithm)``; None when it
    does not belong to that space (another algorithm, a Δ scale or size the space lacks)."""
    space = space_for(algorithm)
    point = from_config(record.config)
    if algorithm == "auto":
        point["algorithm"] = str(record.options.get("algorithm", "crauser"))
    if "delta_scale" in space:
        point["delta_scale"] = record.options.get("delta_scale", 1)
    if "cluster" in space:
        point.setdefault("cluster", 0)
        point.setdefault("fuse", 0)
    if "shortcuts" in space:
        point.setdefault("shortcuts", 0)
    if "core" in space:
        point.setdefault("core", 0)
    if set(point) != set(space) or any(point[k] not in space[k] for k in space):
        return None
    if "algorithm" not in space and record.options.get("algorithm", algorithm) != algorithm:
        return None
    return canonical(point)


def representative_sources(graph: Graph, count: int, seed: int) -> list[int]:
    """``count`` seeded sources that each reach at least a quarter of what the best-reaching
    candidate reaches: on sparse random classes many nodes reach almost nothing, and a solve
    from them scores a configuration on no work at all."""
    from scipy.sparse.csgraph import breadth_first_order

    matrix = graph.to_scipy()
    candidates = list(iter_sources(graph, 4 * count, seed=seed))
    reach = {
        s: breadth_first_order(matrix, s, directed=True, return_predecessors=False).size
        for s in candidates
    }
    top = max(reach.values())
    good = [s for s in candidates if reach[s] >= top / 4]
    return good[:count]


MARKER = "solves"
"""The user attribute of a measured trial: its point and the figures of its solves
(:meth:`Trial.attrs`). A trial without it was never measured (see :func:`tuner.driver.drive`)."""
STUDY_KERNEL = "engine"
"""What a class search's run and study are named after in place of a kernel
(:class:`~tuning_db.records.RunKey` ``kernel``, :func:`tuning_db.studies.study_name`)."""
FINALISTS = 3
"""The best distinct points by their trial, each measured :data:`FINAL_ROUNDS` times more, in
turn, before the pick (:func:`pick_finalist`). A trial is one measurement (the median over the
class's sources), and on the device hosts a whole measurement can be several times off: a mesh
class's search on an H100 (run 187) measured one point at 0.524 ms between neighbours at
0.08-0.11, and its pick's re-measure at 0.344 ms against its trial's 0.111."""
FINAL_ROUNDS = 2
"""Measurements of each finalist after its trial (:data:`FINALISTS`)."""
FINALS_ATTR = "finals"
"""The study's user attribute holding the finalists' measurements (:func:`pick_finalist`), so
that a resumed search or a replay reads them back instead of measuring again."""


def strategy_label(sources: int) -> str:
    """The run key's strategy of a class search over ``sources`` sources: trials scored on
    another number of sources are another search, and never share a study."""
    return f"tpe/sources-{sources}"


@dataclass(frozen=True)
class Trial:
    """One point of the space scored by whole solves over the class's sources.

    ``wall_ms`` (the objective) is the median of ``times_ms``, the wall time of each solve as a
    user waits for it (``SSSPResult.timings["wall"]``: initialisation, every phase, the copy
    back and the result's assembly); ``gpu_ms`` holds the CUDA-event time of the same solves
    beside it. A point that cannot run, or gives wrong distances, has ``wall_ms`` None and says
    why in ``error``.

    Scored on several instances (:class:`CompositeScorer`), ``parts`` holds each instance's
    (median wall ms, median CUDA-event ms), ``wall_ms`` is the geometric mean of their wall
    times, and ``times_ms`` / ``gpu_ms`` hold every solve of every instance in turn.
    """

    params: Mapping[str, Any]
    wall_ms: float | None
    times_ms: tuple[float, ...] = ()
    gpu_ms: tuple[float, ...] = ()
    phases: int = 0
    error: str = ""
    parts: tuple[tuple[float, float], ...] = ()

    def __post_init__(self) -> None:
        if self.wall_ms is None and not self.error:
            raise TuningError(f"a failed point {dict(self.params)} needs its reason")

    @property
    def gpu_median_ms(self) -> float | None:
        """The median CUDA-event time; over several instances the geometric mean of theirs."""
        if self.parts:
            return geometric_mean([gpu for _, gpu in self.parts])
        return float(np.median(self.gpu_ms)) if self.gpu_ms else None

    def attrs(self) -> dict[str, Any]:
        """The trial's user attribute :data:`MARKER` (JSON)."""
        return {
            "point": dict(self.params),
            "wall_ms": self.wall_ms,
            "times_ms": list(self.times_ms),
            "gpu_ms": list(self.gpu_ms),
            "phases": self.phases,
            "error": self.error,
            **({"parts": [list(p) for p in self.parts]} if self.parts else {}),
        }

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, Any]) -> Trial:
        """The inverse of :meth:`attrs`."""
        try:
            return cls(
                dict(attrs["point"]),
                None if attrs["wall_ms"] is None else float(attrs["wall_ms"]),
                tuple(float(t) for t in attrs.get("times_ms", ())),
                tuple(float(t) for t in attrs.get("gpu_ms", ())),
                int(attrs.get("phases", 0)),
                str(attrs.get("error", "")),
                tuple((float(w), float(g)) for w, g in attrs.get("parts", ())),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise TuningError(
                f"a recorded class-search trial holds an invalid value: {err}"
            ) from err


Scorer = Callable[[dict[str, Any]], Trial]
"""``scorer(point)``: a canonical point of the searched space, scored (:class:`SolveScorer` on a
GPU, :class:`RecordedScorer` from recorded measurements)."""


def point_key(point: Mapping[str, Any]) -> tuple:
    """A hashable key of a point: points of one key run the same solve."""
    q = canonical(dict(point))
    return tuple(sorted(q.items()))


def point_label(point: Mapping[str, Any], algorithm: str) -> str:
    """A point as one line of the log, e.g. ``near-far delta x2 loop=cluster block_size=1024 ...``."""
    algo, scale = choice(point, algorithm)
    rest = " ".join(f"{k}={v}" for k, v in point.items() if k not in ("algorithm", "delta_scale"))
    return f"{algo}{f' delta x{scale:g}' if scale is not None else ''} {rest}"


@dataclass(frozen=True)
class SearchResult:
    """What a class search found: the best point, its time and the default's (measured
    interleaved after the search), and every trial of the run."""

    graph_class: GraphClass
    algorithm: str
    """The searched algorithm (``"auto"``: the algorithm is part of the point)."""
    variant: str
    best_point: Mapping[str, Any]
    best_ms: float
    default_ms: float
    spread: float
    """A/A spread of the default's two measurements (:func:`tuner.driver.aa_spread`)."""
    n_sources: int
    trials: tuple[Trial, ...] = ()

    @property
    def best(self) -> LaunchConfig:
        return to_config(dict(self.best_point))

    @property
    def speedup(self) -> float:
        return self.default_ms / self.best_ms

    @property
    def accepted(self) -> bool:
        """Whether the search's pick replaces the default (:func:`tuner.driver.accepts`)."""
        return driver.accepts(self.default_ms, self.best_ms, self.spread)

    def chosen(self) -> tuple[str, float | None]:
        """(algorithm, Δ scale or None) of the best point."""
        return choice(dict(self.best_point), self.algorithm)


def score(
    graph: Graph,
    config: LaunchConfig,
    sources: list[int],
    *,
    algorithm: str,
    variant: str,
    device: int,
    reference: dict[int, np.ndarray],
    delta_scale: float | None = None,
) -> Trial:
    """Median wall ms of ``config`` over ``sources`` (after one warm-up solve); an answer that
    differs from ``reference`` makes the trial fail (recorded, not raised). ``algorithm`` is the
    one that runs (not ``"auto"``); ``delta_scale`` near-far's Δ scale."""
    from sssp.gpu import make_solver

    point = from_config(config)
    extra = {}
    if algorithm == "near-far":
        point.update(algorithm=algorithm, delta_scale=delta_scale or 1)
        from sssp.cpu.nearfar import scaled_delta

        extra["delta"] = scaled_delta(graph, delta_scale or 1)
    try:
        with make_solver(
            graph, algorithm=algorithm, variant=variant, config=config, device=device, **extra
        ) as solver:
            ran = getattr(solver, "loop", config.loop)
            # Fused across blocks names a protocol, which runs across the grid where no cluster
            # holds the graph (sssp.gpu.plan): that is what the point names, so it is scored.
            across = config.fuse == 2 and getattr(solver, "grid_async", False)
            if ran != config.loop and not across:  # e.g. a cluster too small for the class
                return Trial(point, None, error=f"the {config.loop} loop ran as {ran} here")
            solver.solve(sources[0])
            times, gpu, phases = [], [], []
            for s in sources:
                r = solver.solve(s)
                if not np.array_equal(r.dist, reference[s]):
                    return Trial(point, None, error=f"wrong distances from source {s}")
                # The wall time, not the device's: a configuration fast on the GPU but slow to
                # deliver its result must not win.
                times.append(1e3 * r.timings["wall"])
                gpu.append(1e3 * r.timings["gpu"])
                phases.append(r.iterations)
    except Exception as err:  # SSSPError, pycuda's LaunchError and friends: a failed point
        return Trial(point, None, error=f"{type(err).__name__}: {err}")
    return Trial(point, float(np.median(times)), tuple(times), tuple(gpu), int(np.median(phases)))


@dataclass(frozen=True)
class SolveScorer:
    """Scores points by solving on the GPU (:func:`score`), each answer checked against SciPy's."""

    graph: Graph
    sources: tuple[int, ...]
    algorithm: str
    variant: str
    device: int
    reference: Mapping[int, np.ndarray] = field(repr=False)

    @classmethod
    def for_graph(
        cls, graph: Graph, sources: list[int], *, algorithm: str, variant: str, device: int
    ) -> SolveScorer:
        from sssp.cpu.reference import dijkstra

        # Every candidate's answer is checked against SciPy's, so no configuration (the
        # default included) can serve as the reference of the others.
        reference = {s: dijkstra(graph, s).dist for s in sources}
        return cls(graph, tuple(sources), algorithm, variant, device, reference)

    def __call__(self, point: dict[str, Any]) -> Trial:
        algo, scale = choice(point, self.algorithm)
        trial = score(
            self.graph,
            to_config(point),
            list(self.sources),
            algorithm=algo,
            variant=self.variant,
            device=self.device,
            reference=dict(self.reference),
            delta_scale=scale,
        )
        return dataclasses.replace(trial, params=dict(point))


def geometric_mean(values: Sequence[float]) -> float:
    """The geometric mean of positive ``values``: a composite score in which each instance's
    relative change counts alike, whatever its absolute time."""
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=np.float64)))))


@dataclass(frozen=True)
class CompositeScorer:
    """Scores a point on several instances (:func:`tuner.workload.class_instances`), one
    scorer each: the trial's ``wall_ms`` is the geometric mean of the instances' median wall
    times, ``parts`` keeps each one's. A point that fails on any instance fails, naming it."""

    parts: tuple[tuple[str, Scorer], ...]

    def __call__(self, point: dict[str, Any]) -> Trial:
        trials = []
        for label, part in self.parts:
            t = part(point)
            if t.wall_ms is None:
                return Trial(dict(point), None, error=f"on {label}: {t.error}")
            trials.append(t)
        walls = [float(t.wall_ms) for t in trials if t.wall_ms is not None]
        return Trial(
            dict(point),
            geometric_mean(walls),
            tuple(x for t in trials for x in t.times_ms),
            tuple(x for t in trials for x in t.gpu_ms),
            max(t.phases for t in trials),
            parts=tuple((w, t.gpu_median_ms or 0.0) for w, t in zip(walls, trials, strict=True)),
        )


@dataclass(frozen=True)
class RecordedScorer:
    """Scores points from recorded measurements (a measured run's trials), for machines without
    a GPU: a point the recording lacks is a failed point that says so."""

    recorded: Mapping[tuple, Trial]
    source: str = "the recorded run"

    @classmethod
    def from_trials(cls, trials: list[Trial], source: str = "the recorded run") -> RecordedScorer:
        return cls({point_key(t.params): t for t in trials}, source)

    def __call__(self, point: dict[str, Any]) -> Trial:
        found = self.recorded.get(point_key(point))
        if found is None:
            return Trial(dict(point), None, error=f"not measured in {self.source}")
        return dataclasses.replace(found, params=dict(point))


def study_trials(study: Any) -> list[Trial]:
    """The measured trials of a class search's study, in trial order."""
    return [Trial.from_attrs(t.user_attrs[MARKER]) for t in driver.measured_trials(study, MARKER)]


def search(
    study: Any,
    scorer: Scorer,
    *,
    graph_class: GraphClass,
    algorithm: str = "crauser",
    variant: str = "successors",
    budget: int = 40,
    n_sources: int = 5,
    seed: int = 0,
    previous: dict | None = None,
    progress: Callable[[Trial], None] | None = None,
    on_ask: Callable[[Any], None] | None = None,
) -> SearchResult:
    """Search :func:`space_for` ``(algorithm)`` on ``study`` until it holds ``budget`` measured
    points (:func:`tuner.driver.drive`, Optuna's TPE, seeded), pick among the best by measuring
    them again (:func:`pick_finalist`), then measure the pick and the default interleaved, twice
    each, so that drift between the search and the comparison hits both; returns the typed
    result.

    The default is enqueued first, then ``previous`` (e.g. :func:`previous_point` of the class's
    stored best for older kernels, so that a re-tune with a small budget still measures what won
    before), then the warm start. A study that holds measurements already (a resumed run) keeps
    them: nothing it measured is measured again, and its queue is not enqueued twice.

    Raises
    ------
    TuningError
        No point ran, or the final comparison failed.
    """
    import optuna
    from optuna.distributions import CategoricalDistribution

    space = space_for(algorithm)
    dists = {k: CategoricalDistribution(list(v)) for k, v in space.items()}
    starts = start_points(algorithm, graph_class)
    if previous is not None:
        starts.insert(1, previous)
    driver.enqueue_new(study, starts, point_key, MARKER)
    done = len(driver.measured_trials(study, MARKER))
    study.sampler = optuna.samplers.TPESampler(seed=seed + done, n_startup_trials=10)
    t0 = time.perf_counter()

    def measure(params: dict[str, Any]) -> driver.Measured:
        point = canonical(params)
        trial = scorer(point)
        figures = (
            f"{trial.wall_ms:.3f} ms wall, {trial.gpu_median_ms or 0:.3f} ms gpu"
            if trial.wall_ms is not None
            else f"failed: {trial.error}"
        )
        if trial.parts:  # each instance's, behind their geometric means
            figures += " (" + "; ".join(f"{w:.3f} / {g:.3f}" for w, g in trial.parts) + ")"
        log.info("%s: measured %s: %s", graph_class, point_label(point, algorithm), figures)
        return driver.Measured(trial.wall_ms, {MARKER: trial.attrs()}, trial)

    def on_result(params: dict[str, Any], measured: driver.Measured) -> None:
        if progress:
            progress(measured.detail)

    driver.drive(
        study,
        dists,
        budget=budget,
        key=point_key,
        measure=measure,
        marker=MARKER,
        on_ask=on_ask,
        on_result=on_result,
    )
    trials = study_trials(study)
    ok = [t for t in trials if t.wall_ms is not None]
    if not ok:
        raise TuningError(f"no engine configuration ran on {graph_class}")
    best = pick_finalist(study, scorer, ok, graph_class=graph_class, algorithm=algorithm)
    # The comparison the result reports: best and default interleaved. The default of "auto" is
    # Crauser OUT with the default configuration.
    default_point = canonical(start_points(algorithm)[0])
    d_trials, b_trials = [], []
    for _ in range(2):
        d_trials.append(scorer(default_point))
        b_trials.append(scorer(canonical(dict(best.params))))
    failed = [t.error for t in (*d_trials, *b_trials) if t.wall_ms is None]
    if failed:
        raise TuningError(f"the final comparison failed on {graph_class}: {failed[0]}")
    d = [float(t.wall_ms) for t in d_trials if t.wall_ms is not None]
    b = [float(t.wall_ms) for t in b_trials if t.wall_ms is not None]
    log.info(
        "class search on %s: %d trials (%.1f s this session), best %s",
        graph_class,
        len(trials),
        time.perf_counter() - t0,
        point_label(best.params, algorithm),
    )
    return SearchResult(
        graph_class=graph_class,
        algorithm=algorithm,
        variant=variant,
        best_point=dict(best.params),
        best_ms=float(np.median(b)),
        default_ms=float(np.median(d)),
        spread=driver.aa_spread(d[0], d[1]),
        n_sources=n_sources,
        trials=tuple(trials),
    )


def _final_key(point: Mapping[str, Any]) -> str:
    return json.dumps([list(kv) for kv in point_key(point)])


def pick_finalist(
    study: Any, scorer: Scorer, ok: list[Trial], *, graph_class: GraphClass, algorithm: str
) -> Trial:
    """The search's pick: of the :data:`FINALISTS` best points by their trial, each
    measured :data:`FINAL_ROUNDS` times more in turn (so that drift hits them alike), the least
    median of its trial and those measurements. A finalist that fails a measurement (a wrong
    answer, an error) is out. The measurements are kept in ``study`` (:data:`FINALS_ATTR`,
    milliseconds by point, None for a failure) and read back where present: a resumed search
    measures only what it lacks, a replay (:class:`RecordedScorer`) reads the recorded run's.

    Raises
    ------
    TuningError
        Every finalist failed a measurement.
    """
    # A study measures each point once (tuner.driver.drive), so its best trials are distinct.
    finalists = sorted(ok, key=lambda t: t.wall_ms or 0.0)[:FINALISTS]
    kept = study.user_attrs.get(FINALS_ATTR)
    measured: dict[str, list[float | None]] = {
        k: list(v) for k, v in (kept if isinstance(kept, dict) else {}).items()
    }
    for r in range(FINAL_ROUNDS):
        for t in finalists:
            runs = measured.setdefault(_final_key(t.params), [])
            if len(runs) > r:
                continue
            again = scorer(canonical(dict(t.params)))
            runs.append(again.wall_ms)
            study.set_user_attr(FINALS_ATTR, measured)
            if again.wall_ms is None:
                log.warning(
                    "%s: finalist %s failed a measurement: %s",
                    graph_class,
                    point_label(t.params, algorithm),
                    again.error,
                )
    scored: list[tuple[float, Trial]] = []
    for t in finalists:
        runs = measured[_final_key(t.params)][:FINAL_ROUNDS]
        if any(ms is None for ms in runs):
            continue
        ms = float(np.median([t.wall_ms, *runs]))
        log.info(
            "%s: finalist %s: %.3f ms (trial %.3f, again %s)",
            graph_class,
            point_label(t.params, algorithm),
            ms,
            t.wall_ms,
            ", ".join(f"{x:.3f}" for x in runs if x is not None),
        )
        scored.append((ms, t))
    if not scored:
        raise TuningError(f"every finalist of {graph_class} failed a measurement")
    return min(scored, key=lambda p: p[0])[1]


MANY_MODES = ("search", "skip", "only")


@dataclass(frozen=True)
class EngineOptions:
    """What ``tune engine`` searches, and how (the class search's :class:`TuneOptions`)."""

    algorithm: str = "auto"
    variant: str = "successors"
    budget: int = 30
    sources: int = 5
    seed: int = 0
    device: int = 0
    replay: bool = False
    """Score points from the measured runs of the same class in the database (no GPU)."""
    many: str = "search"
    """The many-source choices (:mod:`tuner.many_search`): ``"search"`` them after the class
    search, ``"skip"`` them, or search ``"only"`` them, on the class's stored record."""

    def __post_init__(self) -> None:
        from sssp.result import GPU_ALGORITHMS

        if self.many not in MANY_MODES:
            raise TuningError(
                f"many-source mode {self.many!r} is invalid: use one of {', '.join(MANY_MODES)}"
            )

        if self.algorithm not in ("auto", *GPU_ALGORITHMS):
            raise TuningError(
                f"unknown algorithm {self.algorithm!r} for the class search: expected auto or "
                f"one of {', '.join(GPU_ALGORITHMS)}"
            )
        if self.budget < 1 or self.sources < 1:
            raise TuningError(f"budget {self.budget} and sources {self.sources} must be positive")


def engine_kernel_version() -> KernelVersionRecord:
    return KernelVersionRecord(
        kernels.digest(kernels.ENGINE_SOURCE_FILE), " ".join(kernels.NVCC_OPTIONS)
    )


@dataclass(frozen=True)
class Recorded:
    """A measured class-search run to replay: its key's device and kernels, its trials and its
    finalists' measurements (:data:`FINALS_ATTR`; None where the run predates them)."""

    run: RunRecord
    sources: tuple[int, ...]
    trials: tuple[Trial, ...]
    finals: dict[str, Any] | None = None


def recorded_run(store: Store, graph_class: GraphClass, opts: EngineOptions) -> Recorded:
    """The newest finished, measured class-search run of ``graph_class`` (the algorithm,
    variant, seed and number of sources of ``opts``) in ``store``, for a replay.

    Raises
    ------
    TuningError
        There is none.
    """

    runs = [
        r
        for r in store.runs(graph_class=graph_class, status=RunStatus.FINISHED)
        if r.key.kernel == STUDY_KERNEL
        and not r.key.replay
        and (r.key.algorithm, r.key.variant) == (opts.algorithm, opts.variant)
        and r.seed == opts.seed
        and r.key.strategy == strategy_label(opts.sources)
    ]
    if not runs:
        raise TuningError(
            f"no measured class-search run of {graph_class} ({opts.algorithm}/{opts.variant}, "
            f"seed {opts.seed}, {opts.sources} sources) in {store.url}; replay needs one "
            "(tune engine on a GPU)"
        )
    run = runs[-1]
    study = store.recorded_study(run, STUDY_KERNEL)
    attrs = study.user_attrs
    return Recorded(
        run, tuple(attrs.get("sources", ())), tuple(study_trials(study)), attrs.get(FINALS_ATTR)
    )


def tune_class(
    graph_class: GraphClass,
    opts: EngineOptions,
    *,
    store: Store,
    claim: driver.Claim | None = None,
    scorer: Scorer | None = None,
    progress: Callable[[Trial], None] | None = None,
    many_scorer: Any = None,
) -> driver.TuneOutcome | None:
    """Search ``graph_class`` (its paper instance) in a tuning run and store the best record;
    then, with ``opts.many == "search"``, its many-source choices on that record
    (:func:`tuner.many_search.tune_many`, a run of its own; ``"only"``: just those, on the
    class's stored record).

    The run (:func:`tuner.driver.hold_run`, key: device, engine kernels, class, algorithm,
    variant, instance) holds the search's Optuna study: an interrupted search resumes where it
    stopped, measuring nothing twice; ``claim`` shares classes between workers. ``scorer``
    replaces the GPU (tests); with ``opts.replay`` points are scored from the class's measured
    run in ``store`` (:func:`recorded_run`). The stored best record is the search's pick when it
    passes :func:`tuner.driver.accepts`, else the default with the pick beside it. Returns
    ``None`` when ``claim`` gave the run to another worker or found it finished.
    """
    from . import many_search
    from .pipeline import device_record
    from .workload import class_instances, instance_label

    interrupt.check()
    if opts.many == "only":
        return _tune_many_only(graph_class, opts, store=store, claim=claim, scorer=many_scorer)
    made: list[tuple[Graph, str]] = []
    recorded: Recorded | None = None
    if opts.replay:
        recorded = recorded_run(store, graph_class, opts)
        device, version = recorded.run.key.device, recorded.run.key.kernel_version
        instance, sources = recorded.run.key.instance, list(recorded.sources)
        scorer = scorer or RecordedScorer.from_trials(
            list(recorded.trials), f"recorded run {recorded.run.id}"
        )
    else:
        device, version = device_record(opts.device), engine_kernel_version()
        made = class_instances(graph_class, seed=opts.seed)
        instance = instance_label(made)
        sources = []
    key = RunKey(
        device=device,
        kernel_version=version,
        graph_class=graph_class,
        algorithm=opts.algorithm,
        variant=opts.variant,
        kernel=STUDY_KERNEL,
        strategy=strategy_label(opts.sources),
        instance=instance,
        replay=opts.replay,
    )
    with driver.hold_run(store, key, budget=opts.budget, seed=opts.seed, claim=claim) as held:
        if held is None:
            return None
        run = held.run
        study = store.study(run, STUDY_KERNEL)
        if held.resumed:
            log.info(
                "resuming run %d of %s (%d configurations measured)",
                run.id,
                graph_class,
                len(driver.measured_trials(study, MARKER)),
            )
        if made:
            picked = [representative_sources(g, opts.sources, run.seed + 29) for g, _ in made]
            sources = picked[0]
            if scorer is None:
                parts = [
                    (
                        label,
                        SolveScorer.for_graph(
                            g, src, algorithm=opts.algorithm, variant=opts.variant,
                            device=opts.device,
                        ),
                    )
                    for (g, label), src in zip(made, picked, strict=True)
                ]  # fmt: skip
                scorer = parts[0][1] if len(parts) == 1 else CompositeScorer(tuple(parts))
            if len(made) > 1 and "instance_sources" not in study.user_attrs:
                study.set_user_attr("instance_sources", [[int(s) for s in p] for p in picked])
        if "sources" not in study.user_attrs:  # the first instance's
            study.set_user_attr("sources", [int(s) for s in sources])
        if recorded is not None and recorded.finals and FINALS_ATTR not in study.user_attrs:
            study.set_user_attr(FINALS_ATTR, recorded.finals)  # the replay's finalists
        assert scorer is not None

        ids = driver.TrialIds(store.storage, study)

        def on_ask(trial: Any) -> None:
            assert held.beat is not None
            held.beat.trial(None if trial is None else ids(trial))

        result = search(
            study,
            scorer,
            graph_class=graph_class,
            algorithm=opts.algorithm,
            variant=opts.variant,
            budget=opts.budget,
            n_sources=len(sources) or opts.sources,
            seed=run.seed,
            previous=previous_best(store, device.name, graph_class, opts),
            progress=progress,
            on_ask=on_ask,
        )
        best = to_best(result, device, kernel_version=version, run_id=run.id, replay=opts.replay)
        old = store.best(device.uuid, version.digest, graph_class, opts.algorithm, opts.variant)
        best = many_search.carry_pick(old, best)  # measured on the same single-source pick
        store.put_best(best)
    outcome = driver.TuneOutcome(best, run.id, held.resumed, held.wall_seconds, len(result.trials))
    if opts.many == "search":
        many = many_search.tune_many(
            graph_class,
            opts,
            store=store,
            record=best,
            made=made[0] if made else None,  # the first instance's
            claim=claim,
            scorer=many_scorer,
        )
        if many is not None:
            outcome = dataclasses.replace(outcome, best=many.best)
    return outcome


def _tune_many_only(
    graph_class: GraphClass,
    opts: EngineOptions,
    *,
    store: Store,
    claim: driver.Claim | None,
    scorer: Any,
) -> driver.TuneOutcome | None:
    """``tune engine --many-sources only``: the many-source search on the class's stored
    record of these kernels on this GPU model (the newest), none when there is none."""
    from . import many_search
    from .pipeline import device_record

    if opts.replay:
        name = None
    else:
        name = device_record(opts.device).name
    digest = engine_kernel_version().digest
    mine = [
        r
        for r in store.all_best(device_name=name)
        if (r.algorithm, r.variant) == (opts.algorithm, opts.variant)
        and r.graph_class == graph_class
        and r.kernel_version.digest == digest
    ]
    if not mine:
        log.warning(
            "%s: no stored %s/%s record of kernels %s%s: the many-source search needs the "
            "class's single-source pick (tune engine)",
            graph_class,
            opts.algorithm,
            opts.variant,
            digest,
            f" for {name}" if name else "",
        )
        return None
    record = max(mine, key=lambda r: r.updated_at)
    return many_search.tune_many(
        graph_class, opts, store=store, record=record, claim=claim, scorer=scorer
    )


def previous_best(
    store: Store, device_name: str, graph_class: GraphClass, opts: EngineOptions
) -> dict | None:
    """The point of the class's latest stored best record on this GPU model (any kernel
    version), so that a re-tune measures what won before right after the default; None when
    there is none or it lies outside the searched space."""
    mine = [
        r
        for r in store.all_best(device_name=device_name)
        if (r.algorithm, r.variant) == (opts.algorithm, opts.variant)
        and r.config.loop != "legacy"
        and r.graph_class == graph_class
    ]
    if not mine:
        return None
    latest = max(mine, key=lambda r: r.updated_at)
    point = previous_point(latest, opts.algorithm)
    if point is not None:
        log.info(
            "class %s: measuring the stored best of kernels %s after the default",
            graph_class,
            latest.kernel_version.digest,
        )
    return point


def summary(out: driver.TuneOutcome) -> str:
    """One line of a class's outcome, for the command line."""
    b = out.best
    verdict = "kept the default" if b.kept_default else "stored"
    picked = str(b.options.get("tuned.algorithm", b.options.get("algorithm", b.algorithm)))
    scale = b.options.get("tuned.delta_scale", b.options.get("delta_scale"))
    if scale is not None:
        picked += f" delta x{float(scale):g}"
    from .many_search import summary as many_summary

    return (
        f"default {b.default_median_ms:.3f} ms  searched {b.tuned_median_ms:.3f} ms  "
        f"({b.speedup:.2f}x, {verdict})  {picked}  {b.tuned_config}{many_summary(b)}"
    )


def to_best(
    result: SearchResult,
    device: DeviceRecord,
    *,
    kernel_version: KernelVersionRecord | None = None,
    run_id: int | None = None,
    replay: bool = False,
) -> BestRecord:
    """The best record of a search: engine 2's kernel version, the searched configuration with
    its structural options, or the default when the search's pick does not pass
    :func:`tuner.driver.accepts` (the rule of every tuning)."""
    searched = result.best
    kept_default = not result.accepted
    chosen = _default_config(result.algorithm) if kept_default else searched
    return BestRecord(
        device=device,
        kernel_version=kernel_version or engine_kernel_version(),
        graph_class=result.graph_class,
        algorithm=result.algorithm,
        variant=result.variant,
        config=chosen,
        tuned_config=searched,
        tuned_median_ms=result.best_ms,
        default_median_ms=result.default_ms,
        speedup=result.speedup,
        n_sources=result.n_sources,
        kept_default=kept_default,
        replay=replay,
        run_id=run_id,
        # The search's own structural picks ride along (prefixed) when the default is kept.
        options=_stored_options(result, chosen, searched, kept_default),
    )


def algorithm_options(point: Mapping[str, Any], algorithm: str) -> dict:
    """What a record of an ``"auto"`` (or near-far) search stores beside the launch options for
    ``point``: the algorithm it runs and, for near-far, the Δ scale."""
    if algorithm not in ("auto", "near-far"):
        return {}
    algo, scale = choice(dict(point), algorithm)
    return {"algorithm": algo, **({"delta_scale": scale} if scale is not None else {})}


def _default_config(algorithm: str) -> LaunchConfig:
    """The configuration a search compared against: the default one, or for near-far alone its
    first start point."""
    return (
        to_config(start_points("near-far")[0])
        if algorithm == "near-far"
        else LaunchConfig.default()
    )


def _fallback(result: SearchResult, chosen: LaunchConfig) -> dict:
    """For a pick on the phast loop, the options that store its fallback
    (:func:`tuning_db.records.fallback_options`): the fastest measured point of the search on
    another loop, which runs while the graph's hierarchy is not built. Nothing for other picks,
    or where no such point was measured."""
    if chosen.loop != "phast":
        return {}
    others = [
        t
        for t in result.trials
        if t.wall_ms is not None and canonical(dict(t.params))["loop"] != "phast"
    ]
    if not others:
        return {}
    best = min(others, key=lambda t: t.wall_ms or math.inf)
    point = canonical(dict(best.params))
    algo, scale = choice(point, result.algorithm)
    return fallback_options(TunedFallback(to_config(point), algo, scale, best.wall_ms))


def _stored_options(
    result: SearchResult, chosen: LaunchConfig, searched: LaunchConfig, kept_default: bool
) -> dict:
    """The stored record's options: the chosen configuration's, its algorithm choice (records of
    "auto": Crauser OUT when the default is kept), and the search's own picks, prefixed
    ``tuned.``, when the default is kept."""
    picked = algorithm_options(result.best_point, result.algorithm)
    if not kept_default:
        return {**chosen.options(), **picked, **_fallback(result, chosen)}
    default_algo = algorithm_options(start_points(result.algorithm)[0], result.algorithm)
    tuned = {f"tuned.{k}": v for k, v in {**searched.options(), **picked}.items()}
    return {**chosen.options(), **default_algo, **tuned}
