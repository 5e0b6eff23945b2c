"""The measurement behind the CPU default (:func:`sssp.cpu.default_algorithm`): one core's time
per source of SciPy's Dijkstra and of near-far on generated and real graphs.

Times are CPU seconds of the calling thread (``time.thread_time``), the best of three rounds of
the same sources, so that other work on a shared machine changes them little. SciPy's matrix
(the graph's lightest edge per pair) is built once, outside the timing, as a Solver keeps it.
Every near-far distance is checked against SciPy's. Prints CSV on stdout, one row per graph,
with the pick of the rule and its cost over the faster of the two; a summary goes to stderr.

Usage::

    python benchmarks/cpu_default.py > benchmarks/results/cpu/cpu_default_rule.csv
    python benchmarks/cpu_default.py --quick        # the generated graphs only
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

GENERATED = [
    ("random", "24k", 2),
    ("random", "24k", 20),
    ("random", "24k", 200),
    ("random", "98k", 2),
    ("random", "98k", 20),
    ("random", "98k", 200),
    ("grid", "98k", None),
    ("geometric", "98k", 20),
    ("martin", "24k", 20),
]
FIELDS = [
    "graph",
    "weights",
    "n",
    "m",
    "mean_degree",
    "unit_weights",
    "scipy_ms",
    "nearfar_ms",
    "nearfar_over_scipy",
    "rule",
    "faster",
    "rule_cost",
]


def per_source(fn, sources, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.thread_time()
        for s in sources:
            fn(s)
        best = min(best, (time.thread_time() - t) / len(sources))
    return best


def measure(g, name: str, weights: str, k: int) -> dict:
    from scipy.sparse.csgraph import dijkstra

    from sssp.cpu import default_algorithm
    from sssp.cpu.nearfar import _warm, near_far
    from sssp.cpu.reference import min_weight_csr

    sources = [int(s) for s in np.random.default_rng(0).integers(0, g.n, k)]
    mat = min_weight_csr(g)
    _warm(g.weights.dtype)
    for s in sources[:2]:
        np.testing.assert_array_equal(near_far(g, s).dist_float, dijkstra(mat, indices=s))
    t_scipy = per_source(lambda s: dijkstra(mat, indices=s, return_predecessors=True), sources)
    t_nf = per_source(lambda s: near_far(g, s), sources)
    f = g.features()
    rule = default_algorithm(g)
    picked = t_nf if rule == "near-far" else t_scipy
    return {
        "graph": name,
        "weights": weights,
        "n": g.n,
        "m": g.m,
        "mean_degree": round(f.mean_degree, 2),
        "unit_weights": f.min_weight == f.max_weight,
        "scipy_ms": round(1e3 * t_scipy, 3),
        "nearfar_ms": round(1e3 * t_nf, 3),
        "nearfar_over_scipy": round(t_nf / t_scipy, 3),
        "rule": rule,
        "faster": "near-far" if t_nf < t_scipy else "dijkstra",
        "rule_cost": round(picked / min(t_nf, t_scipy), 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--graphs",
        type=Path,
        default=Path(
            os.environ.get(
                "SSSP_GRAPHS_DIR", Path(__file__).resolve().parents[2] / "shared" / "graphs"
            )
        ),
    )
    p.add_argument("--sources", type=int, default=8)
    p.add_argument(
        "--min-nodes", type=int, default=2000, help="skip smaller real graphs (default 2000)"
    )
    p.add_argument("--quick", action="store_true", help="the generated graphs only")
    args = p.parse_args(argv)

    import sssp

    out = csv.DictWriter(sys.stdout, FIELDS)
    out.writeheader()
    rows = []

    def emit(row: dict) -> None:
        rows.append(row)
        out.writerow(row)
        sys.stdout.flush()

    for kind, size, degree in GENERATED:
        g = sssp.generate(kind, size=size, seed=0, **({} if degree is None else {"degree": degree}))
        emit(
            measure(
                g,
                f"{kind} {size}" + ("" if degree is None else f" x {degree}"),
                "generated",
                args.sources,
            )
        )
    if not args.quick:
        files = sorted(f for f in args.graphs.rglob("*.gz")) if args.graphs.is_dir() else []
        if not files:
            print(
                f"cpu_default: no graphs under {args.graphs}; generated graphs only",
                file=sys.stderr,
            )
        for path in files:
            g = sssp.load(path)
            if g.n < args.min_nodes:
                continue
            emit(measure(g, path.name, "file", args.sources))
            f = g.features()
            if (
                not g.is_float and f.min_weight == f.max_weight
            ):  # unweighted: also the paper's weights
                emit(
                    measure(
                        sssp.load(path, weights="random", seed=0),
                        path.name,
                        "random 1-100",
                        args.sources,
                    )
                )
    costs = [r["rule_cost"] for r in rows]
    print(
        f"cpu_default: {len(rows)} graphs; the rule costs {100 * (statistics.mean(costs) - 1):.1f} % on "
        f"average over the faster algorithm, at most {100 * (max(costs) - 1):.0f} %; "
        f"always SciPy {100 * (statistics.mean(r['scipy_ms'] / min(r['scipy_ms'], r['nearfar_ms']) for r in rows) - 1):.1f} %, "
        f"always near-far {100 * (statistics.mean(r['nearfar_ms'] / min(r['scipy_ms'], r['nearfar_ms']) for r in rows) - 1):.1f} %",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("cpu_default", main)
