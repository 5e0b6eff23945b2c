"""The many-sources record: distances from k sources at once on the GPU against what a CPU user
runs for the same table.

    python benchmarks/many_sources.py --anchors DIR --graphs-dir GRAPHS --out OUT [NAME ...]

Graph names as in ``bench_sssp.py`` (``random-24k-deg2``, ``grid-512``, ``rgg-196k``, ``road-1M``, a file stem
under ``--graphs-dir``, ``gap-kron-22``); without names, the record's default set
(:data:`DEFAULT_GRAPHS`). Per graph, one thing at a time (nothing else running while a CPU anchor
is timed), k = ``--k`` sources (``--big-k`` above a million nodes), distinct nodes with out-edges:

1. GPU: ``sssp.Solver(graph, backend="gpu", tuned=True)``, ``solve_many(sources, out=table)``
   into an int64 table twice: the first call's wall time over k is ``gpu_first_wall_ms_per_source``
   (it makes the batch's page-locked stagings, kept for later batches), the second's
   ``gpu_wall_ms_per_source``, its device time (``timings["gpu"]``) over k ``gpu_ms_per_source``;
2. Boost: 16 single-threaded ``boost_dijkstra`` processes at once (``--processes``), the sources
   dealt out in turn; ``boost16_ms_per_source`` is the largest sum of one process's solve times
   over k (loading the graph excluded, as in the single-source record); every GPU row is checked
   against its process's checksum (the sum of the finite distances);
3. GAP: Δ-stepping on all cores, one source at a time, its best Δ of ``--gap-deltas`` on the first
   source, the median over ``--gap-sources`` sources (``gap_ms_per_source``);
4. SciPy: ``dijkstra(indices=...)`` on ``--scipy-sources`` of the sources in one call, per source
   (``scipy_ms_per_source``); those rows must equal the GPU's exactly.

With ``--devices 0,1`` the GPU batches run on those devices (``solve_many(..., devices=...)``,
each device with its own tuned record) and ``devices`` says how many; ``lanes`` is then per
device. 2-GPU throughput against one GPU's: the same graphs run with and without ``--devices``.

``verified`` is ``yes`` when every GPU row matched Boost's checksum and the SciPy rows exactly.
Writes ``OUT/many_sources.csv`` (:data:`COLUMNS`, after a ``#`` line naming the device, driver,
date and kernels), rewritten after every graph.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import sssp
from sssp.cliutil import device_list

sys.path.insert(0, str(Path(__file__).resolve().parent))
import anchors  # noqa: E402  (a sibling script module)
import bench_sssp  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "m",
    "k",
    "gpu_ms_per_source",
    "gpu_wall_ms_per_source",
    "boost16_ms_per_source",
    "gap_ms_per_source",
    "scipy_ms_per_source",
    "verified",
    "algorithm",
    "loop",
    "lanes",
    "boost16_wall_ms_per_source",
    "boost16_vs_gpu",
    "gap_vs_gpu",
    "gpu_first_wall_ms_per_source",
    "devices",
    "batch",
)
"""``boost16_vs_gpu`` and ``gap_vs_gpu`` divide by the GPU's wall time per source; ``devices``
is the number of GPUs the batch ran on (``--devices``; 1 without it); ``batch`` how the rows
ran (the batch kernel's layout, or a launch per source and why)."""
DEFAULT_GRAPHS = (
    "random-24k-deg2",
    "random-98k-deg2",
    "random-98k-deg20",
    "random-98k-deg200",
    "t60k",
    "COL",
    "delaunay_n15",
    "fe_body",
    "as-22july06",
    "grid-512",
    "rgg-196k",
)
NAN = float("nan")


def build(name: str, args: argparse.Namespace, tmp: Path) -> sssp.Graph:
    if name.startswith("random-"):
        _, size, deg = name.split("-")
        return sssp.generate(
            "random", size=size, degree=int(deg.removeprefix("deg")), seed=args.seed
        )
    if name.startswith(bench_sssp.GENERATED):
        return bench_sssp.generated(name, args.seed)
    if name.startswith("gap-"):
        family, scale = bench_sssp.parse_gap_family(name.removeprefix("gap-"))
        return bench_sssp.gap_graph(family, scale, args.anchors / "gap_converter", tmp)
    files = [p for p in sorted(Path(args.graphs_dir).rglob("*.gz")) if p.name.split(".")[0] == name]
    if not files:
        raise sssp.SSSPError(f"{name}: no file {name}.* under {args.graphs_dir}")
    return sssp.load(files[0], weights="random", seed=args.seed)


def checksum_rows(table: np.ndarray) -> np.ndarray:
    finite = table != sssp.UNREACHABLE
    return np.where(finite, table, 0).sum(axis=1)


def measure(name: str, graph: sssp.Graph, args: argparse.Namespace, tmp: Path) -> dict:
    k = args.big_k if graph.n > bench_sssp.BIG_NODES else args.k
    sources = bench_sssp.pick_sources(graph, k, args.seed)
    k = len(sources)
    row: dict = {"graph": name, "n": graph.n, "m": graph.m, "k": k}
    checks: list[str] = []
    table = np.empty((k, graph.n), np.int64)
    spread = {} if args.devices is None else {"devices": args.devices}
    with sssp.Solver(graph, backend="gpu", tuned=True) as solver:
        t0 = time.perf_counter()
        # The first batch: the batch kernel or the lanes and the stagings made (and with
        # devices, the other uploads).
        solver.solve_many(sources, out=table, **spread)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = solver.solve_many(sources, out=table, **spread)
        wall = time.perf_counter() - t0
        row["gpu_first_wall_ms_per_source"] = 1e3 * first / k
        row.update(
            gpu_wall_ms_per_source=1e3 * wall / k,
            gpu_ms_per_source=1e3 * float(res.timings.get("gpu", NAN)) / k,
            algorithm=res.algorithm,
            loop=res.stats.get("loop", "?"),
            lanes=res.stats.get("lanes", res.stats.get("workers", 1) // len(args.devices or [0])),
            devices=len(args.devices or [0]),
            batch=res.stats.get("batch", ""),
        )
        del res
    # SciPy on a few of the sources: exact rows.
    from scipy.sparse.csgraph import dijkstra

    from sssp.cpu.reference import min_weight_csr

    few = sources[: args.scipy_sources]
    matrix = min_weight_csr(graph)
    t0 = time.perf_counter()
    ref = dijkstra(matrix, directed=True, indices=few)
    row["scipy_ms_per_source"] = 1e3 * (time.perf_counter() - t0) / len(few)
    want = np.where(np.isfinite(ref), ref, 0).astype(np.int64)
    want[~np.isfinite(ref)] = sssp.UNREACHABLE
    if not np.array_equal(table[: len(few)], want):
        checks.append("scipy MISMATCH")
    del matrix, ref, want
    binary = args.anchors / anchors.BINARIES["boost"]
    if binary.exists():
        dump = tmp / "graph.csr"
        anchors.write_csr_dump(graph, dump)
        try:
            makespan, bwall, sums = anchors.run_boost_parallel(
                binary, dump, sources, args.processes
            )
        finally:
            dump.unlink()
        row["boost16_ms_per_source"] = 1e3 * makespan / k
        row["boost16_wall_ms_per_source"] = 1e3 * bwall / k
        got = checksum_rows(table)
        if any(int(got[i]) != sums[s] for i, s in enumerate(sources)):
            checks.append("boost MISMATCH")
    binary = args.anchors / anchors.BINARIES["gap"]
    if binary.exists() and anchors.gap_fits(graph):
        wsg = tmp / "graph.wsg"
        anchors.write_wsg(graph, wsg, in_edges=graph.m % 2 == 1)
        try:
            first = {
                d: anchors.run_gap(binary, wsg, sources[0], d, trials=args.gap_trials).seconds
                for d in args.gap_deltas
            }
            best = min(first, key=first.get)
            times = [first[best]] + [
                anchors.run_gap(binary, wsg, s, best, trials=args.gap_trials).seconds
                for s in sources[1 : args.gap_sources]
            ]
        finally:
            wsg.unlink()
        row["gap_ms_per_source"] = 1e3 * float(np.median(times))
    row["verified"] = "no" if checks or "boost16_ms_per_source" not in row else "yes"
    for key in COLUMNS:
        row.setdefault(key, NAN)
    row["boost16_vs_gpu"] = row["boost16_ms_per_source"] / row["gpu_wall_ms_per_source"]
    row["gap_vs_gpu"] = row["gap_ms_per_source"] / row["gpu_wall_ms_per_source"]
    if checks:
        print(f"many_sources: {name}: {', '.join(checks)}", file=sys.stderr)
    return row


def header(args: argparse.Namespace) -> str:
    import kernels

    try:
        from sssp.gpu import device_info

        info = device_info(0)
        device = f"device={info.name} driver={info.driver_version}"
    except sssp.SSSPError:
        device = "device=none"
    return (
        f"# {device} date={dt.datetime.now(dt.UTC):%Y-%m-%dT%H:%M:%SZ} "
        f"kernels={kernels.digest(kernels.ENGINE_SOURCE_FILE)} cpu={anchors.cpu_model()} "
        f"boost_processes={args.processes}"
        f"{'' if args.devices is None else ' devices=' + ','.join(map(str, args.devices))}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="*", default=list(DEFAULT_GRAPHS))
    ap.add_argument("--anchors", type=Path, required=True)
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--big-k", type=int, default=64)
    ap.add_argument("--processes", type=int, default=16)
    ap.add_argument("--scipy-sources", type=int, default=4)
    ap.add_argument("--gap-sources", type=int, default=3)
    ap.add_argument("--gap-deltas", type=lambda s: [int(x) for x in s.split(",")], default=[8, 32])
    ap.add_argument("--gap-trials", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--devices",
        type=device_list,
        help="run the GPU batches on these device ordinals, e.g. 0,1 (default: device 0 alone)",
    )
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows, head = [], header(args)
    with tempfile.TemporaryDirectory(prefix="many-sources-") as tmp:
        for name in args.graphs:
            t0 = time.perf_counter()
            graph = build(name, args, Path(tmp))
            row = measure(name, graph, args, Path(tmp))
            rows.append(row)
            part = args.out / "many_sources.csv.part"
            with open(part, "w", newline="") as f:
                f.write(head + "\n")
                w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
                w.writeheader()
                w.writerows(rows)
            part.replace(args.out / "many_sources.csv")
            print(
                f"many_sources: {name}: n {graph.n} k {row['k']} {row['algorithm']}/{row['loop']} lanes {row['lanes']}"
                f" devices {row['devices']}"
                f" gpu {row['gpu_ms_per_source']:.4f} wall {row['gpu_wall_ms_per_source']:.4f}"
                f" boost16 {row['boost16_ms_per_source']:.4f} ({row['boost16_vs_gpu']:.1f}x)"
                f" gap {row['gap_ms_per_source']:.3f} ({row['gap_vs_gpu']:.1f}x)"
                f" scipy {row['scipy_ms_per_source']:.3f} ms/source {row['verified']}"
                f" [{time.perf_counter() - t0:.1f} s]",
                flush=True,
            )
    return 0 if all(r["verified"] == "yes" for r in rows) else 1


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("many_sources", main)
