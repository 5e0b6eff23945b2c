"""Engine 2's search space: the structural and launch choices a class search (:mod:`tuner.class_search`)
tries, how a point maps to a :class:`~sssp.config.LaunchConfig` and back, and where a search
starts.

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

import math
from collections.abc import Mapping
from typing import Any

import kernels
from sssp.classes import GraphClass
from sssp.config import CORE_NODES_MAX, KernelConfig, LaunchConfig
from tuning_db.records import BestRecord

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
    across blocks (:func:`tuner.scoring.score` fails a point whose loop falls back to another; fuse=2 runs across
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


def point_key(point: Mapping[str, Any]) -> tuple:
    """A hashable key of a point: points of one key run the same solve."""
    q = canonical(dict(point))
    return tuple(sorted(q.items()))


def point_label(point: Mapping[str, Any], algorithm: str) -> str:
    """A point as one line of the log, e.g. ``near-far delta x2 loop=cluster block_size=1024 ...``."""
    algo, scale = choice(point, algorithm)
    rest = " ".join(f"{k}={v}" for k, v in point.items() if k not in ("algorithm", "delta_scale"))
    return f"{algo}{f' delta x{scale:g}' if scale is not None else ''} {rest}"
