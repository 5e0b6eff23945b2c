"""What the NetworkX backend costs on the host, beside NetworkX's own Dijkstra.

    python benchmarks/nx_backend.py --out OUT.csv

For each graph (NetworkX graphs built here: a random undirected graph with integer weights 1-99,
a unit-weight grid, where most distances tie, and a random directed graph with float weights),
one row per step, median of ``--repeat`` runs after one untimed call (numba compiles on first
use), CPU backend (no GPU needed):

- ``convert``: ``sssp.Graph.from_networkx`` (NetworkX caches the backend's conversion per graph,
  so a second call on the same graph skips it);
- ``settle``: ``sssp.nxbackend.order.settle`` on the distances: the order NetworkX settles the
  nodes in and its paths, rebuilt from the distances (what makes the backend's ties NetworkX's);
- ``backend``: ``nx.single_source_dijkstra(G, s, backend="sssp")`` on the converted graph
  (solve, settle, the dicts);
- ``networkx``: NetworkX's own ``nx.single_source_dijkstra(G, s)``;
- ``two_way`` and ``networkx_two_way``: ``bidirectional_dijkstra`` to a far node, the backend's
  compiled search and NetworkX's.

Every answer of the backend is checked against NetworkX's: the same distances, dict order and
paths.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

import numpy as np

COLUMNS = ("graph", "nodes", "arcs", "step", "ms")


def graphs(scale: float) -> dict:
    import networkx as nx

    rng = np.random.default_rng(1)
    n = int(200_000 * scale)
    rand = nx.gnm_random_graph(n, 5 * n, seed=1)
    for (u, v), w in zip(
        rand.edges(), rng.integers(1, 100, rand.number_of_edges()).tolist(), strict=True
    ):
        rand[u][v]["weight"] = w
    side = int(300 * scale**0.5)
    grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(side, side))
    directed = nx.gnm_random_graph(n // 2, 4 * n, seed=2, directed=True)
    for (u, v), w in zip(
        directed.edges(), rng.random(directed.number_of_edges()).tolist(), strict=True
    ):
        directed[u][v]["weight"] = round(w, 1)
    return {"random-undirected": rand, "grid-unit": grid, "random-directed-float": directed}


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    import networkx as nx

    import sssp
    from sssp.nxbackend.interface import convert_from_nx
    from sssp.nxbackend.order import settle

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="graph sizes, times 200k nodes")
    args = ap.parse_args(argv)
    nx.config.backends.sssp.backend = "cpu"
    nx.config.warnings_to_ignore.add("cache")
    rows = []
    for name, G in graphs(args.scale).items():
        s = next(iter(G))
        weight = "weight" if name != "grid-unit" else None
        attrs = {"weight": 1} if weight else None
        ms, g = timed(lambda G=G, weight=weight: sssp.Graph.from_networkx(G, weight=weight), 1)
        steps = {"convert": ms}
        B = convert_from_nx(G, edge_attrs=attrs)
        B.backward_for(weight)  # the two-way search's backward graph, kept with the conversion
        nx.bidirectional_dijkstra(B, s, s, weight=weight, backend="sssp")
        want_d, want_p = nx.single_source_dijkstra(G, s, weight=weight)
        dist = sssp.solve(g, 0 if g.labels is None else g.index_of(s), backend="cpu").dist
        settle(g, dist, [0])  # compiled (or loaded from numba's cache) before the timing
        steps["settle"], _ = timed(lambda g=g, dist=dist: settle(g, dist, [0]), args.repeat)
        steps["backend"], got = timed(
            lambda B=B, s=s, weight=weight: nx.single_source_dijkstra(
                B, s, weight=weight, backend="sssp"
            ),
            args.repeat,
        )
        assert list(got[0].items()) == list(want_d.items()) and got[1] == want_p, name
        steps["networkx"], _ = timed(
            lambda G=G, s=s, weight=weight: nx.single_source_dijkstra(G, s, weight=weight),
            args.repeat,
        )
        far = next(reversed(want_d))
        steps["two_way"], got2 = timed(
            lambda B=B, s=s, far=far, weight=weight: nx.bidirectional_dijkstra(
                B, s, far, weight=weight, backend="sssp"
            ),
            args.repeat,
        )
        steps["networkx_two_way"], want2 = timed(
            lambda G=G, s=s, far=far, weight=weight: nx.bidirectional_dijkstra(
                G, s, far, weight=weight
            ),
            args.repeat,
        )
        assert got2 == want2, name
        for step, ms in steps.items():
            rows.append(
                {"graph": name, "nodes": g.n, "arcs": g.m, "step": step, "ms": round(ms, 2)}
            )
        print(
            f"{name:22s} n={g.n:7d} arcs={g.m:8d}  "
            + "  ".join(f"{k} {v:8.1f}" for k, v in steps.items())
            + " ms  (answers equal to NetworkX's)",
            flush=True,
        )
    if args.out:
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("nx_backend", main)
