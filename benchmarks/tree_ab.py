"""Where a phast solve's predecessor tree is found: the result pass against the tree pass, A/B.

    python benchmarks/tree_ab.py --graphs-dir G --sources 100 --rounds 3 --out OUT.csv

Each round makes one solver with ``EngineSolver.RESULT_PASS_TREE`` off (the tree pass, after a
cleared ``pred``) and one with it on (the result pass pulls each node's predecessor from the
reverse graph's edges, whatever the graph's mean degree: ``PULL_TREE_MAX_MEAN_DEGREE`` is
lifted), in that order, and times back-to-back solves the way a caller makes them
(``r = solver.solve(s)``, the last result held): wall time from the call to the returned
result by ``time.perf_counter``, and the solve's CUDA-event times beside it. Medians over the
sources, in microseconds. Rounds interleave the two, so a noisy host moves both.

Before the timed solves, three of the sources are solved and checked: distances against the CPU
reference's, every tree edge by :func:`sssp.verify.check_tree`.

``phast_probe.py --variants push pull`` measured the host's path to the sweep's launch 15-35 us
slower with the pull (H100, run 164), where a solve timed untouched showed no such difference
(run 169): the probe's own event wrapper around the sweep is part of what it times, for reasons
not found. This script times the solver untouched.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_nearfar import config_for, graphs, phast_sweep  # noqa: E402

import sssp  # noqa: E402
from sssp.cpu.reference import dijkstra  # noqa: E402
from sssp.verify import check_tree  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "config",
    "round",
    "tree",
    "sources",
    "wall_us",
    "gpu_us",
    "loop_us",
    "verified",
)
CHECKED = 3
"""Sources solved and checked before the timed solves."""


def measure(graph: sssp.Graph, sources: list[int], label: str, pull: bool) -> dict:
    """One row of :data:`COLUMNS` (less graph, config and round) with the tree found by the
    result pass (``pull``) or by the tree pass."""
    from sssp.gpu.engine import EngineSolver

    was = EngineSolver.RESULT_PASS_TREE, EngineSolver.PULL_TREE_MAX_MEAN_DEGREE
    EngineSolver.RESULT_PASS_TREE = pull
    EngineSolver.PULL_TREE_MAX_MEAN_DEGREE = float("inf")  # the forms, not the rule between them
    try:
        with (
            phast_sweep(label),
            sssp.Solver(graph, backend="gpu", algorithm="near-far", config=config_for(label)) as sv,
        ):
            tree = sv._gpu._static_stats()["tree"]
            for s in sources[:CHECKED]:
                r = sv.solve(s)
                if not np.array_equal(r.dist, dijkstra(graph, s).dist):
                    raise sssp.SSSPError(f"{graph.name}: wrong distances from {s} ({tree})")
                check_tree(graph, r)
            wall, gpu, loop = [], [], []
            for s in sources:
                t = time.perf_counter()
                r = sv.solve(s)
                wall.append(time.perf_counter() - t)
                gpu.append(r.timings["gpu"])
                loop.append(r.timings["loop"])
    finally:
        EngineSolver.RESULT_PASS_TREE, EngineSolver.PULL_TREE_MAX_MEAN_DEGREE = was
    return {
        "tree": tree,
        "sources": len(sources),
        "wall_us": f"{1e6 * np.median(wall):.1f}",
        "gpu_us": f"{1e6 * np.median(gpu):.1f}",
        "loop_us": f"{1e6 * np.median(loop):.1f}",
        "verified": "yes",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("tree_ab.csv"))
    ap.add_argument("--sources", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--graphs-dir")
    ap.add_argument("--random", nargs="*", default=[], metavar="SIZExDEG")
    ap.add_argument("--generated", nargs="*", default=[], metavar="NAME")
    ap.add_argument("--config", default="phast-x4+core4096+labels", metavar="LABEL")
    args = ap.parse_args()
    with args.out.open("w", newline="") as fh:
        out = csv.DictWriter(fh, COLUMNS)
        out.writeheader()
        for name, make in graphs(args):
            graph = make()
            graph.name = name
            rng = np.random.default_rng(0)
            sources = [int(s) for s in rng.choice(graph.n, args.sources)]
            for rnd in range(args.rounds):
                for pull in (False, True):
                    row = {"graph": name, "n": graph.n, "config": args.config, "round": rnd}
                    row.update(measure(graph, sources, args.config, pull))
                    out.writerow(row)
                    fh.flush()
                    print(" ".join(str(row[c]) for c in COLUMNS), flush=True)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("tree_ab", main)
