"""The kernels of this checkout against another's, with the same tuned configurations.

Run it once from each checkout (its own ``kernels/`` and ``sssp/`` on ``PYTHONPATH``), with the
kernel digest whose stored records both should use::

    python benchmarks/bench_ab.py --digest 54e9743fe1a5d3c7 --tag new random-98k-deg2000 grid-512
    (cd ../old && python benchmarks/bench_ab.py --digest 54e9743fe1a5d3c7 --tag old random-98k-deg2000)

The look-up of ``solve(tuned=True)`` is pinned to ``--digest``, so both checkouts run the
configuration tuned for those kernels whatever their own sources are. Per graph (the record's
names: ``random-SIZE-degD``, ``grid-N``, ``rgg-N``): warm-up solves for
``bench_sssp.WARMUP_SECONDS``, the median of
``timings["gpu"]`` (CUDA events) over ``--sources`` sources, the phases, µs per phase, and
whether every answer equals SciPy's. Alternate the two checkouts in one session: the H200's
noise between runs is larger than many of the differences this measures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sssp as bench  # noqa: E402

import kernels  # noqa: E402


def pin_digest(digest: str) -> None:
    """Make the tuned look-up see ``digest`` as engine 2's kernel version."""
    real = kernels.digest

    def pinned(file: str = kernels.SOURCE_FILE) -> str:
        return digest if file == kernels.ENGINE_SOURCE_FILE else real(file)

    kernels.digest = pinned


def spec(name: str) -> bench.Spec:
    if Path(name).is_file():
        return bench.Spec(Path(name).name.split(".")[0], "file", name)
    if name.startswith("random-"):
        parts = name.split("-")
        if (
            len(parts) != 3
            or not parts[2].removeprefix("deg").isdigit()
            or not parts[2].startswith("deg")
        ):
            raise bench.sssp.SSSPError(
                f"bad graph name {name!r}: expected random-SIZE-degD, e.g. random-24k-deg200"
            )
        return bench.Spec(name, "random", (parts[1], int(parts[2].removeprefix("deg"))))
    bench.parse_generated(name)
    return bench.Spec(name, "generated", name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "graphs",
        nargs="+",
        help="record names (random-24k-deg200, grid-512, rgg-196k) or graph files",
    )
    ap.add_argument(
        "--digest", required=True, help="the kernel digest whose tuned records both checkouts use"
    )
    ap.add_argument("--tag", default="this", help="label of this checkout in the output")
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    pin_digest(args.digest)
    try:
        for s in [spec(g) for g in args.graphs]:
            measure(s, args)
    except bench.sssp.SSSPError as err:
        print(f"bench_ab: {err}", file=sys.stderr)
        return 1
    return 0


def measure(s: bench.Spec, args: argparse.Namespace) -> None:
    """One line for graph ``s``: time, phases, µs per phase, exactness and the configuration."""
    graph = bench.build(s, args.seed)
    sources = bench.pick_sources(graph, args.sources, args.seed)
    row = bench.Row(s.name, graph.n, graph.m, len(sources))
    t0 = time.perf_counter()
    got = bench.measure_gpu(graph, sources, row, 0)
    ref = bench.scipy_reference(graph, sources, row)
    exact = all(np.array_equal(got[x], ref[x]) for x in sources)
    print(
        f"AB {args.tag} {s.name} n={graph.n} m={graph.m} alg={row.algorithm} phases={row.phases:.0f} "
        f"gpu_ms={row.gpu_ms:.3f} us_per_phase={1e3 * row.gpu_ms / row.phases:.1f} exact={exact} "
        f"config={row.config} src={row.config_source} ({time.perf_counter() - t0:.1f}s)",
        flush=True,
    )


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_ab", main)
