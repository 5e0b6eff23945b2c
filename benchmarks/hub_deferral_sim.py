"""How much of near-far's edge work on hub-heavy and uniform graphs is edges pushed more than
once, and how much two rules would save: a step-synchronous simulation on the CPU.

The wide loop (kernels/sssp_wide.cu) pushes every near-list entry of a step at once, all of its
edges; an entry whose distance falls again in a later step of the same bucket is pushed again.
The trace of GAP's Kronecker graph (run 65) spent 4.0 of 7.3 traced ms in the hub queue. This
script counts, per graph, source and Δ, the edges pushed by hubs (more than ``--hub`` edges) and
by other nodes, and the steps, for three rules:

  now          every entry of the near list pushes all of its edges in its step (the wide
               loop's rule);
  deferred     while the near list holds any non-hub, its hubs wait (they stay listed at their
               current distance) and push in the first step whose list holds hubs only;
  light-heavy  Meyer and Sanders' split: an entry pushes only its light edges (w < Δ) in the
               bucket's steps; once the bucket is empty, every node pushed in it pushes its heavy
               edges once, at its final distance (a heavy edge from the bucket lands at or past
               its threshold, so no step of the bucket needs it): one step more per bucket.

Steps are synchronous: a step pushes its entries with their distances at the start of the step
and lowers targets at once (as the device's atomics do). Distances are checked against SciPy's
(on ``min_weight_csr``). ``edges_per_arc`` is the edges pushed over the graph's arcs.

    python benchmarks/hub_deferral_sim.py --scale 20 --out benchmarks/results/cpu/hub_deferral.csv
    python benchmarks/hub_deferral_sim.py --scale 20 --families road grid geometric --out ...
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np
from numba import njit

INF = np.int64(2**62)
RULES = ("now", "deferred", "light-heavy")


@njit(cache=True)
def _simulate(indptr, indices, weights, source, delta, hub, rule):  # pragma: no cover - numba
    n = indptr.size - 1
    dist = np.full(n, INF, np.int64)
    pushed = np.full(n, INF, np.int64)
    listed = np.full(n, -1, np.int64)  # the step that last listed a node (near), -1 never
    near = np.empty(n, np.int64)
    nxt = np.empty(n, np.int64)
    far = np.empty(n, np.int64)
    infar = np.zeros(n, np.bool_)
    du = np.empty(n, np.int64)
    done = np.empty(n, np.int64)  # the nodes pushed in this bucket (light-heavy)
    mark = np.zeros(n, np.bool_)
    n_done = 0
    defer = rule == 1
    light_only = rule == 2
    dist[source] = 0
    near[0] = source
    nn, nf = 1, 0
    threshold = delta
    steps = buckets = 0
    hub_edges = other_edges = hub_pushes = other_pushes = 0
    while True:
        buckets += 1
        while nn > 0:
            steps += 1
            # the live entries: listed below T and not yet pushed at this distance
            has_light = False
            for i in range(nn):
                v = near[i]
                if dist[v] < pushed[v] and indptr[v + 1] - indptr[v] <= hub:
                    has_light = True
                    break
            nx = 0
            for i in range(nn):
                v = near[i]
                du[i] = dist[v]
            for i in range(nn):
                v = near[i]
                d = du[i]
                if not d < pushed[v]:
                    continue
                deg = indptr[v + 1] - indptr[v]
                if defer and has_light and deg > hub:
                    if listed[v] != steps:  # waits, listed again for the next step
                        listed[v] = steps
                        nxt[nx] = v
                        nx += 1
                    continue
                pushed[v] = d
                if light_only and not mark[v]:
                    mark[v] = True
                    done[n_done] = v
                    n_done += 1
                if deg > hub:
                    hub_edges += deg
                    hub_pushes += 1
                else:
                    other_edges += deg
                    other_pushes += 1
                for e in range(indptr[v], indptr[v + 1]):
                    if light_only and weights[e] >= delta:
                        if deg > hub:
                            hub_edges -= 1
                        else:
                            other_edges -= 1
                        continue
                    t = indices[e]
                    nd = d + weights[e]
                    if nd < dist[t]:
                        dist[t] = nd
                        if nd < threshold:
                            if listed[t] != steps:
                                listed[t] = steps
                                nxt[nx] = t
                                nx += 1
                        elif not infar[t]:
                            infar[t] = True
                            far[nf] = t
                            nf += 1
            near, nxt = nxt, near
            nn = nx
        if light_only and n_done > 0:
            # the bucket is final: its nodes push their heavy edges once, into later buckets
            steps += 1
            for i in range(n_done):
                v = done[i]
                mark[v] = False
                d = dist[v]
                deg = indptr[v + 1] - indptr[v]
                for e in range(indptr[v], indptr[v + 1]):
                    if weights[e] < delta:
                        continue
                    if deg > hub:
                        hub_edges += 1
                    else:
                        other_edges += 1
                    t = indices[e]
                    nd = d + weights[e]
                    if nd < dist[t]:
                        dist[t] = nd
                        if not infar[t]:
                            infar[t] = True
                            far[nf] = t
                            nf += 1
            n_done = 0
        # raise: the next threshold above the smallest unpushed far distance
        dmin = INF
        for i in range(nf):
            v = far[i]
            if dist[v] < pushed[v] and dist[v] < dmin:
                dmin = dist[v]
        if dmin == INF:
            break
        threshold = (dmin // delta + 1) * delta
        kept = 0
        for i in range(nf):
            v = far[i]
            if not dist[v] < pushed[v]:
                infar[v] = False
            elif dist[v] < threshold:
                infar[v] = False
                near[nn] = v
                nn += 1
            else:
                far[kept] = v
                kept += 1
        nf = kept
    return dist, steps, buckets, hub_edges, other_edges, hub_pushes, other_pushes


FAMILIES = ("kron", "urand", "random-98k", "road", "grid", "geometric")
"""The graphs, by ``--families``: low-diameter ones of 2**scale nodes (Kronecker with GAP's
parameters, weights 1..255; random with 32 arcs a node) and random 98k x 20, and high-diameter
ones of 2**(scale - 3) nodes (the road-like generator, a grid, a random geometric graph of mean
degree 12)."""


def graphs(scale: int, families: list[str]):
    """(name, graph) for each family asked for, generated in turn."""
    import sssp

    small = 2 ** (scale - 3)
    makers = {
        "kron": (
            f"kron-{scale}",
            lambda: sssp.generate(
                "kronecker", scale=scale, edge_factor=16, weight_range=(1, 255), seed=1
            ),
        ),
        "urand": (
            f"urand-{scale}",
            lambda: sssp.generate("random", size=2**scale, degree=32, seed=1),
        ),
        "random-98k": (
            "random-98k-deg20",
            lambda: sssp.generate("random", size="98k", degree=20, seed=1),
        ),
        "road": (f"road-{small}", lambda: sssp.generate("road", size=small, seed=1)),
        "grid": (f"grid-{small}", lambda: sssp.generate("grid", size=small, seed=1)),
        "geometric": (
            f"geometric-{small}",
            lambda: sssp.generate("geometric", size=small, degree=12, seed=1),
        ),
    }
    for family in families:
        name, make = makers[family]
        yield name, make()


def main(argv: list[str] | None = None) -> int:
    from scipy.sparse.csgraph import dijkstra

    from sssp.cpu.nearfar import default_delta
    from sssp.cpu.reference import min_weight_csr

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--hub", type=int, default=256, help="a hub has more edges than this")
    p.add_argument("--sources", type=int, default=3)
    p.add_argument("--scales", type=float, nargs="+", default=[0.5, 1.0], help="Δ multiples")
    p.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES[:3]))
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    rows = []
    for name, g in graphs(args.scale, args.families):
        deg = np.diff(g.indptr)
        print(
            f"{name}: n={g.n} m={g.m} hubs={int((deg > args.hub).sum())} "
            f"hub edges {int(deg[deg > args.hub].sum()) / g.m:.0%}",
            flush=True,
        )
        sources = [
            int(s) for s in np.flatnonzero(deg > 0)[:: max(1, g.n // args.sources)][: args.sources]
        ]
        matrix = min_weight_csr(g)  # not to_scipy(): SciPy would sum parallel edges
        w = g.weights.astype(np.int64)
        ip, ix = g.indptr.astype(np.int64), g.indices.astype(np.int64)
        for scale in args.scales:
            delta = max(1, int(round(default_delta(g) * scale)))
            for s in sources:
                ref = dijkstra(matrix, indices=s)
                for rule, rule_name in enumerate(RULES):
                    t0 = time.perf_counter()
                    dist, steps, buckets, he, oe, hp, op = _simulate(
                        ip, ix, w, s, delta, args.hub, rule
                    )
                    got = np.where(dist == INF, np.inf, dist.astype(np.float64))
                    ok = bool(np.array_equal(got, ref))
                    rows.append(
                        dict(
                            graph=name,
                            n=g.n,
                            m=g.m,
                            source=s,
                            delta=delta,
                            rule=rule_name,
                            steps=steps,
                            buckets=buckets,
                            hub_edges=he,
                            other_edges=oe,
                            edges_per_arc=round((he + oe) / g.m, 3),
                            hub_pushes=hp,
                            other_pushes=op,
                            verified="yes" if ok else "NO",
                            seconds=round(time.perf_counter() - t0, 2),
                        )
                    )
                    print(rows[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    return 0 if all(r["verified"] == "yes" for r in rows) else 1


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("hub_deferral_sim", main)
