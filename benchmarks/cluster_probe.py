"""The cluster loop with fewer, non-resident blocks against each graph's tuned layout.

    python benchmarks/cluster_probe.py --graphs-dir G --out OUT.csv 4elt cs4 cti delaunay_n15 t60k

A step of the cluster loop costs 3.1-3.5 us on the H200 with 16 blocks, a microsecond of it the
cluster barrier (``nearfar_cluster_run32.csv``), and on the record's roads and meshes the steps
are already within 1.2-1.6x of the shortest-path tree's depth (``benchmarks/spt_depth.py``): what
is left is the cost of a step. The plan picks the fewest blocks whose shared memory holds the
graph itself (``kernels.cluster_layout``), so a mesh of 15 000 nodes runs on 8 blocks and pays
a cluster-wide barrier each step, although one block's shared memory holds its distances. This
probe measures that choice against clusters of 1, 2 and 4 blocks that keep only the distances
in shared memory and read the rows from global memory (L2), for each graph's tuned near-far
configuration and Δ otherwise unchanged (fusion off in the forced rows).

Per graph and layout: one warm-up solve, then ``--repeat`` solves from each of the record's
sources (``bench_sssp.pick_sources``), wall (perf_counter around the call) and GPU (CUDA events)
medians, steps and us a step of the last solve, every answer compared with SciPy's. A layout
whose distances do not fit the blocks' shared memory is skipped with a line.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from dataclasses import replace
from pathlib import Path
from unittest import mock

import kernels
import sssp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import pick_sources  # noqa: E402
from result_path import build, references  # noqa: E402
from wide_probe import run  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "m",
    "config",
    "blocks",
    "resident",
    "delta",
    "loop",
    "gpu_ms",
    "wall_ms",
    "steps",
    "us_per_step",
    "verified",
)


def distances_only(blocks: int):
    """A stand-in for :func:`kernels.cluster_layout` that places the graph on ``blocks`` blocks
    keeping only the distances in shared memory (``mb`` = 0), None when they do not fit."""

    def layout(degrees, smem_per_block, *, lq=0, **_):
        fits = kernels.cluster_smem_bytes(len(degrees), blocks, lq=lq) <= smem_per_block
        return (blocks, 0) if fits else None

    return layout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+", help="record graph names (result_path.build)")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/sssp-result-path"))
    ap.add_argument("--blocks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    bad = [b for b in args.blocks if b not in kernels.CLUSTER_SIZES]
    if bad:
        ap.error(f"--blocks {bad[0]}: use cluster sizes {kernels.CLUSTER_SIZES}")
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for name in args.graphs:
        first = len(rows)
        t = time.perf_counter()
        graph = build(name, args.graphs_dir, None, args.cache_dir, args.seed)
        sources = pick_sources(graph, args.sources, args.seed)
        refs = references(graph, name, sources, args.cache_dir)
        print(f"{name}: n={graph.n} m={graph.m} ready in {time.perf_counter() - t:.1f} s")
        with sssp.Solver(graph, backend="gpu", tuned=True) as solver:
            tuned = run(name, graph, solver, sources, refs, args.repeat)
            probe = solver.solve(sources[0])
        stats = probe.stats
        rows.append(
            {
                **tuned,
                "config": "tuned",
                "blocks": stats.get("cluster_blocks", 0),
                "resident": stats.get("cluster_resident", ""),
            }
        )
        if probe.algorithm != "near-far" or stats.get("loop") != "cluster":
            print(f"  {name}: its tuned solve is not near-far on the cluster loop: no probe")
            print("  " + "  ".join(f"{k}={rows[-1].get(k, '')}" for k in COLUMNS), flush=True)
            continue
        config = replace(probe.config, fuse=False, cluster=0)
        for blocks in args.blocks:
            with mock.patch.object(kernels, "cluster_layout", distances_only(blocks)):
                with sssp.Solver(
                    graph, backend="gpu", algorithm="near-far", config=config, delta=stats["delta"]
                ) as solver:
                    if solver.solve(sources[0]).stats.get("loop") != "cluster":
                        print(f"  {name}: the distances do not fit {blocks} block(s): skipped")
                        continue
                    row = run(name, graph, solver, sources, refs, args.repeat)
            rows.append({**row, "config": "distances only", "blocks": blocks, "resident": False})
        for row in rows[first:]:
            print("  " + "  ".join(f"{k}={row.get(k, '')}" for k in COLUMNS), flush=True)
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    bad_rows = [r["graph"] for r in rows if r["verified"] != "yes"]
    if bad_rows:
        print(f"cluster_probe: not equal to SciPy: {', '.join(bad_rows)}", file=sys.stderr)
    return 1 if bad_rows else 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("cluster_probe", main)
