"""All-pairs distances streamed into a ``numpy.memmap``: wall time and the peak resident set.

Solves every node of a generated graph as a source with ``sssp.solve(g, range(n), out=memmap)``
and reports the process's peak resident set (``ru_maxrss``: anonymous memory and the mapped
table pages it holds) against the table's size, then checks a sample of rows against SciPy's
Dijkstra. On the GPU it also reports the device memory in use after the batch
(``device_used_bytes``: every allocation of the device, the CUDA context's own included, so at
least what the batch held) and how the rows ran. One JSON line on stdout.

Usage::

    python benchmarks/apsp_memmap.py --size 24k --degree 2 --out /tmp/apsp.i32
    python benchmarks/apsp_memmap.py --kind grid --size 8192 --budget-mb 16 --backend cpu
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kind", default="random", help="generator kind (default random)")
    p.add_argument("--size", default="24k", help="nodes, e.g. 24k (default)")
    p.add_argument(
        "--degree", type=float, default=2, help="mean degree for random graphs (default 2)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", default="int32", choices=("int32", "int64", "float32", "float64"))
    p.add_argument(
        "--out", required=True, help="the table file (k x n of --dtype); removed afterwards"
    )
    p.add_argument(
        "--budget-mb", type=float, default=None, help="memory_budget in MiB (default sssp's)"
    )
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"))
    p.add_argument("--algorithm", default=None)
    p.add_argument("--check", type=int, default=64, help="rows checked against SciPy (default 64)")
    args = p.parse_args(argv)

    from scipy.sparse.csgraph import dijkstra

    import sssp
    from sssp.cpu.reference import min_weight_csr

    kw = (
        {"degree": args.degree}
        if args.kind in ("random", "geometric", "martin", "kronecker")
        else {}
    )
    size = int(args.size) if args.size.isdigit() else args.size
    g = sssp.generate(args.kind, size=size, seed=args.seed, **kw)
    sssp.solve(
        g, range(2), backend=args.backend, algorithm=args.algorithm
    )  # imports, compiled code
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out = np.memmap(args.out, dtype=args.dtype, mode="w+", shape=(g.n, g.n))
    budget = None if args.budget_mb is None else int(args.budget_mb * 2**20)
    t0 = time.perf_counter()
    r = sssp.solve(
        g, range(g.n), backend=args.backend, algorithm=args.algorithm, out=out, memory_budget=budget
    )
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    device_used = None
    if r.backend == "gpu":  # all the device memory in use now, the CUDA context's own included
        import pycuda.driver as cuda

        from sssp.gpu.device import activate

        activate(0)  # the solver's context, already current on this thread
        free, total = cuda.mem_get_info()
        device_used = int(total - free)
    rows = np.random.default_rng(1).choice(g.n, size=min(args.check, g.n), replace=False)
    want = dijkstra(min_weight_csr(g), indices=rows)
    got = np.asarray(out[rows], dtype=np.float64)
    got[np.asarray(out[rows]) == r.unreachable] = np.inf
    verified = bool(np.array_equal(got, want))
    report = {
        "graph": f"{args.kind} {args.size} x {args.degree:g}" if kw else f"{args.kind} {args.size}",
        "n": g.n,
        "m": g.m,
        "dtype": args.dtype,
        "table_bytes": int(out.nbytes),
        "algorithm": r.algorithm,
        "backend": r.backend,
        "workers": r.stats["workers"],
        "chunk_rows": r.stats["chunk_rows"],
        "memory_budget": r.stats["memory_budget"],
        "wall_s": round(wall, 2),
        "ms_per_source": round(1e3 * wall / g.n, 4),
        "peak_rss_bytes": peak,
        "rss_before_bytes": base,
        "device_used_bytes": device_used,
        "batch": r.stats.get("batch"),
        "verified_rows": int(rows.size),
        "verified": verified,
    }
    del r, out
    os.remove(args.out)
    print(json.dumps(report))
    return 0 if verified else 1


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("apsp_memmap", main)
