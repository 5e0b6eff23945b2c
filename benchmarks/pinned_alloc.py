"""What a page-locked, device-mapped host block costs to allocate and to free, by size (needs a
CUDA GPU): the cost that a result pool avoids on the path from a solve's call to its result.

    python benchmarks/pinned_alloc.py [--sizes-mb 0.2 0.8 3.5 12 48] [--repeat 5]

For each size: ``pagelocked_empty(..., DEVICEMAP)`` and dropping it again (pycuda frees the block
when the last array over it goes), each timed with ``time.perf_counter`` and reported as the
median of ``--repeat``; beside it a plain ``numpy.empty`` of the same size, first written in
full (its page faults), and a copy of a page-locked block into it (what a result costs when it
is copied out of a solver's own block).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mb", type=float, nargs="+", default=[0.2, 0.8, 3.5, 12.0, 48.0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from sssp.gpu.device import activate, driver

    cuda = driver()
    activate(0)
    flags = cuda.host_alloc_flags.DEVICEMAP
    print("size_mb,alloc_us,free_us,numpy_touch_us,copy_us")
    for mb in args.sizes_mb:
        nbytes = int(mb * (1 << 20))
        alloc, free, touch, copy = [], [], [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            block = cuda.pagelocked_empty(nbytes, np.uint8, mem_flags=flags)
            alloc.append(time.perf_counter() - t)
            block.fill(1)
            t = time.perf_counter()
            plain = np.empty(nbytes, np.uint8)
            plain.fill(0)
            touch.append(time.perf_counter() - t)
            t = time.perf_counter()
            plain[...] = block
            copy.append(time.perf_counter() - t)
            t = time.perf_counter()
            del block
            free.append(time.perf_counter() - t)
            del plain
        med = lambda xs: 1e6 * float(np.median(xs))  # noqa: E731
        print(f"{mb},{med(alloc):.1f},{med(free):.1f},{med(touch):.1f},{med(copy):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("pinned_alloc", main)
