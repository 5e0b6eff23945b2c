"""The floor under round-synchronous SSSP on a graph: each source's shortest-path tree depth.

    python benchmarks/spt_depth.py --graphs-dir G --out OUT.csv t60k COL grid-512 rgg-196k

A solver that settles at most one more hop of every shortest path per device-wide step (Crauser's
phases, a Δ-stepping step whose bucket holds the next hop, Bellman-Ford rounds) needs at least
as many steps as the deepest path of the source's shortest-path tree, counted in edges. On roads
and meshes that depth is hundreds to thousands, so it bounds the time from below as
``depth x (the cost of one step)``, whatever the work per step; only steps that carry several
hops inside a block or cluster (the fused cluster loop) or no device-wide steps at all
(asynchronous buckets) get under it.

Graphs are built as the benchmark record builds them (``result_path.build``: the real graphs with
seeded random weights) and the sources are the record's (``bench_sssp.pick_sources``), so each
depth stands beside the record's GPU row of that graph (``--record``): its steps (the median
source's), its GPU time and the µs a step. SciPy's Dijkstra gives each tree; a pointer-jumping
pass gives every node's depth in ``log2(depth)`` NumPy sweeps. No GPU is needed.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import BIG_NODES, pick_sources  # noqa: E402
from result_path import build  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "m",
    "source",
    "spt_depth",
    "record_steps",
    "record_gpu_ms",
    "record_us_per_step",
    "steps_per_depth",
)
RECORD = Path(__file__).resolve().parent / "results" / "h200" / "sssp_vs_boost.csv"


def tree_depth(pred: np.ndarray) -> np.ndarray:
    """Each node's depth in the tree ``pred`` (a parent per node; negative for the root and for
    nodes outside the tree, whose depth is 0): ``depth[v] = depth[pred[v]] + 1``, by pointer
    jumping (each sweep doubles the span every node has summed)."""
    n = pred.size
    nodes = np.arange(n)
    anc = np.where(pred >= 0, pred, nodes)
    depth = (pred >= 0).astype(np.int64)
    while True:
        depth += np.where(anc != nodes, depth[anc], 0)
        up = anc[anc]
        if np.array_equal(up, anc):
            return depth
        anc = up


def write_rows(path: Path, columns: tuple[str, ...], rows: list[dict]) -> None:
    """``rows`` as a CSV with header ``columns``, floats to four significant digits."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: f"{v:.4g}" if isinstance(v, float) else v for k, v in r.items()})


def record_rows(path: Path) -> dict[str, dict[str, str]]:
    """The benchmark record's rows by graph name ({} when the file is missing)."""
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        return {row["graph"]: row for row in csv.DictReader(f)}


def record_fields(rec: dict[str, str]) -> dict[str, float]:
    """A record row's steps, GPU and GAP milliseconds as columns (nan where it has none)."""

    def number(key: str) -> float:
        return float(rec[key]) if rec.get(key) else float("nan")

    return {
        "record_steps": number("phases"),
        "record_gpu_ms": number("gpu_ms"),
        "record_gap_ms": number("gap_ms"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+", help="record graph names (result_path.build)")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--record", type=Path, default=RECORD, help="the record's CSV (steps, GPU ms)")
    ap.add_argument("--sources", type=int, default=5, help="as bench_sssp's --sources")
    ap.add_argument("--big-sources", type=int, default=3, help="as bench_sssp's --big-sources")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    from scipy.sparse.csgraph import dijkstra

    record = record_rows(args.record)
    rows = []
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("."), args.seed)
        count = args.big_sources if graph.n > BIG_NODES else args.sources
        matrix = graph.to_scipy()
        fields = record_fields(record.get(name, {}))
        steps, gpu_ms = fields["record_steps"], fields["record_gpu_ms"]
        for source in pick_sources(graph, count, args.seed):
            _, pred = dijkstra(matrix, indices=source, return_predecessors=True)
            depth = int(tree_depth(pred).max())
            rows.append(
                {
                    "graph": name,
                    "n": graph.n,
                    "m": graph.m,
                    "source": source,
                    "spt_depth": depth,
                    "record_steps": steps,
                    "record_gpu_ms": gpu_ms,
                    "record_us_per_step": 1e3 * gpu_ms / steps if steps else float("nan"),
                    "steps_per_depth": steps / depth if depth else float("nan"),
                }
            )
        depths = [r["spt_depth"] for r in rows if r["graph"] == name]
        print(
            f"{name:16s} n={graph.n:8d} depth {min(depths)}-{max(depths)} (median "
            f"{int(np.median(depths))}); record: {steps:g} steps, {gpu_ms:g} ms GPU",
            flush=True,
        )
    if args.out:
        write_rows(args.out, COLUMNS, rows)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("spt_depth", main)
