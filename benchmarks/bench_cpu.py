"""Time the CPU solvers (SciPy Dijkstra, Martín and Crauser, both variants) on random graphs.

Graphs are generated on the fly: by :mod:`sssp.generators` when it exists, otherwise as a
G(n, m)-style random CSR built here with numpy (every node gets ``degree`` random successors,
weights uniform in 1..100, as the paper's synthetic graphs). Results go to the log (stdout).

Usage::

    python benchmarks/bench_cpu.py                       # 24k nodes, degrees 2 and 20
    python benchmarks/bench_cpu.py --n 49152 --degrees 2 20 200 --sources 5 --skip-martin
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys

import numpy as np

from sssp import Graph
from sssp.cpu import solve_cpu
from sssp.graph import iter_sources
from sssp.verify import check_against

log = logging.getLogger("bench_cpu")


def random_graph(n: int, degree: int, *, max_weight: int = 100, seed: int = 0) -> Graph:
    """A random graph with mean out-degree ``degree`` and weights uniform in ``[1, max_weight]``:
    :func:`sssp.generators.random_graph` (G(n, p)) when available, else ``degree`` random
    successors per node (self-loops and parallel edges possible) built here with numpy."""
    try:  # the project's G(n, p) generator (Nobari et al.'s geometric skips), when present
        from sssp.generators import random_graph as gnp  # type: ignore[import-not-found]
    except ImportError:
        gnp = None
    if gnp is not None:
        try:
            return gnp(n, degree, seed=seed, weight_range=(1, max_weight))
        except TypeError as exc:  # its signature changed: fall back rather than fail
            log.warning("sssp.generators.random_graph unusable (%s); using numpy", exc)
    rng = np.random.default_rng(seed)
    m = n * degree
    indptr = np.arange(0, m + 1, degree, dtype=np.int64)
    indices = rng.integers(0, n, size=m, dtype=np.int32)
    weights = rng.integers(1, max_weight + 1, size=m, dtype=np.int32)
    return Graph(indptr, indices, weights, name=f"random-n{n}-d{degree}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, default=24576, help="nodes (default: 24576, the paper's 24k)")
    p.add_argument("--degrees", type=int, nargs="+", default=[2, 20], help="mean out-degrees")
    p.add_argument("--sources", type=int, default=3, help="random sources per graph")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-martin", action="store_true", help="Martín is O(n^2) on CPU")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)

    runs = [("dijkstra", "successors")]
    algos = ("crauser",) if args.skip_martin else ("martin", "crauser")
    runs += [(a, v) for a in algos for v in ("successors", "predecessors")]
    header = f"{'graph':<22} {'algorithm':<9} {'variant':<13} {'mean s':>10} {'iterations':>11} {'frontier %':>10}"
    log.info(header)
    log.info("-" * len(header))
    for degree in args.degrees:
        g = random_graph(args.n, degree, seed=args.seed)
        g.reverse()  # build (and cache) the reverse graph outside the timings
        sources = list(iter_sources(g, args.sources, seed=args.seed))
        refs = {s: solve_cpu(g, s, algorithm="dijkstra") for s in sources}
        for algorithm, variant in runs:
            times, iters, shares = [], [], []
            for s in sources:
                r = solve_cpu(g, s, algorithm=algorithm, variant=variant)
                check_against(refs[s].dist, r)
                times.append(r.timings["total"])
                iters.append(r.iterations)
                if "mean_frontier_share" in r.stats:
                    shares.append(100 * r.stats["mean_frontier_share"])
            log.info(
                "%-22s %-9s %-13s %10.4f %11.1f %10s",
                g.name,
                algorithm,
                variant,
                statistics.fmean(times),
                statistics.fmean(iters),
                f"{statistics.fmean(shares):.3f}" if shares else "-",
            )
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_cpu", main)
