"""Parse throughput of ``sssp.formats`` on the real graphs and on a large synthetic METIS file.

For every file in the graphs folder (default ``<repo>/../shared/graphs``, or ``SSSP_GRAPHS_DIR``)
it times, best of ``--repeat`` runs:

- ``parse``: the format reader alone on the already decompressed bytes (text -> arcs);
- ``load``: ``sssp.formats.load`` end to end (read, decompress, parse, weights, CSR ``Graph``).

Throughput is MB (10**6 bytes) of decompressed text per second. Then a synthetic METIS text of
``--synthetic-mb`` MB is generated in memory (vectorised), written uncompressed to a temporary
file, and timed the same way.

Memory (``--memory-mb``, default 64): a SNAP edge list of that size (random ids, once sorted by
source as SNAP files are, once in random order) is written to a temporary file and loaded under
``tracemalloc`` (which sees NumPy's allocations); the peak is reported against the size of the
resulting CSR arrays (``indptr`` + ``indices`` + ``weights``). The target is below 4x.

Usage: ``python benchmarks/bench_parse.py [--repeat 3] [--synthetic-mb 60] [--memory-mb 64]
[--graphs DIR]`` (``--synthetic-mb 0``/``--memory-mb 0`` skip those parts)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sssp.formats import _PARSERS, detect_format, load
from sssp.formats._textio import read_bytes

DEFAULT_DIR = Path(
    os.environ.get("SSSP_GRAPHS_DIR")
    or Path(__file__).resolve().parents[1].parent / "shared" / "graphs"
)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def format_ints(values: np.ndarray, seps: np.ndarray) -> bytes:
    """Decimal text of non-negative ``values`` (int64), each followed by the byte in ``seps``."""
    width = np.ones(values.size, dtype=np.int64)
    rest = values // 10
    while rest.any():
        width += rest > 0
        rest //= 10
    ends = np.cumsum(width + 1)
    starts = ends - width - 1
    buf = np.empty(int(ends[-1]), dtype=np.uint8)
    rest = values.copy()
    for k in range(int(width.max())):
        live = width > k
        buf[(starts + width - 1 - k)[live]] = (48 + rest[live] % 10).astype(np.uint8)
        rest //= 10
    buf[starts + width] = seps
    return buf.tobytes()


def synthetic_metis(target_mb: float, seed: int = 1) -> bytes:
    """A random undirected multigraph (ring + random edges) as METIS text of about target_mb MB."""
    rng = np.random.default_rng(seed)
    n = max(1000, int(target_mb * 1e6 / 69))  # ~69 bytes per vertex line at mean degree 10
    extra = 4 * n
    src = np.concatenate([np.arange(n), rng.integers(0, n, extra)])
    dst = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, extra)])
    keep = src != dst
    src, dst = src[keep], dst[keep]
    s, d = np.concatenate([src, dst]), np.concatenate([dst, src])
    order = np.argsort(s, kind="stable")
    s, d = s[order], d[order]
    seps = np.full(s.size, ord(" "), dtype=np.uint8)
    seps[np.r_[s[1:] != s[:-1], True]] = ord("\n")
    return f"{n} {s.size // 2}\n".encode() + format_ints(d + 1, seps)


def synthetic_snap(target_mb: float, *, shuffled: bool, seed: int = 1) -> bytes:
    """A random directed edge list "u<TAB>v" of about target_mb MB, mean out-degree 8."""
    rng = np.random.default_rng(seed)
    m = max(1000, int(target_mb * 1e6 / 13.6))  # ~13.6 bytes per line with ids below 10**6
    n = max(2, m // 8)
    src = np.sort(rng.integers(0, n, m))
    dst = rng.integers(0, n, m)
    if shuffled:
        perm = rng.permutation(m)
        src, dst = src[perm], dst[perm]
    values = np.empty(2 * m, dtype=np.int64)
    values[0::2], values[1::2] = src, dst
    seps = np.empty(2 * m, dtype=np.uint8)
    seps[0::2], seps[1::2] = ord("\t"), ord("\n")
    return format_ints(values, seps)


def memory_peak(path: Path) -> tuple[float, float, int, int, float]:
    """Load ``path`` under tracemalloc: (peak bytes, CSR bytes, n, m, seconds)."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        g = load(path)
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    csr = g.indptr.nbytes + g.indices.nbytes + g.weights.nbytes
    return float(peak), float(csr), g.n, g.m, seconds


def row(label: str, fmt: str, size: int, t_parse: float, t_load: float) -> str:
    mb = size / 1e6
    return (
        f"{label:42s} {fmt:6s} {mb:8.2f} {t_parse * 1e3:9.1f} {mb / t_parse:8.1f} "
        f"{t_load * 1e3:9.1f} {mb / t_load:8.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--synthetic-mb", type=float, default=60.0)
    ap.add_argument("--memory-mb", type=float, default=64.0)
    args = ap.parse_args(argv)
    if not args.graphs.is_dir():
        print(f"graphs folder {args.graphs} is missing", file=sys.stderr)
        return 2
    files = sorted(
        p for p in args.graphs.rglob("*") if p.is_file() and p.suffix in (".gz", ".bz2", ".xz")
    )
    header = (
        f"{'file':42s} {'format':6s} {'MB':>8s} {'parse ms':>9s} {'MB/s':>8s} "
        f"{'load ms':>9s} {'MB/s':>8s}"
    )
    print(header)
    print("-" * len(header))
    total = t_parse_all = t_load_all = 0.0
    for path in files:
        fmt = detect_format(path)
        data = read_bytes(path)
        parser = _PARSERS[fmt]
        t_parse = best_of(
            lambda data=data, parser=parser, path=path: parser(data, path), args.repeat
        )
        t_load = best_of(lambda path=path: load(path), args.repeat)
        total += len(data)
        t_parse_all += t_parse
        t_load_all += t_load
        print(row(path.relative_to(args.graphs).as_posix(), fmt, len(data), t_parse, t_load))
    print("-" * len(header))
    print(row(f"aggregate ({len(files)} files)", "", int(total), t_parse_all, t_load_all))

    if args.synthetic_mb > 0:
        t0 = time.perf_counter()
        data = synthetic_metis(args.synthetic_mb)
        gen = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "synthetic.graph"
            path.write_bytes(data)
            t_parse = best_of(lambda: _PARSERS["metis"](data, path), args.repeat)
            t_load = best_of(lambda: load(path), args.repeat)
            g = load(path)
        print(f"synthetic METIS: n={g.n}, arcs={g.m}, generated in {gen:.1f} s")
        print(row("synthetic.graph", "metis", len(data), t_parse, t_load))

    if args.memory_mb > 0:
        print(
            f"\n{'edge list':24s} {'MB':>8s} {'n':>9s} {'arcs':>10s} {'load s':>7s} "
            f"{'peak MB':>8s} {'CSR MB':>8s} {'peak/CSR':>8s}"
        )
        for shuffled in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "big.txt"
                data = synthetic_snap(args.memory_mb, shuffled=shuffled)
                path.write_bytes(data)
                size = len(data)
                del data
                peak, csr, n, m, seconds = memory_peak(path)
            label = "random order" if shuffled else "sorted by source"
            print(
                f"{label:24s} {size / 1e6:8.1f} {n:9d} {m:10d} {seconds:7.2f} {peak / 1e6:8.1f} "
                f"{csr / 1e6:8.1f} {peak / csr:8.2f}"
            )
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_parse", main)
