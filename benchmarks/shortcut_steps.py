"""Near-far's steps and work with shortcut edges to each node's ρ nearest nodes (CPU counts).

    python benchmarks/shortcut_steps.py --graphs-dir G --out OUT.csv t60k COL grid-512 road-1M

A step of near-far waits for the whole device, and on a road or a mesh the steps are about the
hops of the deepest shortest path (``spt_depth.py``), whatever Δ is. Shortcuts
(:func:`sssp.shortcuts.with_shortcuts`: an edge of weight d(u, v) from every node to each of its
ρ nearest) change no distance and cut those hops. This script counts, on the CPU reference
(:func:`sssp.cpu.nearfar.near_far`, the same steps the GPU loops take), per graph, ρ and Δ
(multiples of the default rule of the *original* graph): the edges added, the build's seconds
on this host's cores, the steps, the buckets and the edges relaxed over the original m. With
the record's GPU time and steps beside them (``--record``). Counts only, no GPU times: what a
step with more edges costs on the device is for the device to measure. Every augmented solve's
distances are checked equal to the original's.

Graphs and sources as the record's (``result_path.build``, ``bench_sssp.pick_sources``). Where
the record's graph has 32-bit distances, the shortcuts are capped so that it keeps them
(``sssp.gpu.plan.shortcut_choice``), as the GPU solver caps them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import BIG_NODES, pick_sources  # noqa: E402
from result_path import build  # noqa: E402
from spt_depth import RECORD, record_fields, record_rows, write_rows  # noqa: E402

import kernels  # noqa: E402
import sssp  # noqa: E402
from sssp.config import LaunchConfig  # noqa: E402
from sssp.cpu.nearfar import default_delta, effective_delta, near_far  # noqa: E402
from sssp.gpu.plan import GraphFacts, shortcut_choice  # noqa: E402
from sssp.shortcuts import with_shortcuts  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "m",
    "rho",
    "edges_per_m",
    "build_s",
    "max_shortcut",
    "dist_bits",
    "source",
    "delta_scale",
    "delta",
    "steps",
    "buckets",
    "relaxed_per_m",
    "record_steps",
    "record_gpu_ms",
    "record_gap_ms",
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+", help="record graph names (result_path.build)")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--record", type=Path, default=RECORD, help="the record's CSV")
    ap.add_argument("--rhos", type=int, nargs="+", default=[0, 4, 8, 16, 32])
    ap.add_argument("--scales", type=float, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--sources", type=int, default=5, help="as bench_sssp's --sources")
    ap.add_argument("--big-sources", type=int, default=3, help="as bench_sssp's --big-sources")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    record = record_rows(args.record)
    rows: list[dict] = []
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("."), args.seed)
        if graph.is_float:
            raise sssp.SSSPError(f"{name}: shortcuts take integer weights only")
        rec = record.get(name, {})
        count = args.big_sources if graph.n > BIG_NODES else args.sources
        sources = pick_sources(graph, count, args.seed)
        facts = GraphFacts.of(graph, weight_sum=False)
        base = {s: near_far(graph, s).dist for s in sources}
        for rho in args.rhos:
            _, cap, _ = shortcut_choice(facts, LaunchConfig(shortcuts=rho), "near-far")
            t0 = time.perf_counter()
            g = with_shortcuts(graph, rho, max_weight=cap) if rho else graph
            build_s = time.perf_counter() - t0 if rho else 0.0
            g_bits, _ = kernels.widths_for(g.n, g.max_weight)
            for scale in args.scales:
                delta = int(effective_delta(graph, default_delta(graph) * scale))
                per = []
                for s in sources:
                    r = near_far(g, s, delta=delta)
                    if not np.array_equal(r.dist, base[s]):
                        raise AssertionError(f"{name}, rho {rho}, from {s}: distances differ")
                    row = {
                        "graph": name,
                        "n": graph.n,
                        "m": graph.m,
                        "rho": rho,
                        "edges_per_m": g.m / max(graph.m, 1),
                        "build_s": build_s,
                        "max_shortcut": int(g.max_weight),
                        "dist_bits": g_bits,
                        "source": s,
                        "delta_scale": scale,
                        "delta": delta,
                        "steps": r.iterations,
                        "buckets": r.stats["buckets"],
                        "relaxed_per_m": r.stats["relaxations"] / max(graph.m, 1),
                        **record_fields(rec),
                    }
                    rows.append(row)
                    per.append(row)
                med = {k: float(np.median([r[k] for r in per])) for k in COLUMNS[11:14]}
                print(
                    f"{name:14s} rho {rho:3d} edges x{g.m / max(graph.m, 1):5.2f} "
                    f"({build_s:5.2f} s, {g_bits}-bit) x{scale:<4g} steps {med['steps']:6.0f}  "
                    f"buckets {med['buckets']:5.0f}  relaxed/m {med['relaxed_per_m']:6.2f}",
                    flush=True,
                )
    if args.out:
        write_rows(args.out, COLUMNS, rows)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("shortcut_steps", main)
