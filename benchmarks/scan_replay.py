"""How a near-far step of the cluster loop finds its work: the active bits its scan reads, replayed
on the CPU.

    python benchmarks/scan_replay.py --graphs-dir G --out OUT.csv t60k delaunay_n14 4elt fe_pwt

The cluster loop (``kernels/sssp_cluster.cu``) keeps one "active" bit per node and slot; every
step each block reads its bit words, one word a thread, and a thread walks the set bits of its
word one after another (each a distance read, a comparison with the threshold, the node's row
and the list entry). So the block waits, in every step, for the thread whose word holds the most
active nodes. This replays near-far's steps as the kernel takes them (the nodes below the
threshold relax their edges, lowered nodes become active, the others stay active, a raise when
nothing active is below the threshold) and counts, per step: the active nodes, those below the
threshold (the list), and per block the active nodes and the fullest word, for the interleaved
placement (node v in block v % C, slot v / C: the unfused loop) and the band placement of the
fused loop (runs of a reverse Cuthill-McKee order, ``kernels.cluster_placement``). Medians and
90th percentiles over the steps; the fullest block's numbers per step.

Graphs, weights, sources and Δ as the benchmark record has them (``result_path.build``,
``bench_sssp.pick_sources``, the record's first source and its ``stats["delta"]``), C = 16 blocks.
The replay's steps differ from the GPU's (the GPU's list has a capacity, and its relaxations
within a step race); the step counts stand beside the record's. No GPU is needed.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import pick_sources  # noqa: E402
from result_path import build  # noqa: E402

import kernels  # noqa: E402
from sssp.bands import band_order  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "layout",
    "source",
    "delta",
    "steps",
    "record_steps",
    "active_median",
    "listed_median",
    "block_active_median",
    "block_listed_median",
    "fullest_word_median",
    "fullest_word_p90",
)
DETAIL = Path(__file__).resolve().parent / "results" / "h200" / "sssp_vs_boost_detail.csv"


def record_rows() -> dict[str, dict]:
    with DETAIL.open() as f:
        next(f)  # the run's '#' line
        return {r["graph"]: r for r in csv.DictReader(f)}


def replay(graph, source: int, delta: int, block: np.ndarray, word: np.ndarray) -> np.ndarray:
    """Per step: (active, listed, the fullest block's active and listed, the fullest word)."""
    indptr, indices = graph.indptr, graph.indices
    weights = graph.weights.astype(np.int64)
    n = graph.n
    inf = np.iinfo(np.int64).max
    dist = np.full(n, inf, np.int64)
    dist[source] = 0
    active = np.zeros(n, bool)
    active[source] = True
    threshold = delta
    blocks = int(block.max()) + 1
    key = block.astype(np.int64) * (int(word.max()) + 1) + word
    rows = []
    while (act := np.flatnonzero(active)).size:
        listed = act[dist[act] < threshold]
        rows.append(
            (
                act.size,
                listed.size,
                np.bincount(block[act], minlength=blocks).max(),
                np.bincount(block[listed], minlength=blocks).max() if listed.size else 0,
                np.unique(key[act], return_counts=True)[1].max(),
            )
        )
        active[listed] = False
        starts, ends = indptr[listed], indptr[listed + 1]
        if listed.size:
            edges = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])
            tails = np.repeat(listed, ends - starts)
            cand = dist[tails] + weights[edges]
            heads = indices[edges]
            order = np.argsort(cand, kind="stable")
            heads, first = np.unique(heads[order], return_index=True)
            best = cand[order][first]
            lower = best < dist[heads]
            dist[heads[lower]] = best[lower]
            active[heads[lower]] = True
        act = np.flatnonzero(active)
        if act.size and not dist[act].min() < threshold:
            threshold = (dist[act].min() // delta + 1) * delta
        if len(rows) > 100 * n:
            raise RuntimeError("no end: the replay is wrong")
    return np.array(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--blocks", type=int, default=16)
    args = ap.parse_args(argv)
    record = record_rows()
    out = []
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("/tmp"), 0)
        row = record[name]
        delta = int(json.loads(row["stats"])["delta"])
        source = pick_sources(graph, int(row["sources"]), 0)[0]
        nodes = np.arange(graph.n)
        place, _ = kernels.cluster_placement(band_order(graph), args.blocks)
        layouts = {
            "interleaved": (nodes % args.blocks, (nodes // args.blocks) >> 5),
            "bands": (place >> 16, (place & 0xFFFF) >> 5),
        }
        for layout, (block, word) in layouts.items():
            r = replay(graph, source, delta, block, word)
            med = lambda c, r=r: float(np.median(r[:, c]))  # noqa: E731
            out.append(
                {
                    "graph": name,
                    "n": graph.n,
                    "layout": layout,
                    "source": source,
                    "delta": delta,
                    "steps": len(r),
                    "record_steps": row["phases"],
                    "active_median": med(0),
                    "listed_median": med(1),
                    "block_active_median": med(2),
                    "block_listed_median": med(3),
                    "fullest_word_median": med(4),
                    "fullest_word_p90": float(np.percentile(r[:, 4], 90)),
                }
            )
            print(
                f"{name:14s} {layout:11s} steps {len(r):5d} (record {row['phases']:>5s})  "
                f"fullest block: {med(2):4.0f} active, {med(3):4.0f} listed  "
                f"fullest word: {med(4):3.0f} (p90 {out[-1]['fullest_word_p90']:.0f})",
                flush=True,
            )
    if args.out:
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(out)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("scan_replay", main)
