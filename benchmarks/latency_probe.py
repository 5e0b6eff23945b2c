"""The latency of one dependent memory operation of each kind a solver's hop is made of (needs a
CUDA GPU of compute capability 9.0+).

    python benchmarks/latency_probe.py [--out latency.csv]

A hop of near-far's local work (a warp pops a node, reads its distance and row, relaxes its
edges and queues what falls) is a chain of dependent memory operations, so its cost is the sum of
their latencies, not a bandwidth. ``benchmarks/bucket_model.py`` assumes such a cost; this probe
measures its parts: one thread follows a random cycle through an array (Sattolo's permutation, so
every access needs the one before it) ``--steps`` times, each step one operation of a kind, and
``clock64()`` gives the cycles a step:

- global memory, the array L2-resident (4 MB, read once before): ``ld.cg`` (a load from L2),
  ``atomicAdd(p, 0)`` and ``atomicMin(p, INT_MAX)`` (atomics that return the old value, which is
  the next index), and ``ld.cg`` followed by ``__threadfence()`` each step;
- shared memory of the block (``lds``), of another block of a cluster of two (``dsmem``, through
  ``map_shared_rank``), an atomic there (``dsmem-atomic``), and a local shared-memory load with
  ``fence.acq_rel.cluster`` each step (the fence local work across blocks pays per push and pop).

Cycles are the SM's; ns use the device's reported clock rate (``CLOCK_RATE``; the SM may run
at another clock under load, so the cycles are the figure to compare). Each kind runs three
times; the median is printed and written (``--out``).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

KINDS = ("ld-cg", "atomic-add", "atomic-min", "ld-cg+fence", "lds", "dsmem", "dsmem-atomic",
         "lds+fence-cluster")  # fmt: skip
"""The operations timed, in the order of the ``kind`` argument of the probe kernels."""

SHARED_WORDS = 16384
"""The cycle's length in shared memory (64 KB of each block)."""

SOURCE = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// One thread follows the cycle `next` (n entries) `steps` times with operation `kind`; out[0] gets
// the cycles, out[1] the last index (so that the chain is not optimised away).
extern "C" __global__ void chase_global(int *next, int steps, int kind, long long *out) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    int p = 0;
    for (int i = 0; i < 64; ++i) p = __ldcg(next + p);  // warm the path's start
    const long long t0 = clock64();
    if (kind == 0) {
        for (int i = 0; i < steps; ++i) p = __ldcg(next + p);
    } else if (kind == 1) {
        for (int i = 0; i < steps; ++i) p = atomicAdd(next + p, 0);
    } else if (kind == 2) {
        for (int i = 0; i < steps; ++i) p = atomicMin(next + p, 0x7fffffff);
    } else {
        for (int i = 0; i < steps; ++i) {
            p = __ldcg(next + p);
            __threadfence();
        }
    }
    const long long t1 = clock64();
    out[0] = t1 - t0;
    out[1] = p;
}

// Block 0 of a cluster of two follows the cycle in its own shared memory (kind 4, 7) or in block
// 1's (kind 5: loads, 6: atomics); both blocks copy the cycle in first.
extern "C" __global__ void __cluster_dims__(2, 1, 1) chase_shared(const int *next, int n, int steps, int kind,
                                                                  long long *out) {
    extern __shared__ int s[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = next[i];
    cluster.sync();
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
        volatile int *local = s;
        int *remote = cluster.map_shared_rank(s, 1);
        volatile int *vremote = remote;
        int p = 0;
        const long long t0 = clock64();
        if (kind == 4) {
            for (int i = 0; i < steps; ++i) p = local[p];
        } else if (kind == 5) {
            for (int i = 0; i < steps; ++i) p = vremote[p];
        } else if (kind == 6) {
            for (int i = 0; i < steps; ++i) p = atomicAdd(remote + p, 0);
        } else {
            for (int i = 0; i < steps; ++i) {
                p = local[p];
                asm volatile("fence.acq_rel.cluster;" ::: "memory");
            }
        }
        const long long t1 = clock64();
        out[0] = t1 - t0;
        out[1] = p;
    }
    cluster.sync();  // block 1's shared memory stays until block 0 is done with it
}
"""


def sattolo(n: int, seed: int = 0) -> np.ndarray:
    """A permutation of ``range(n)`` that is one cycle through every index (Sattolo's algorithm),
    as int32: following ``p = next[p]`` from 0 visits all ``n`` before it returns."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)  # the visiting order, as a cycle starting wherever 0 falls
    nxt = np.empty(n, np.int32)
    nxt[order] = np.roll(order, -1)
    return nxt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--words", type=int, default=1 << 20, help="the global cycle's length")
    ap.add_argument("--steps", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    from pycuda.compiler import compile as nvcc_compile

    from sssp.gpu.device import activate, device_info, driver

    cuda = driver()
    activate(0)
    info = device_info(0)
    clock_khz = cuda.Device(0).get_attribute(cuda.device_attribute.CLOCK_RATE)
    mod = cuda.module_from_buffer(
        nvcc_compile(SOURCE, options=["-O3"], no_extern_c=True, arch=info.arch)
    )
    chase_global, chase_shared = mod.get_function("chase_global"), mod.get_function("chase_shared")
    chase_shared.set_attribute(
        cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, 4 * SHARED_WORDS
    )
    big = cuda.to_device(sattolo(args.words, 1))
    small = cuda.to_device(sattolo(SHARED_WORDS, 2))
    out = cuda.mem_alloc(16)
    rows = []
    for kind, name in enumerate(KINDS):
        cycles = []
        for _ in range(args.repeat):
            if kind < 4:
                chase_global(big, np.int32(args.steps), np.int32(kind), out, block=(32, 1, 1))
            else:
                chase_shared(
                    small,
                    np.int32(SHARED_WORDS),
                    np.int32(args.steps),
                    np.int32(kind),
                    out,
                    block=(256, 1, 1),
                    grid=(2, 1, 1),
                    shared=4 * SHARED_WORDS,
                )
            got = np.zeros(2, np.int64)
            cuda.memcpy_dtoh(got, out)
            cycles.append(got[0] / args.steps)
        per = float(np.median(cycles))
        ns = per / clock_khz * 1e6
        rows.append({"kind": name, "cycles": round(per, 1), "ns": round(ns, 1)})
        print(
            f"{name:18s} {per:7.1f} cycles  {ns:6.1f} ns (at {clock_khz / 1e3:.0f} MHz)", flush=True
        )
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=("kind", "cycles", "ns"))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("latency_probe", main)
