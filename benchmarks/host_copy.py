"""What delivering rows to the caller costs on the host: copying a chunk of rows from page-locked
staging into an ordinary array with 1-16 threads (``EngineSolver.COPY_THREADS``), into memory
touched for the first time, and the device-to-host copy into page-locked memory.

    python benchmarks/host_copy.py [--rows 132] [--n 24576]

Prints one ``MEMBW`` line per measurement (best of five).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=132)
    ap.add_argument("--n", type=int, default=24576)
    args = ap.parse_args(argv)
    import pycuda.autoinit  # noqa: F401  (a context for the page-locked memory)
    import pycuda.driver as cuda

    src = cuda.pagelocked_empty((args.rows, args.n), np.int64)
    src[...] = 1
    dst = np.zeros_like(src)
    mb = src.nbytes >> 20
    for threads in (1, 2, 4, 8, 16):
        with ThreadPoolExecutor(threads) as pool:
            best = float("inf")
            bounds = np.linspace(0, len(src), threads + 1).astype(int)
            for _ in range(5):
                t0 = time.perf_counter()
                list(
                    pool.map(
                        lambda ab: dst.__setitem__(slice(ab[0], ab[1]), src[ab[0] : ab[1]]),
                        zip(bounds[:-1], bounds[1:], strict=True),
                    )
                )
                best = min(best, time.perf_counter() - t0)
        print(
            f"MEMBW threads {threads}: {src.nbytes / best / 1e9:.1f} GB/s ({best * 1e3:.2f} ms for {mb} MB)"
        )
    t0 = time.perf_counter()
    fresh = np.empty_like(src)
    fresh[...] = src
    print(f"MEMBW fresh target 1 thread: {src.nbytes / (time.perf_counter() - t0) / 1e9:.1f} GB/s")
    dsrc = cuda.mem_alloc(src.nbytes)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        cuda.memcpy_dtoh(src, dsrc)
        best = min(best, time.perf_counter() - t0)
    print(f"MEMBW D2H pinned: {src.nbytes / best / 1e9:.1f} GB/s")
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("host_copy", main)
