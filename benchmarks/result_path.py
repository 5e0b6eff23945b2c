"""What the user waits for: a warm ``Solver.solve`` timed from the call to the returned result,
beside its CUDA-event time, on the tuned configuration of each graph's class.

    python benchmarks/result_path.py --tag new --out OUT.csv random-24k-deg2 t60k gap-kron-22 ...
    python benchmarks/result_path.py --tag new --profile random-24k-deg2   # where the host time goes

Graph names: ``random-<size>-deg<d>`` (the record's random graphs, weights 1..100),
``grid-<side>``, ``rgg-<n>`` and ``road-<n>`` (as in the record), a file stem under ``--graphs-dir`` (the
paper's random weights 1..100), and ``gap-kron-<scale>`` / ``gap-urand-<scale>``: GAP's own
Kronecker and uniform random graphs (degree 16, GAP's weights 1..255), written by GAP's converter
(``ANCHORS/gap_converter -g|-u SCALE -k 16 -w``, ``scripts/build_anchors.sh``) into
``--cache-dir`` once and read back with ``anchors.read_wsg``.

Per graph: SciPy's Dijkstra from each source first (the reference; cached in ``--cache-dir`` so
that a second run, e.g. of another checkout, does not pay it again), then one warm-up solve and,
for each source, ``time.perf_counter()`` around ``solver.solve(s)`` (``wall``) and the result's
CUDA-event time (``timings["gpu"]``; ``timings["total"]`` on code that has no ``"gpu"``), every
answer compared with SciPy's. Then the same without the predecessor tree
(``return_predecessors=False``, where the code has it) and the one-shot call
``sssp.solve(g, s, tuned=True)`` on a graph already solved once in the process. Medians over the
sources. ``host_us`` is wall minus GPU time; ``allow_us`` the issue's bound on it, 30 us + 1 ns a
node.

The script runs unchanged against an older checkout (``PYTHONPATH=OLD python ...``), so that one
device run compares two result paths on the same graphs.
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import io
import pstats
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import sssp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import anchors  # noqa: E402  (a sibling script module)
from bench_sssp import GENERATED, generated, parse_generated, pick_sources  # noqa: E402

COLUMNS = (
    "tag",
    "graph",
    "n",
    "m",
    "algorithm",
    "loop",
    "sources",
    "gpu_ms",
    "wall_ms",
    "host_us",
    "allow_us",
    "before_us",
    "after_us",
    "wall_nopred_ms",
    "gpu_nopred_ms",
    "oneshot_ms",
    "verified",
)


def build(
    name: str, graphs_dir: Path | None, anchor_dir: Path | None, cache: Path, seed: int
) -> sssp.Graph:
    if name.startswith("random-"):
        _, size, deg = name.split("-")
        return sssp.generate("random", size=size, degree=int(deg.removeprefix("deg")), seed=seed)
    if name.startswith(GENERATED):
        parse_generated(name)
        return generated(name, seed)
    if name.startswith("gap-"):
        _, family, scale = name.split("-")
        flag = {"kron": "-g", "urand": "-u"}[family]
        wsg = cache / f"{name}.wsg"
        if not wsg.exists():
            if anchor_dir is None:
                raise sssp.SSSPError(f"{name}: needs --anchors (GAP's converter)")
            tmp = wsg.with_suffix(".part")
            subprocess.run(
                [str(anchor_dir / "gap_converter"), flag, scale, "-k", "16", "-w", "-b", str(tmp)],
                check=True,
                capture_output=True,
            )
            tmp.rename(wsg)
        graph, _ = anchors.read_wsg(wsg)
        return graph
    if graphs_dir is None:
        raise sssp.SSSPError(f"{name}: not a generated graph, and no --graphs-dir")
    files = [p for p in sorted(graphs_dir.rglob("*.gz")) if p.name.split(".")[0] == name]
    if not files:
        raise sssp.SSSPError(f"{name}: no file {name}.* under {graphs_dir}")
    return sssp.load(files[0], weights="random", seed=seed)


def references(
    graph: sssp.Graph, name: str, sources: list[int], cache: Path
) -> dict[int, np.ndarray]:
    """SciPy's distances (int64 with ``sssp.UNREACHABLE``, or float64) from each source."""
    from scipy.sparse.csgraph import dijkstra

    from sssp.cpu.reference import min_weight_csr

    out, matrix = {}, None
    for s in sources:
        path = cache / f"{name}-{graph.n}-{graph.m}-{s}.npy"
        if path.exists():
            out[s] = np.load(path)
            continue
        if matrix is None:
            matrix = min_weight_csr(graph)
        d = dijkstra(matrix, directed=True, indices=s)
        if not graph.is_float:
            reached = np.isfinite(d)
            d2 = np.full(graph.n, sssp.UNREACHABLE, dtype=np.int64)
            d2[reached] = d[reached]
            d = d2
        np.save(path, d)
        out[s] = d
    return out


def gpu_seconds(r) -> float:
    return r.timings["gpu"] if "gpu" in r.timings else r.timings["total"]


def measure(
    tag: str,
    name: str,
    graph: sssp.Graph,
    sources: list[int],
    refs: dict[int, np.ndarray],
    hold: bool = False,
) -> dict:
    bad: list[int] = []
    kept = []  # with hold: every result stays alive, as a caller collecting them would keep them
    walls, gpus, walls_np, gpus_np, before, after = [], [], [], [], [], []
    with sssp.Solver(graph, backend="gpu", tuned=True) as solver:
        first = solver.solve(sources[0])
        algorithm, loop = first.algorithm, first.stats.get("loop", "?")
        del first
        for s in sources:
            t = time.perf_counter()
            r = solver.solve(s)
            walls.append(time.perf_counter() - t)
            gpus.append(gpu_seconds(r))
            before.append(r.timings.get("host_before", float("nan")))
            after.append(r.timings.get("host_after", float("nan")))
            if not np.array_equal(r.dist, refs[s]):
                bad.append(s)
            if hold:
                kept.append(r)
            del r  # without hold the result's host memory goes back to the pool
        try:
            for s in sources:
                t = time.perf_counter()
                r = solver.solve(s, return_predecessors=False)
                walls_np.append(time.perf_counter() - t)
                gpus_np.append(gpu_seconds(r))
                if r.pred is not None or not np.array_equal(r.dist, refs[s]):
                    bad.append(s)
                del r
        except TypeError:  # code without the option
            pass
    sssp.solve(graph, sources[0], tuned=True)  # the one-shot call, once in this process
    t = time.perf_counter()
    r = sssp.solve(graph, sources[0], tuned=True)
    oneshot = time.perf_counter() - t
    if not np.array_equal(r.dist, refs[sources[0]]):
        bad.append(sources[0])
    med = lambda xs: float(np.median(xs)) if xs else float("nan")  # noqa: E731
    return {
        "tag": tag,
        "graph": name,
        "n": graph.n,
        "m": graph.m,
        "algorithm": algorithm,
        "loop": loop,
        "sources": len(set(sources)),
        "gpu_ms": 1e3 * med(gpus),
        "wall_ms": 1e3 * med(walls),
        "host_us": 1e6 * (med(walls) - med(gpus)),
        "allow_us": 30 + graph.n / 1e3,
        "before_us": 1e6 * med(before),
        "after_us": 1e6 * med(after),
        "wall_nopred_ms": 1e3 * med(walls_np),
        "gpu_nopred_ms": 1e3 * med(gpus_np),
        "oneshot_ms": 1e3 * oneshot,
        "verified": "no" if bad else "yes",
    }


def profile(graph: sssp.Graph, sources: list[int], count: int = 200) -> str:
    with sssp.Solver(graph, backend="gpu", tuned=True) as solver:
        solver.solve(sources[0])
        prof = cProfile.Profile()
        prof.enable()
        for i in range(count):
            solver.solve(sources[i % len(sources)])
        prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(14)
    return text.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--tag", default="run")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--anchors", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/sssp-result-path"))
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1, help="solves per source (medians over all)")
    ap.add_argument("--big-sources", type=int, default=3, help="sources on graphs of over 1M nodes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--hold", action="store_true", help="keep every result alive instead of dropping it"
    )
    ap.add_argument(
        "--profile", action="store_true", help="a cProfile of 200 warm solves per graph instead"
    )
    args = ap.parse_args(argv)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.graphs:
        t0 = time.perf_counter()
        graph = build(name, args.graphs_dir, args.anchors, args.cache_dir, args.seed)
        count = args.big_sources if graph.n > 1_000_000 else args.sources
        sources = pick_sources(graph, count, args.seed)
        if args.profile:
            print(f"== {args.tag} {name} (n = {graph.n})\n{profile(graph, sources)}", flush=True)
            continue
        refs = references(graph, name, sources, args.cache_dir)
        row = measure(args.tag, name, graph, sources * args.repeat, refs, args.hold)
        rows.append(row)
        print(
            f"result_path {args.tag} {name}: n {row['n']} {row['algorithm']}/{row['loop']} gpu {row['gpu_ms']:.3f} ms"
            f" wall {row['wall_ms']:.3f} ms host {row['host_us']:.0f} us (allow {row['allow_us']:.0f};"
            f" before {row['before_us']:.0f}, after {row['after_us']:.0f})"
            f" nopred {row['wall_nopred_ms']:.3f} ms oneshot {row['oneshot_ms']:.2f} ms {row['verified']}"
            f" [{time.perf_counter() - t0:.1f} s]",
            flush=True,
        )
        del graph
    if args.out and rows:
        new = not args.out.exists()
        with args.out.open("a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            if new:
                w.writeheader()
            w.writerows(rows)
    return 0 if all(r["verified"] == "yes" for r in rows) else 1


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("result_path", main)
