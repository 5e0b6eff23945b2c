"""What a core table buys a PHAST solve on the host: levels left to sweep, the seeds' search time.

    python benchmarks/phast_core.py --graphs-dir G --core-nodes 0 256 1024 2048 \\
        --out OUT.csv cs4 cti fe_body t60k COL grid-512

Per solve the host searches the upward edges from the source for the sweep's seeds, and the
device then sweeps every level, one dependent step each (:mod:`sssp.hierarchy`). A core table
(:func:`sssp.hierarchy.core_table`) holds the distances between the nodes of the hierarchy's
top levels: the search stops at the core, the core's distances come from the table, and the
device sweeps only the levels below (``LaunchConfig.core``). Per graph (the record's graph and
weights, ``result_path.build``; its hierarchy from the cache, ``sssp.hierarchy.hierarchy_for``)
and per ``--core-nodes`` value (0: no core): the core's levels and nodes, the levels left, the
table's build seconds, type and MiB, and over ``--searches`` random sources the search's median
and 90th percentile microseconds and median seeds (the core's positions, then those below it),
on one core of this host. Every answer of a PHAST solve through the table is checked against
SciPy's on ``--sources`` sources. Then the labels (:func:`sssp.hierarchy.upward_labels`: every
node's search kept, which the GPU solver uploads so that no solve searches): their items a node
(empty where they pass :data:`sssp.hierarchy.LABEL_ITEMS_MAX`), the core nodes a label keeps
(its entries), the build's seconds on all of this host's cores and MiB on the device with
32-bit distances; each checked source's label gives the search's seeds and core distances.

Host times only: what the levels left cost on the device is for the device to measure.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import pick_sources  # noqa: E402
from result_path import build  # noqa: E402
from spt_depth import write_rows  # noqa: E402

import sssp  # noqa: E402
from sssp.cpu.parallel import INF  # noqa: E402
from sssp.cpu.reference import dijkstra  # noqa: E402
from sssp.hierarchy import UpwardLabels, core_table, hierarchy_for, phast, upward_labels  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "levels",
    "core_nodes_max",
    "core_levels",
    "core_nodes",
    "levels_left",
    "table_s",
    "table_dtype",
    "table_mib",
    "search_us_median",
    "search_us_p90",
    "seeds_median",
    "label_items_per_node",
    "label_entries_mean",
    "label_s",
    "label_mib",
    "verified",
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+", help="record graph names (result_path.build)")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--core-nodes", type=int, nargs="+", default=[0, 1024], metavar="K")
    ap.add_argument("--searches", type=int, default=300, help="sources timed per point")
    ap.add_argument("--sources", type=int, default=3, help="sources checked against SciPy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rows: list[dict] = []
    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("."), args.seed)
        if graph.is_float:
            raise sssp.SSSPError(f"{name}: a hierarchy takes integer weights only")
        h, _ = hierarchy_for(graph)
        checked = pick_sources(graph, args.sources, args.seed)
        refs = {s: dijkstra(graph, s).dist for s in checked}
        timed = np.random.default_rng(args.seed).integers(0, graph.n, args.searches)
        for most in args.core_nodes:
            table = core_table(h, most)
            ok = all(np.array_equal(phast(graph, h, s, core=table).dist, refs[s]) for s in checked)
            work = np.full(h.n, INF, dtype=np.int64)
            scratch = h.scratch(table)
            h.upward(int(timed[0]), work, scratch)  # compiled before the clock
            us, seeds = [], []
            for s in timed:
                t0 = time.perf_counter()
                positions, _ = h.upward(int(s), work, scratch)
                us.append(1e6 * (time.perf_counter() - t0))
                seeds.append(positions.size)
            labels = upward_labels(h, table)
            if labels is not None:
                ok &= all(
                    _label_is_the_search(labels, int(h.position[s]), work, scratch) for s in checked
                )
            row = {
                "graph": name,
                "n": graph.n,
                "levels": h.levels,
                "core_nodes_max": most,
                "core_levels": table.levels,
                "core_nodes": table.nodes,
                "levels_left": h.levels - table.levels,
                "table_s": round(table.seconds, 3),
                "table_dtype": str(table.dist.dtype),
                "table_mib": round(table.dist.nbytes / 2**20, 2),
                "search_us_median": round(float(np.median(us)), 1),
                "search_us_p90": round(float(np.percentile(us, 90)), 1),
                "seeds_median": int(np.median(seeds)),
                "label_items_per_node": "" if labels is None else round(labels.items / h.n, 1),
                "label_entries_mean": ""
                if labels is None
                else round(float(labels.entries.mean()), 1),
                "label_s": "" if labels is None else round(labels.seconds, 3),
                "label_mib": "" if labels is None else round(8 * labels.items / 2**20, 1),
                "verified": "yes" if ok else "no",
            }
            rows.append(row)
            print(" ".join(f"{c}={row[c]}" for c in COLUMNS), flush=True)
    if args.out:
        write_rows(args.out, COLUMNS, rows)
    return 0 if all(r["verified"] == "yes" for r in rows) else 1


def _label_is_the_search(labels: UpwardLabels, p: int, work, scratch) -> bool:
    """Whether position ``p``'s label holds what the upward search from it gives: the core's
    distances through its entries, and the same seeds below the core."""
    h, k = labels.core.hierarchy, labels.core.nodes
    positions, dists = h.upward(int(h.order[p]), work, scratch)
    a, b, ne = int(labels.ptr[p]), int(labels.ptr[p + 1]), int(labels.entries[p])
    table = labels.core.dist.astype(np.int64)
    core = np.full(k, INF, dtype=np.int64)
    for e, d in zip(labels.pos[a : a + ne], labels.dist[a : a + ne], strict=True):
        core = np.minimum(core, np.where(table[e] < 0, INF, d + table[e]))
    seeds = dict(
        zip(labels.pos[a + ne : b].tolist(), labels.dist[a + ne : b].tolist(), strict=True)
    )
    below = dict(zip(positions[k:].tolist(), dists[k:].tolist(), strict=True))
    return bool(np.array_equal(core, dists[:k])) and seeds == below


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("phast_core", main)
