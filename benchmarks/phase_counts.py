"""Phases per solve of every settling criterion, on the benchmark graphs (CPU, no GPU needed).

    python benchmarks/phase_counts.py --graphs-dir ../shared/graphs --out phase_counts.csv

The GPU engine runs exactly the phases of the CPU reference (the GPU tests compare the counts),
so the counts measured here are the device-wide synchronisation steps each criterion needs on
each graph: Martín (settle the minimum), Crauser OUT, Crauser IN, and IN+OUT. Beside them, the
near-far (Δ-stepping) CPU reference's relax steps (its device-wide steps on a GPU) and threshold
raises (buckets), with the Δ that ran (default: Davidson et al.'s 32 · mean weight / mean
out-degree, see ``sssp.cpu.nearfar.default_delta``; ``--delta`` fixes one for every graph).
Graphs: the 15 paper classes (``--sizes``/``--degrees`` pick fewer), every file under
``--graphs-dir`` with at least ``--min-nodes`` nodes, the paper's random weights 1..100
(seeded), and the record's generated graphs named with ``--generated`` (``grid-512``,
``rgg-196k``: ``benchmarks/bench_sssp.py``); the median over ``--sources`` sources.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sssp  # noqa: E402

import sssp  # noqa: E402
from sssp.cpu import solve_cpu  # noqa: E402

CRITERIA = ("martin", "crauser", "crauser-in", "crauser-inout")
SIZES = ("24k", "49k", "98k")
DEGREES = (2, 20, 200, 1000, 2000)


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, required=True, help="CSV to write")
    ap.add_argument(
        "--graphs-dir", type=Path, help="folder of real graphs (*.gz, searched recursively)"
    )
    ap.add_argument("--min-nodes", type=int, default=10_000, help="skip smaller real graphs")
    ap.add_argument("--sources", type=int, default=3, help="sources per graph (median)")
    ap.add_argument("--skip-synthetic", action="store_true", help="leave out the 15 paper classes")
    ap.add_argument(
        "--sizes", nargs="+", default=list(SIZES), help="paper classes' sizes (default all)"
    )
    ap.add_argument(
        "--degrees",
        nargs="+",
        type=int,
        default=list(DEGREES),
        help="paper classes' degrees (default all)",
    )
    ap.add_argument(
        "--delta",
        type=positive_float,
        help="near-far's Δ on every graph (default: Davidson et al.'s rule per graph)",
    )
    ap.add_argument(
        "--generated",
        nargs="+",
        default=[],
        metavar="NAME",
        help="generated graphs of the record, e.g. grid-512 rgg-196k",
    )
    ap.add_argument("--seed", type=int, default=0, help="graph, weight and source seed")
    args = ap.parse_args(argv)
    for name in args.generated:
        try:
            bench_sssp.parse_generated(name)
        except sssp.SSSPError as err:
            ap.error(str(err))
    specs: list[tuple[str, object]] = []
    if not args.skip_synthetic:
        specs += [(f"random-{s}-deg{d}", (s, d)) for s in args.sizes for d in args.degrees]
    if args.graphs_dir:
        specs += [(p.name.split(".")[0], p) for p in sorted(args.graphs_dir.rglob("*.gz"))]
    specs += [(name, name) for name in args.generated]
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "graph",
                "n",
                "m",
                *(f"phases_{c}" for c in CRITERIA),
                "sources",
                "seconds",
                "steps_near-far",
                "buckets_near-far",
                "delta_near-far",
            ]
        )
        for name, spec in specs:
            t0 = time.perf_counter()
            if isinstance(spec, Path):
                graph = sssp.load(spec, weights="random", seed=args.seed)
                if graph.n < args.min_nodes:
                    continue
            elif isinstance(spec, str):
                graph = bench_sssp.generated(spec, args.seed)
            else:
                graph = sssp.generate("random", size=spec[0], degree=spec[1], seed=args.seed)
            rng = np.random.default_rng(args.seed + 1)
            sources = [int(s) for s in rng.integers(0, graph.n, args.sources)]
            counts = [
                int(np.median([solve_cpu(graph, s, algorithm=c).iterations for s in sources]))
                for c in CRITERIA
            ]
            nf = [solve_cpu(graph, s, algorithm="near-far", delta=args.delta) for s in sources]
            steps = int(np.median([r.iterations for r in nf]))
            buckets = int(np.median([r.stats["buckets"] for r in nf]))
            delta = nf[0].stats["delta"]  # the same for every source
            # Near-far's columns come last so that readers of the older file keep their columns.
            w.writerow(
                [
                    name,
                    graph.n,
                    graph.m,
                    *counts,
                    len(sources),
                    f"{time.perf_counter() - t0:.1f}",
                    steps,
                    buckets,
                    f"{delta:.6g}",
                ]
            )
            f.flush()
            print(
                name,
                graph.n,
                graph.m,
                counts,
                f"near-far steps {steps} buckets {buckets} delta {delta:.6g}",
                flush=True,
            )


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("phase_counts", main)
