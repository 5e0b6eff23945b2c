"""Engine 2's loop mechanisms and structural knobs against each other, per phase.

Run on a CUDA host::

    python benchmarks/bench_engine.py --out engine.csv [--graphs-dir DIR] [--sources 5]

For every graph and every variant of the launch configuration (loop mechanism, block size, blocks
per multiprocessor, block-local limit, lanes): a warm-up solve, then the median over ``--sources``
sources of the CUDA-event time of a whole solve (initialisation, phases, predecessors, copy of
distances and predecessors to the host), the phase count, and the cost per phase (loop time /
phases). Every answer is checked against SciPy's Dijkstra. This is the measurement behind the
default configuration and the structural search space of the tuner; ``bench_sssp.py`` is the
record against the CPU anchors.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu.reference import dijkstra


def variants(dense: bool) -> list[tuple[str, LaunchConfig]]:
    lanes_set = (8, 32) if dense else (1, 4)
    out = [("legacy-256", LaunchConfig(KernelConfig(256, "N", 32 if dense else 1), loop="legacy"))]
    for lanes in lanes_set:
        out += [
            (f"host-256-x{lanes}", LaunchConfig(KernelConfig(256, "N", lanes), loop="host")),
            (f"graph-256-x{lanes}", LaunchConfig(KernelConfig(256, "N", lanes), loop="graph")),
        ]
        for bs, per_sm in ((256, 2), (1024, 1)):
            for local in (0, 1024, 8192):
                out.append(
                    (
                        f"persistent-{bs}x{per_sm}-x{lanes}-local{local}",
                        LaunchConfig(
                            KernelConfig(bs, "N", lanes),
                            loop="persistent",
                            blocks_per_sm=per_sm,
                            local_limit=local,
                        ),
                    )
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", default="bench_engine.csv")
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--graphs-dir")
    ap.add_argument("--budget-seconds", type=float, default=400)
    ap.add_argument(
        "--only", nargs="*", help="graph names (file stems or random-SIZE-degD) to keep"
    )
    args = ap.parse_args()
    t_start = time.perf_counter()
    graphs: list[tuple[str, object]] = [
        ("random-24k-deg2", ("24k", 2)),
        ("random-98k-deg2", ("98k", 2)),
        ("random-98k-deg20", ("98k", 20)),
        ("random-98k-deg200", ("98k", 200)),
        ("random-24k-deg200", ("24k", 200)),
        ("random-98k-deg2000", ("98k", 2000)),
    ]
    if args.graphs_dir:
        graphs += [(p.name.split(".")[0], p) for p in sorted(Path(args.graphs_dir).rglob("*.gz"))]
    if args.only:
        graphs = [g for g in graphs if g[0] in args.only]
    rows = []
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["graph", "n", "m", "variant", "config", "phases", "ms", "phase_us", "verified"])
        for name, spec in graphs:
            if time.perf_counter() - t_start > args.budget_seconds:
                print(f"# budget spent; stopping before {name}", flush=True)
                break
            if isinstance(spec, Path):
                graph = sssp.load(spec, weights="random", seed=0)
            else:
                graph = sssp.generate("random", size=spec[0], degree=spec[1], seed=0)
            rng = np.random.default_rng(1)
            sources = [int(s) for s in rng.integers(0, graph.n, args.sources)]
            dense = graph.m / graph.n > 50
            refs = {s: dijkstra(graph, s).dist for s in sources[: 2 if dense else len(sources)]}
            for label, cfg in variants(dense):
                try:
                    with sssp.Solver(graph, backend="gpu", config=cfg) as solver:
                        solver.solve(sources[0])
                        times, phases, loop = [], [], []
                        ok = True
                        for s in sources:
                            r = solver.solve(s)
                            times.append(r.timings.get("gpu", r.timings["total"]))
                            loop.append(
                                r.timings.get("loop", r.timings.get("gpu", r.timings["total"]))
                            )
                            phases.append(r.iterations)
                            if s in refs:
                                ok &= bool(np.array_equal(r.dist, refs[s]))
                except Exception as err:  # one broken variant must not hide the others
                    print(f"{name:22s} {label:34s} FAILED: {type(err).__name__}: {err}", flush=True)
                    w.writerow(
                        [name, graph.n, graph.m, label, str(cfg), "", "", "", f"error: {err}"]
                    )
                    continue
                ms = 1e3 * float(np.median(times))
                ph = float(np.median(phases))
                per = 1e6 * float(np.median(loop)) / max(ph, 1)
                row = [name, graph.n, graph.m, label, str(cfg), ph, f"{ms:.4f}", f"{per:.3f}", ok]
                w.writerow(row)
                f.flush()
                rows.append(row)
                print(
                    f"{name:22s} {label:34s} phases {ph:7.0f}  {ms:9.3f} ms  {per:8.2f} us/phase  ok={ok}",
                    flush=True,
                )


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_engine", main)
