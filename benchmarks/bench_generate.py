"""Time and peak memory of the graph generators (:mod:`sssp.generators`).

Each case runs in a fresh subprocess, so ``ru_maxrss`` is that case's own peak. The baseline RSS
(interpreter + numpy + sssp imported, before generating) is subtracted; the ratio is
``(peak RSS - baseline) / CSR bytes`` where CSR bytes = indptr (int64) + indices + weights.

Usage::

    python benchmarks/bench_generate.py                       # 98k x degree 2000 (the requirement)
    python benchmarks/bench_generate.py --paper               # all 15 paper random classes
    python benchmarks/bench_generate.py --case random:49k:200 --case martin:1M --case kronecker:2097152
    python benchmarks/bench_generate.py --tracemalloc ...     # also numpy's traced peak
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
import sssp.generators as gen
kind, size, degree, seed, use_tm = json.loads(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if use_tm:
    tracemalloc.start()
t0 = time.perf_counter()
g = gen.generate(kind, size=size, degree=degree, seed=seed)
dt = time.perf_counter() - t0
tm_peak = tracemalloc.get_traced_memory()[1] if use_tm else None
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
csr = g.indptr.nbytes + g.indices.nbytes + g.weights.nbytes
print(json.dumps(dict(name=g.name, n=g.n, m=g.m, seconds=dt, csr=csr, base=base, peak=peak,
                      tm_peak=tm_peak)))
"""

PAPER_SIZES = ("24k", "49k", "98k")
PAPER_DEGREES = (2, 20, 200, 1000, 2000)


def run_case(kind: str, size: str, degree: float | None, seed: int, tracemalloc: bool) -> dict:
    arg = json.dumps([kind, size, degree, seed, tracemalloc])
    proc = subprocess.run([sys.executable, "-c", CHILD, arg], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"case {kind}:{size}:{degree} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def parse_case(text: str) -> tuple[str, str, float | None]:
    parts = text.split(":")
    kind, size = parts[0], parts[1]
    degree = float(parts[2]) if len(parts) > 2 else None
    if degree is not None and degree.is_integer():
        degree = int(degree)
    return kind, size, degree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--case", action="append", default=[], help="kind:size[:degree], repeatable")
    ap.add_argument(
        "--paper", action="store_true", help="all paper random classes (3 sizes x 5 degrees)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tracemalloc", action="store_true", help="also report numpy's traced peak")
    args = ap.parse_args(argv)
    cases = [parse_case(c) for c in args.case]
    if args.paper:
        cases += [("random", s, d) for s in PAPER_SIZES for d in PAPER_DEGREES]
    if not cases:
        cases = [("random", "98k", 2000)]
    header = f"{'graph':34s} {'n':>9s} {'edges':>11s} {'seconds':>8s} {'CSR MB':>9s} {'peak MB':>9s} {'ratio':>6s}"
    if args.tracemalloc:
        header += f" {'traced MB':>9s} {'t.ratio':>7s}"
    print(header, flush=True)
    for kind, size, degree in cases:
        r = run_case(kind, size, degree, args.seed, args.tracemalloc)
        extra = r["peak"] - r["base"]
        line = (
            f"{r['name']:34s} {r['n']:9d} {r['m']:11d} {r['seconds']:8.2f} {r['csr'] / 2**20:9.1f} "
            f"{extra / 2**20:9.1f} {extra / r['csr']:6.2f}"
        )
        if args.tracemalloc:
            line += f" {r['tm_peak'] / 2**20:9.1f} {r['tm_peak'] / r['csr']:7.2f}"
        print(line, flush=True)
    print(
        "peak MB = ru_maxrss of a fresh process minus its RSS before generating; ratio = peak / CSR"
    )
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_generate", main)
