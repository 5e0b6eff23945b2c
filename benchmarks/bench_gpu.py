"""GPU Crauser/Martín against the CPU anchors, on the paper's synthetic classes and real graphs.

Run on a CUDA host::

    python benchmarks/bench_gpu.py --out results.csv [--boost PATH] [--sources 20]

For every graph: the median over ``--sources`` random sources of
  * GPU Crauser and GPU Martín (successors, the paper's default configuration: 256 threads,
    L1 normal), timed with CUDA events after a warm-up solve (initialisation, the iteration loop,
    the predecessor-tree pass and the copy of dist/pred back to the host);
  * CPU Crauser (the paper's sequential version, numba) and SciPy's Dijkstra;
  * Boost's Dijkstra (``benchmarks/boost_dijkstra.cpp``), built here when g++ and the Boost
    headers are present, or given with ``--boost``.
Every GPU answer is checked against SciPy's; Boost's against a checksum of SciPy's distances.
The CPU anchors run in worker processes (``--workers``, one source at a time per process,
sources split between processes) next to the GPU timing, to fit the run in the device lease; each
time is still one single-threaded solve. Peak GPU memory is what the solver allocates; Boost's is
its resident set after building the graph.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import kernels
import sssp
from sssp.cpu import solve_cpu
from sssp.cpu.reference import dijkstra

HERE = Path(__file__).resolve().parent
SIZES = ("24k", "49k", "98k")
DEGREES = (2, 20, 200, 1000, 2000)
_GRAPH: sssp.Graph | None = None


def build_boost(dest: Path) -> Path | None:
    gxx = shutil.which("g++")
    if gxx is None or not Path("/usr/include/boost/graph/dijkstra_shortest_paths.hpp").exists():
        return None
    out = dest / "boost_dijkstra"
    cmd = [gxx, "-O3", "-march=native", "-o", str(out), str(HERE / "boost_dijkstra.cpp")]
    subprocess.run(cmd, check=True)
    return out


def write_raw(graph: sssp.Graph, path: Path) -> None:
    with open(path, "wb") as f:
        f.write(np.array([graph.n, graph.m], np.int64).tobytes())
        f.write(graph.indptr.astype(np.int64).tobytes())
        f.write(graph.indices.astype(np.int32).tobytes())
        f.write(graph.weights.astype(np.int64).tobytes())


def _cpu_job(args: tuple[str, int]) -> tuple[str, int, float, int]:
    which, s = args
    g = _GRAPH
    if which == "scipy":
        r = dijkstra(g, s)
    else:
        r = solve_cpu(g, s, algorithm="crauser", variant="successors")
    finite = r.dist[r.dist != sssp.UNREACHABLE]
    return which, s, r.timings.get("gpu", r.timings["total"]), int(finite.sum())


def cpu_anchors(graph: sssp.Graph, sources: list[int], workers: int):
    global _GRAPH
    _GRAPH = graph
    # Warm numba's compiled code in the parent so forked workers inherit it.
    solve_cpu(graph, sources[0], algorithm="crauser", variant="successors")
    ctx = mp.get_context("fork")
    pool = ctx.Pool(workers)
    jobs = [(w, s) for s in sources for w in ("scipy", "cpu-crauser")]
    return pool, pool.map_async(_cpu_job, jobs, chunksize=1)


def gpu_times(graph: sssp.Graph, algorithm: str, sources: list[int]) -> dict:
    from sssp.gpu import GPUSolver

    with GPUSolver(graph, algorithm=algorithm) as solver:
        solver.solve(sources[0])  # warm-up: module load, first-touch of the buffers
        times, iters, share, checksums = [], [], [], {}
        for s in sources:
            r = solver.solve(s)
            times.append(r.timings.get("gpu", r.timings["total"]))
            iters.append(r.iterations)
            share.append(r.stats["relax_active_share"])
            checksums[s] = int(r.dist[r.dist != sssp.UNREACHABLE].sum())
        prof = solver.solve(sources[0], profile=True)
        return {
            "ms": 1e3 * float(np.median(times)),
            "iterations": float(np.median(iters)),
            "active_share": float(np.mean(share)),
            "mem_bytes": solver.memory_bytes(),
            "breakdown": {k: 1e3 * prof.timings[k] for k in ("relax", "min", "update", "tree")},
            "checksums": checksums,
        }


def graphs(args) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    if not args.real_only:
        for size in args.sizes:
            for d in args.degrees:
                out.append((f"random-{size}-deg{d}", ("random", size, d)))
    if args.graphs_dir and not args.synthetic_only:
        root = Path(args.graphs_dir)
        for p in sorted(root.rglob("*.gz")):
            out.append((p.name.split(".")[0], p))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", default="bench_gpu.csv")
    ap.add_argument("--sources", type=int, default=20)
    ap.add_argument("--workers", type=int, default=max(1, min(6, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--boost", help="prebuilt boost_dijkstra binary")
    ap.add_argument("--sizes", nargs="+", default=list(SIZES))
    ap.add_argument("--degrees", nargs="+", type=int, default=list(DEGREES))
    ap.add_argument("--graphs-dir", default=os.environ.get("SSSP_GRAPHS_DIR"))
    ap.add_argument("--min-real-nodes", type=int, default=10_000, help="skip smaller real graphs")
    ap.add_argument("--real-only", action="store_true")
    ap.add_argument("--synthetic-only", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from sssp.gpu import device_info

    info = device_info(0)
    tmp = Path(tempfile.mkdtemp(prefix="bench-gpu-"))
    boost = Path(args.boost) if args.boost else build_boost(tmp)
    print(
        f"# device: {info.name} (cc {info.cc_string}, {info.sm_count} SMs, driver {info.driver_version}, "
        f"CUDA {info.cuda_version}); host: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; kernels {kernels.digest()}; boost: {boost or 'not available'}",
        flush=True,
    )
    rows = []
    header = (
        "graph",
        "n",
        "m",
        "sources",
        "gpu_crauser_ms",
        "gpu_martin_ms",
        "cpu_crauser_ms",
        "scipy_ms",
        "boost_ms",
        "crauser_vs_martin",
        "crauser_vs_boost",
        "iters_crauser",
        "iters_martin",
        "relax_active_share",
        "gpu_mem_mb",
        "boost_rss_mb",
        "relax_ms",
        "min_ms",
        "update_ms",
        "tree_ms",
    )
    print(" | ".join(header[:15]), flush=True)
    for name, spec in graphs(args):
        t0 = time.perf_counter()
        if isinstance(spec, Path):
            graph = sssp.load(spec, weights="random", seed=args.seed)
            if graph.n < args.min_real_nodes:
                continue
        else:
            kind, size, d = spec
            graph = sssp.generate(kind, size=size, degree=d, seed=args.seed)
        gen_s = time.perf_counter() - t0
        rng = np.random.default_rng(args.seed + 1)
        sources = [int(s) for s in rng.integers(0, graph.n, size=args.sources)]
        boost_proc = None
        if boost is not None:
            raw = tmp / "g.bin"
            write_raw(graph, raw)
            boost_proc = subprocess.Popen(
                [str(boost), str(raw), *map(str, sources)], stdout=subprocess.PIPE, text=True
            )
        pool, pending = cpu_anchors(graph, sources, args.workers)
        gc = gpu_times(graph, "crauser", sources)
        gm = gpu_times(graph, "martin", sources)
        cpu = pending.get()
        pool.close()
        pool.join()
        # SciPy's distances are the reference every other answer is checked against.
        ref = {s: c for w, s, _, c in cpu if w == "scipy"}
        for label, res in (("GPU crauser", gc), ("GPU martin", gm)):
            bad = [s for s in sources if res["checksums"][s] != ref[s]]
            if bad:
                raise SystemExit(f"{label} disagrees with SciPy on {name} source {bad[0]}")
        scipy_ms = 1e3 * float(np.median([t for w, _, t, _ in cpu if w == "scipy"]))
        crauser_ms = 1e3 * float(np.median([t for w, _, t, _ in cpu if w == "cpu-crauser"]))
        for w, s, _, checksum in cpu:
            if checksum != ref[s]:
                raise SystemExit(f"{w} disagrees with SciPy on {name} source {s}")
        boost_ms = boost_rss = float("nan")
        if boost_proc is not None:
            out, _ = boost_proc.communicate()
            times = []
            for line in out.splitlines():
                parts = line.split()
                if parts[0] == "rss_after_build_kb":
                    boost_rss = int(parts[1]) / 1024
                elif parts[0].isdigit():
                    s, t, checksum = int(parts[0]), float(parts[1]), int(parts[2])
                    if checksum != ref[s]:
                        raise SystemExit(f"Boost disagrees with SciPy on {name} source {s}")
                    times.append(t)
            boost_ms = 1e3 * float(np.median(times))
        row = (
            name,
            graph.n,
            graph.m,
            len(sources),
            gc["ms"],
            gm["ms"],
            crauser_ms,
            scipy_ms,
            boost_ms,
            gm["ms"] / gc["ms"],
            boost_ms / gc["ms"],
            gc["iterations"],
            gm["iterations"],
            gc["active_share"],
            gc["mem_bytes"] / 2**20,
            boost_rss,
            *(gc["breakdown"][k] for k in ("relax", "min", "update", "tree")),
        )
        rows.append(row)
        fmt = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row[:16]]
        print(" | ".join(fmt) + f"  (graph {gen_s:.1f}s)", flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                f"# device={info.name}",
                f"cc={info.cc_string}",
                f"driver={info.driver_version}",
                f"cuda={info.cuda_version}",
                f"kernels={kernels.digest()}",
                f"python={sys.version.split()[0]}",
                f"sources={args.sources}",
                "config=default(256-N)",
            ]
        )
        w.writerow(header)
        w.writerows(rows)
    print(f"# wrote {args.out}")


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_gpu", main)
