"""PHAST's dependent steps on the record's graphs: a contraction hierarchy's levels (CPU counts).

    python benchmarks/hierarchy_levels.py --graphs-dir G --out OUT.csv t60k COL grid-512 road-1M
    python benchmarks/hierarchy_levels.py --level-weights 1 16 --out OUT.csv cs4 COL road-1M
    python benchmarks/hierarchy_levels.py --cores 1024 4096 8192 --graphs-dir G 4elt road-24k grid-157

A near-far solve on a road or a mesh takes about as many dependent steps as its deepest shortest
path has edges (``spt_depth.py``); PHAST (:mod:`sssp.hierarchy`) takes one per level of a
contraction hierarchy built once per graph. This script builds the hierarchy of each graph (the
record's graph and weights, ``result_path.build``) and reports, per graph: the levels, the
hierarchy's edges over m, the build's seconds on this host (one core), how many levels hold
fewer than ``--small`` nodes (levels one thread block could sweep between block barriers, no
device-wide wait), the largest level; and per source (``bench_sssp.pick_sources``): the nodes
the upward search settles, the CPU sweep's milliseconds (sequential, the tree included), and
the CPU reference near-far's steps at the default Δ, beside the record's steps, GPU and GAP
milliseconds. Every PHAST answer is checked against near-far's distances and tree.
``--level-weights`` builds each graph's hierarchy once per weight of a node's level in its
contraction priority (``sssp.contraction.LEVEL_WEIGHT``; default: the library's). ``--cores``
adds, per core table size, the levels the device sweeps below it (column ``levels_below``,
``size:levels`` pairs): what a wider core table saves a graph, roads against meshes of one size;
and the passes of the device's grid of ``--threads`` threads over those levels (column
``passes_below``): a level wider than the grid takes one pass per grid's width, one after another
on each thread (:func:`grid_passes`), so a solve's loop time over its passes is what one
dependent step costs.

Counts and CPU times only: what a level costs on the device is for the device to measure.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import BIG_NODES, pick_sources  # noqa: E402
from result_path import build  # noqa: E402
from spt_depth import RECORD, record_fields, record_rows, write_rows  # noqa: E402

import sssp  # noqa: E402
from sssp.contraction import LEVEL_WEIGHT  # noqa: E402
from sssp.cpu.nearfar import near_far  # noqa: E402
from sssp.hierarchy import build_hierarchy, phast  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "m",
    "level_weight",
    "levels",
    "edges_per_m",
    "build_s",
    "small_levels",
    "small_nodes",
    "max_level_nodes",
    "levels_below",
    "passes_below",
    "source",
    "upward_settled",
    "cpu_sweep_ms",
    "nearfar_steps",
    "record_steps",
    "record_gpu_ms",
    "record_gap_ms",
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+", help="record graph names (result_path.build)")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--record", type=Path, default=RECORD, help="the record's CSV")
    ap.add_argument("--small", type=int, default=1024, help="a level one block sweeps")
    ap.add_argument("--sources", type=int, default=5, help="as bench_sssp's --sources")
    ap.add_argument("--big-sources", type=int, default=3, help="as bench_sssp's --big-sources")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--level-weights",
        type=int,
        nargs="+",
        default=[LEVEL_WEIGHT],
        metavar="W",
        help=f"weights of a node's level in its priority (default: {LEVEL_WEIGHT})",
    )
    ap.add_argument(
        "--cores",
        type=int,
        nargs="+",
        default=[],
        metavar="NODES",
        help="core table sizes: report the levels below each",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=GRID_THREADS,
        help=f"the device grid's threads, for passes_below (default {GRID_THREADS}: 132 x 1 024)",
    )
    args = ap.parse_args(argv)
    if args.threads < 1:
        raise sssp.SSSPError(f"--threads must be at least 1, not {args.threads}")
    record = record_rows(args.record)
    rows: list[dict] = []
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("."), args.seed)
        if graph.is_float:
            raise sssp.SSSPError(f"{name}: a hierarchy takes integer weights only")
        rec = record.get(name, {})
        count = args.big_sources if graph.n > BIG_NODES else args.sources
        sources = pick_sources(graph, count, args.seed)
        refs = {s: near_far(graph, s) for s in sources}
        for weight in args.level_weights:
            rows += _levels(name, graph, weight, refs, rec, args.small, args.cores, args.threads)
    if args.out:
        write_rows(args.out, COLUMNS, rows)
    return 0


GRID_THREADS = 132 * 1024
"""The phast sweep's grid on an H100 or H200 at one block of 1 024 threads per multiprocessor."""


def grid_passes(sizes: np.ndarray, threads: int) -> int:
    """Passes of a grid of ``threads`` threads over levels of ``sizes`` nodes: the sweep gives
    each node of a level a group of lanes (as many as still fit the level in one pass, at least
    one), so a level takes one pass, or ``ceil(size / threads)`` where one lane a node is too
    many."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return int(np.maximum(1, -(-sizes // threads)).sum())


def _levels(
    name: str,
    graph: sssp.Graph,
    weight: int,
    refs: dict,
    rec: dict,
    small_at: int,
    cores: Sequence[int] = (),
    threads: int = GRID_THREADS,
):
    """The rows of one graph's hierarchy at level weight ``weight``, one per source of
    ``refs`` (near-far's answers, each PHAST answer checked against its source's)."""
    h = build_hierarchy(graph, level_weight=weight)
    sizes = np.diff(h.level_ptr)
    small = sizes < small_at
    below = " ".join(f"{c}:{h.levels_below(c)}" for c in cores)
    # level_ptr runs from the top level down: the levels below a core are the last ones.
    passes = " ".join(f"{c}:{grid_passes(sizes[h.top_levels(c) :], threads)}" for c in cores)
    per = []
    for s, ref in refs.items():
        r = phast(graph, h, s)
        if not (np.array_equal(r.dist, ref.dist) and np.array_equal(r.pred, ref.pred)):
            raise AssertionError(f"{name}, from {s}: PHAST differs from near-far")
        per.append(
            {
                "graph": name,
                "n": graph.n,
                "m": graph.m,
                "level_weight": weight,
                "levels": h.levels,
                "edges_per_m": h.edges / max(graph.m, 1),
                "build_s": h.seconds,
                "small_levels": int(small.sum()),
                "small_nodes": int(sizes[small].sum()),
                "max_level_nodes": int(sizes.max()),
                "levels_below": below,
                "passes_below": passes,
                "source": s,
                "upward_settled": r.stats["upward_settled"],
                "cpu_sweep_ms": 1e3 * r.timings["total"],
                "nearfar_steps": ref.iterations,
                **record_fields(rec),
            }
        )
    med = {
        k: float(np.median([r[k] for r in per]))
        for k in ("upward_settled", "cpu_sweep_ms", "nearfar_steps")
    }
    print(
        f"{name:14s} n {graph.n:8d} weight {weight:3d} levels {h.levels:4d} ({int(small.sum())} "
        f"under {small_at} nodes) edges x{h.edges / max(graph.m, 1):4.2f} build "
        f"{h.seconds:6.2f} s  upward {med['upward_settled']:5.0f}  near-far steps "
        f"{med['nearfar_steps']:5.0f}  CPU sweep {med['cpu_sweep_ms']:7.2f} ms"
        + (f"  below cores {below} (grid passes {passes})" if cores else ""),
        flush=True,
    )
    return per


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("hierarchy_levels", main)
