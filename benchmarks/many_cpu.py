"""The CPU many-source path: time per source of ``solve(g, sources)`` with one worker thread
and with one per core, for near-far (compiled, releases the GIL) and SciPy's Dijkstra (holds
it), on generated graphs.

Reports the wall time per source and the process's CPU time per source (all threads): with
perfect scaling the wall time falls by the number of workers and the CPU time stays put; the
machine's load average is printed beside each row, since other work on the cores takes its
share of the wall time. Every table is checked against SciPy's. CSV on stdout.

Usage::

    python benchmarks/many_cpu.py > benchmarks/results/cpu/many_cpu.csv
    python benchmarks/many_cpu.py --sources 32 --graphs "random 24k x 20"
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

GRAPHS = {
    "random 24k x 2": ("random", "24k", 2),
    "random 24k x 20": ("random", "24k", 20),
    "random 24k x 200": ("random", "24k", 200),
    "grid 98k": ("grid", "98k", None),
    "random 98k x 20": ("random", "98k", 20),
}
FIELDS = [
    "graph",
    "n",
    "m",
    "k",
    "algorithm",
    "workers",
    "wall_ms_per_source",
    "cpu_ms_per_source",
    "speedup_vs_one_worker",
    "load_average",
    "verified",
]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sources", type=int, default=64)
    p.add_argument("--graphs", nargs="*", default=list(GRAPHS), choices=list(GRAPHS))
    p.add_argument("--rounds", type=int, default=3, help="best of (default 3)")
    args = p.parse_args(argv)

    from scipy.sparse.csgraph import dijkstra

    import sssp
    from sssp.cpu.many import CPURows, available_cores
    from sssp.cpu.reference import min_weight_csr

    out = csv.DictWriter(sys.stdout, FIELDS)
    out.writeheader()
    cores = available_cores()
    for name in args.graphs:
        kind, size, degree = GRAPHS[name]
        g = sssp.generate(kind, size=size, seed=0, **({} if degree is None else {"degree": degree}))
        src = np.random.default_rng(0).integers(0, g.n, args.sources).astype(np.int64)
        want = dijkstra(min_weight_csr(g), indices=src)
        for algorithm in ("near-far", "dijkstra"):
            one = None
            for workers in sorted({1, cores}):
                if algorithm == "dijkstra" and workers > 1:
                    continue  # SciPy's Dijkstra runs on one worker whatever is asked
                engine = CPURows(g, algorithm=algorithm, workers=workers)
                dist = np.empty((src.size, g.n), dtype=np.int64)
                engine.fill(
                    src[:2], dist[:2], None, None, lambda c: None
                )  # threads and compiled code up
                wall = cpu = float("inf")
                for _ in range(args.rounds):
                    t, c = time.perf_counter(), time.process_time()
                    engine.fill(src, dist, None, None, lambda c: None)
                    wall = min(wall, time.perf_counter() - t)
                    cpu = min(cpu, time.process_time() - c)
                engine.close()
                fdist = np.where(dist == sssp.UNREACHABLE, np.inf, dist)
                one = wall if one is None else one
                out.writerow(
                    {
                        "graph": name,
                        "n": g.n,
                        "m": g.m,
                        "k": src.size,
                        "algorithm": algorithm,
                        "workers": workers,
                        "wall_ms_per_source": round(1e3 * wall / src.size, 3),
                        "cpu_ms_per_source": round(1e3 * cpu / src.size, 3),
                        "speedup_vs_one_worker": round(one / wall, 2),
                        "load_average": round(os.getloadavg()[0], 2),
                        "verified": bool(np.array_equal(fdist, want)),
                    }
                )
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("many_cpu", main)
