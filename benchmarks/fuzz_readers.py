"""Long fuzz run of every graph reader against the reference readers of
``tests/reference_readers.py`` (the same oracle as ``tests/test_fuzz_readers.py``, for longer).

For ``--seconds`` (default 300) it draws a format, writes a random valid file of it, mutates it
(4 cases in 5) and sometimes compresses it, then loads it with ``sssp.load`` from a private
temporary folder. Every case must give exactly the reference's graph, or a one-line
``SSSPError`` exactly when the reference refuses the file. A worker process reads the files, so
a crash of the interpreter (a segfault) is caught and counted as well. Failing inputs are
written to ``--keep`` (default: a temporary folder that is reported) to become regression files
under ``tests/data/readers/``.

Usage: ``python benchmarks/fuzz_readers.py [--seconds 300] [--seed 0] [--keep DIR]``
Prints the case count per format and outcome, and exits 1 when any case failed.
"""

from __future__ import annotations

import argparse
import bz2
import collections
import gzip
import multiprocessing as mp
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reference_readers import FORMATS, check, mutate, random_file  # noqa: E402

SUFFIX = {"metis": ".graph", "dimacs": ".gr", "mtx": ".mtx", "snap": ".txt"}


def _case(task: tuple[str, bytes, str, str]) -> tuple[str, str]:
    """Run one case in the worker: ("match" | "refused" | "FAIL", detail)."""
    fmt, data, codec, folder = task
    from sssp.errors import SSSPError
    from sssp.formats import load

    try:
        outcome = check(fmt, data)  # parse_bytes on the decompressed content, against the oracle
        path = Path(folder) / f"case{SUFFIX[fmt]}{codec}"
        packed = {"": data, ".gz": gzip.compress(data), ".bz2": bz2.compress(data)}[codec]
        path.write_bytes(packed)
        try:
            load(path)  # and the streamed file path must agree with it
            streamed = "match"
        except SSSPError:
            streamed = "refused"
        if streamed != outcome:
            return "FAIL", f"load() {streamed} but parse_bytes() {outcome}"
        return outcome, ""
    except AssertionError as err:
        return "FAIL", str(err)[:500]
    except Exception as err:  # a traceback a user would have seen
        return "FAIL", f"{type(err).__name__}: {err}"[:500]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, default=None, help="folder for failing inputs")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    keep = args.keep
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    failures = 0
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sssp-fuzz-work-") as work:
        pool = mp.get_context("spawn").Pool(1)
        try:
            while time.monotonic() - t0 < args.seconds:
                fmt = rng.choice(FORMATS)
                data = random_file(rng, fmt)
                if rng.random() < 0.8:
                    data = mutate(rng, data)
                codec = rng.choice(["", "", "", ".gz", ".bz2"])
                try:
                    outcome, detail = pool.apply_async(_case, ((fmt, data, codec, work),)).get(
                        timeout=60
                    )
                except mp.TimeoutError:
                    outcome, detail = "FAIL", "timed out"
                except Exception as err:  # the worker died (segfault): start a new one
                    outcome, detail = "FAIL", f"worker died: {err!r}"
                    pool.terminate()
                    pool = mp.get_context("spawn").Pool(1)
                counts[(fmt, outcome)] += 1
                if outcome == "FAIL":
                    failures += 1
                    if keep is None:
                        keep = Path(tempfile.mkdtemp(prefix="sssp-fuzz-failures-"))
                    keep.mkdir(parents=True, exist_ok=True)
                    (keep / f"fail{failures}{SUFFIX[fmt]}").write_bytes(data)
                    print(f"FAIL {fmt}: {detail}", file=sys.stderr)
        finally:
            pool.terminate()
    elapsed = time.monotonic() - t0
    total = sum(counts.values())
    print(f"{total} cases in {elapsed:.0f} s (seed {args.seed}); failures: {failures}")
    for fmt in FORMATS:
        row = {k: counts[(fmt, k)] for k in ("match", "refused", "FAIL")}
        print(
            f"  {fmt:7s} match {row['match']:6d}  refused {row['refused']:6d}  FAIL {row['FAIL']}"
        )
    if failures:
        print(f"failing inputs in {keep}")
    return 1 if failures else 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("fuzz_readers", main)
