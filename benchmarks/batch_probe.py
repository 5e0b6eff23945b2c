"""Many sources on one graph, each way the batch kernel can run them: time per source of
``EngineSolver.solve_rows`` (no predecessors) with the cluster loop's lanes (a launch per
source, the path before the batch kernel) and with the batch kernel at each cluster size that
holds the distances and each block size, with and without local work. Rows are checked: every
row of every way equal to the first way's, and a sample of rows equal to SciPy's.

    python benchmarks/batch_probe.py --graphs-dir G random-24k-deg2 t60k [--k 512] [--csv F]

Prints a line per way: device ms per source (CUDA events, first command to last row in host
memory) and wall ms per source (the ``solve_rows`` call), each the median of three batches
after one warm-up batch, and the batch layout.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_path import build, references  # noqa: E402


def timed(solver, sources, out, repeat: int = 3) -> tuple[float, float]:
    solver.solve_rows(sources[: min(len(sources), 64)], out[:64])  # warm: stagings, module
    dev, wall = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        dev.append(solver.solve_rows(sources, out))
        wall.append(time.perf_counter() - t0)
    k = len(sources)
    return 1e3 * float(np.median(dev)) / k, 1e3 * float(np.median(wall)) / k


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--k", type=int, default=512)
    ap.add_argument("--blocks", default="256,512,1024")
    ap.add_argument("--clusters", default=",".join(str(c) for c in (1, 2, 4, 8, 16)))
    ap.add_argument("--no-lanes", action="store_true", help="leave out the lanes' way")
    ap.add_argument(
        "--streams", default="", help="batch streams to try, e.g. 1,2 (default: the solver's)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="rounds over the ways (A/B order)")
    ap.add_argument("--sample", type=int, default=8, help="rows checked against SciPy")
    ap.add_argument("--csv", type=Path)
    args = ap.parse_args(argv)
    from sssp.config import LaunchConfig
    from sssp.gpu import device_info
    from sssp.gpu.engine import EngineSolver
    from sssp.tuned import resolve_choice

    blocks = [int(b) for b in args.blocks.split(",")]
    clusters = [int(c) for c in args.clusters.split(",")]
    rows_out = []
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("/tmp"), 0)
        algorithm, delta, cfg, _, _ = resolve_choice(graph, device_info(0))
        if algorithm != "near-far":  # the batch kernel runs near-far: the tuned Δ of near-far
            algorithm, cfg = "near-far", LaunchConfig(loop="cluster")
        has_edges = np.flatnonzero(graph.out_degree() > 0)
        sources = np.resize(has_edges[:: max(1, has_edges.size // args.k)], args.k)
        out = np.empty((args.k, graph.n), np.int64)
        ways = [] if args.no_lanes else [("lanes", None, None, cfg.fuse, 0)]
        for fuse in sorted({False, cfg.fuse}):
            for c in clusters:
                for b in blocks:
                    for st in [int(x) for x in args.streams.split(",") if x] or [0]:
                        label = f"batch c{c} b{b}{' fused' if fuse else ''}"
                        ways.append((label + (f" streams {st}" if st else ""), c, b, fuse, st))
        ways = ways * args.repeat
        first = None
        sample = sources[:: max(1, args.k // args.sample)][: args.sample]
        refs = references(graph, name, [int(s) for s in sample], Path("/tmp"))
        for label, c, b, fuse, st in ways:
            config = replace(cfg, fuse=fuse)
            with EngineSolver(graph, algorithm="near-far", config=config, delta=delta) as s:
                if c is None:
                    s._batch = "the probe's lanes"
                    detail = f"{len(s.lanes())} lanes, cluster {s.cluster}"
                else:
                    s.batch_options = {"cluster": c, "block": b}
                    try:
                        batch = s.batch()
                    except Exception as err:  # noqa: BLE001 - a size that does not hold the graph
                        print(f"PROBE {name} {label}: {err}")
                        continue
                    if batch is None:
                        print(f"PROBE {name} {label}: {s._batch}")
                        continue
                    detail = batch.detail
                    if st:
                        batch.streams = batch.streams[:st]
                dev, wall = timed(s, sources, out)
            if first is None:
                first = out.copy()
                for src in sample:
                    i = int(np.flatnonzero(sources == src)[0])
                    ref = refs[int(src)]
                    assert np.array_equal(out[i], ref), (name, label, int(src))
            else:
                assert np.array_equal(out, first), (name, label)
            print(
                f"PROBE {name} n={graph.n} {label}: device {dev:.4f} wall {wall:.4f} ms/source | {detail}"
            )
            rows_out.append(
                {
                    "graph": name,
                    "n": graph.n,
                    "m": graph.m,
                    "k": args.k,
                    "way": label,
                    "device_ms_per_source": dev,
                    "wall_ms_per_source": wall,
                    "detail": detail,
                }
            )
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows_out[0]))
            w.writeheader()
            w.writerows(rows_out)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("batch_probe", main)
