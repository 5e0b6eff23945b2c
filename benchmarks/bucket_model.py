"""What near-far would cost with one device-wide step per bucket instead of one per wave (a model).

    python benchmarks/bucket_model.py --graphs-dir G --out OUT.csv t60k COL delaunay_n14 grid-512

Near-far runs a bucket (the nodes below the threshold T) as waves: the nodes lowered by one wave
are relaxed by the next, until none below T is left; then T rises. The cluster loop pays a step
for every wave (scan, walk, the cluster barrier: ~3.5 µs on the H200, kernels/README.md). A loop
in which every block keeps relaxing what falls below T, wherever its owner is, and the blocks meet
only when nothing below T is left (``LaunchConfig(loop="cluster", fuse=2)``) pays a step per
bucket and, for each wave, the latency of a hop: a warp pops a node, relaxes its edges, and the
nodes that fall are queued for other warps (~0.3 µs resident, the fused pops of run 39). A wave
larger than the warps that pop runs in several rounds.

This script counts, on the CPU, what decides both costs: per source and Δ (multiples of the
default rule, :func:`sssp.cpu.nearfar.default_delta`), the waves (the steps of the unfused loop;
checked equal to the CPU reference's count), the buckets, the hop rounds (each wave's nodes over
``--warps``, rounded up) and the edges relaxed over m (the work). Beside them it prints the two
estimates, ``waves x step_us`` and ``buckets x step_us + hop_rounds x hop_us``, with the record's
GPU and GAP times of the graph (``--record``). These are a model with assumed costs, not
measurements: only the counts are exact. Graphs are built as the record builds them
(``result_path.build``) from the record's sources (``bench_sssp.pick_sources``). No GPU needed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import BIG_NODES, pick_sources  # noqa: E402
from result_path import build  # noqa: E402
from spt_depth import RECORD, record_rows, write_rows  # noqa: E402

import sssp  # noqa: E402
from sssp.cpu.nearfar import default_delta, effective_delta, near_far  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "m",
    "source",
    "delta_scale",
    "delta",
    "waves",
    "buckets",
    "hop_rounds",
    "relaxed_per_m",
    "model_wave_ms",
    "model_bucket_ms",
    "record_gpu_ms",
    "record_gap_ms",
)


def _counts(indptr, indices, weights, source, delta, warps):  # pragma: no cover - compiled
    """(waves, buckets, hop rounds, edges relaxed) of near-far from ``source`` with integer
    ``delta``: the CPU reference's loop (sssp/cpu/nearfar.py), its far pile kept as nodes whose
    stale entries are dropped when the threshold rises."""
    n = indptr.size - 1
    inf = np.int64(1) << 62
    dist = np.full(n, inf, np.int64)
    dist[source] = 0
    frontier = np.empty(n, np.int32)
    fdist = np.empty(n, np.int64)  # the distance each frontier node pushes (as the reference)
    improved = np.empty(n, np.int32)
    stamp = np.zeros(n, np.int64)  # the wave that last lowered a node (waves start at 1)
    far = np.empty(n + 1, np.int32)
    far_d = np.empty(n + 1, np.int64)
    far[0] = source
    far_d[0] = 0
    nfar = 1
    nf = 0
    threshold = np.int64(0)
    waves = buckets = rounds = relaxed = 0
    while True:
        if nf == 0:
            live = 0
            dmin = inf
            for i in range(nfar):  # an entry whose node has improved since is stale
                if dist[far[i]] == far_d[i]:
                    far[live] = far[i]
                    far_d[live] = far_d[i]
                    live += 1
                    dmin = min(dmin, far_d[i])
            nfar = live
            if nfar == 0:
                break
            threshold = (dmin // delta) * delta + delta
            buckets += 1
            keep = 0
            for i in range(nfar):
                if far_d[i] < threshold:
                    frontier[nf] = far[i]
                    fdist[nf] = far_d[i]
                    nf += 1
                else:
                    far[keep] = far[i]
                    far_d[keep] = far_d[i]
                    keep += 1
            nfar = keep
        waves += 1
        rounds += (nf + warps - 1) // warps
        count = 0
        for i in range(nf):
            u = frontier[i]
            du = fdist[i]
            relaxed += indptr[u + 1] - indptr[u]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd
                    if stamp[v] != waves:
                        stamp[v] = waves
                        improved[count] = v
                        count += 1
        nf = 0
        for j in range(count):
            v = improved[j]
            if dist[v] < threshold:
                frontier[nf] = v
                fdist[nf] = dist[v]
                nf += 1
            else:
                if nfar == far.size:
                    far = np.concatenate((far, np.empty(far.size, np.int32)))
                    far_d = np.concatenate((far_d, np.empty(far_d.size, np.int64)))
                far[nfar] = v
                far_d[nfar] = dist[v]
                nfar += 1
    return waves, buckets, rounds, relaxed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+", help="record graph names (result_path.build)")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--record", type=Path, default=RECORD, help="the record's CSV (GPU, GAP ms)")
    ap.add_argument("--scales", type=float, nargs="+", default=[0.5, 1, 2, 4, 8, 16])
    ap.add_argument("--sources", type=int, default=5, help="as bench_sssp's --sources")
    ap.add_argument("--big-sources", type=int, default=3, help="as bench_sssp's --big-sources")
    ap.add_argument("--warps", type=int, default=512, help="warps that pop (16 blocks of 1024)")
    ap.add_argument("--step-us", type=float, default=3.5, help="assumed cost of a cluster step")
    ap.add_argument("--hop-us", type=float, default=0.35, help="assumed cost of a hop round")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    from numba import njit

    counts = njit(cache=False, nogil=True)(_counts)
    record = record_rows(args.record)
    rows = []
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("."), args.seed)
        if graph.is_float:
            raise sssp.SSSPError(f"{name}: the model counts integer weights only")
        weights = graph.weights.astype(np.int64)
        rec = record.get(name, {})
        gpu_ms = float(rec["gpu_ms"]) if rec else float("nan")
        gap_ms = float(rec["gap_ms"]) if rec and rec.get("gap_ms") else float("nan")
        count = args.big_sources if graph.n > BIG_NODES else args.sources
        sources = pick_sources(graph, count, args.seed)
        for scale in args.scales:
            delta = int(effective_delta(graph, default_delta(graph) * scale))
            per = []
            for s in sources:
                waves, buckets, rounds, relaxed = counts(
                    graph.indptr, graph.indices, weights, s, delta, args.warps
                )
                ref = near_far(graph, s, delta=delta)
                if (waves, buckets) != (ref.iterations, ref.stats["buckets"]):
                    raise AssertionError(
                        f"{name} from {s}: {waves} waves, {buckets} buckets; the reference "
                        f"{ref.iterations}, {ref.stats['buckets']}"
                    )
                row = {
                    "graph": name,
                    "n": graph.n,
                    "m": graph.m,
                    "source": s,
                    "delta_scale": scale,
                    "delta": delta,
                    "waves": waves,
                    "buckets": buckets,
                    "hop_rounds": rounds,
                    "relaxed_per_m": relaxed / max(graph.m, 1),
                    "model_wave_ms": waves * args.step_us * 1e-3,
                    "model_bucket_ms": (buckets * args.step_us + rounds * args.hop_us) * 1e-3,
                    "record_gpu_ms": gpu_ms,
                    "record_gap_ms": gap_ms,
                }
                rows.append(row)
                per.append(row)
            med = {k: float(np.median([r[k] for r in per])) for k in COLUMNS[6:12]}
            print(
                f"{name:14s} x{scale:<4g} Δ={delta:<7d} waves {med['waves']:6.0f}  buckets "
                f"{med['buckets']:5.0f}  hop rounds {med['hop_rounds']:6.0f}  relaxed/m "
                f"{med['relaxed_per_m']:5.2f}  model: a step a wave {med['model_wave_ms']:6.3f} "
                f"ms, a step a bucket {med['model_bucket_ms']:6.3f} ms  (record GPU {gpu_ms:g}, "
                f"GAP {gap_ms:g})",
                flush=True,
            )
    if args.out:
        write_rows(args.out, COLUMNS, rows)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bucket_model", main)
