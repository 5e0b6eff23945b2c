"""Near-far (Δ-stepping) on the GPU against Crauser's phases, per graph family.

Run on a CUDA host::

    python benchmarks/bench_nearfar.py --out nearfar.csv [--graphs-dir DIR] [--generated grid-512 rgg-196k]

For every graph: Crauser OUT and IN+OUT with the default launch configuration, then near-far for
every Δ scale (a multiple of the default rule, :func:`sssp.cpu.nearfar.scaled_delta`) x lanes x
block-local limit. Each point: a warm-up solve, then the median over ``--sources`` sources of the
CUDA-event time of a whole solve, the steps (phases) and buckets, the cost per step (loop
time / steps) and the wall time (call to returned result); beside them the solver's
construction (module, upload, shortcut build: ``LABEL+sN``). Every answer is checked against SciPy's Dijkstra. This is the measurement behind
near-far's place in the tuner's search space (``tuner/engine_space.py``); ``bench_sssp.py`` is the
record against the CPU anchors.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu.nearfar import scaled_delta
from sssp.cpu.reference import dijkstra
from sssp.verify import VerificationError, check_tree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import generated, pick_sources  # noqa: E402  (a sibling script module)

COLUMNS = (
    "graph",
    "n",
    "m",
    "algorithm",
    "delta_scale",
    "delta",
    "config",
    "steps",
    "buckets",
    "gpu_ms",
    "step_us",
    "verified",
    "local_nodes",
    "wall_ms",
    "setup_s",
)
SCALES = (1.0, 4.0, 16.0, 64.0, 256.0)
CONFIGS = {
    "256x2-x1-local0": LaunchConfig(KernelConfig(256, "N", 1), blocks_per_sm=2, local_limit=0),
    "1024x1-x1-local8192": LaunchConfig(
        KernelConfig(1024, "N", 1), blocks_per_sm=1, local_limit=8192
    ),
    "1024x1-x4-local8192": LaunchConfig(
        KernelConfig(1024, "N", 4), blocks_per_sm=1, local_limit=8192
    ),
    "1024x1-x4-local32768": LaunchConfig(
        KernelConfig(1024, "N", 4), blocks_per_sm=1, local_limit=32768
    ),
    "1024x1-x32-local8192": LaunchConfig(
        KernelConfig(1024, "N", 32), blocks_per_sm=1, local_limit=8192
    ),
    # The cluster loop (kernels/sssp_cluster.cu): the fewest blocks that hold the graph, or at least 4 / 16.
    "cluster-1024": LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster"),
    "cluster-512": LaunchConfig(KernelConfig(512, "N", 8), loop="cluster"),
    "cluster-1024-c4": LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=4),
    "cluster-1024-c16": LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=16),
    # Fused: bands of reverse Cuthill-McKee, local work inside each block between cluster barriers.
    "fused-1024": LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", fuse=True),
    "fused-1024-c4": LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=4, fuse=True),
    "fused-1024-c16": LaunchConfig(
        KernelConfig(1024, "N", 8), loop="cluster", cluster=16, fuse=True
    ),
    # Fused across blocks: a target of another block below the threshold joins that block's queue,
    # so the cluster meets once per bucket (bands where they keep edges local, else v % C).
    "across-1024": LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", fuse=2),
    "across-1024-c16": LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster", cluster=16, fuse=2),
    # A contraction hierarchy's sweep, a step per level (sssp.gpu.phast; Δ means nothing to it):
    # block 0 sweeps the top levels of up to 1 024 nodes, none, or up to 8 192.
    "phast": LaunchConfig(loop="phast"),
    "phast-grid": LaunchConfig(loop="phast", local_limit=0),  # every level a grid step
    "phast-8192": LaunchConfig(loop="phast", local_limit=8192),
    # ... with a node's in-edges split over up to 4 or 32 lanes (fewer where a level is wide)
    "phast-x4": LaunchConfig(KernelConfig(1024, "N", 4), loop="phast"),
    "phast-x32": LaunchConfig(KernelConfig(1024, "N", 32), loop="phast"),
    "phast-grid-x32": LaunchConfig(KernelConfig(1024, "N", 32), loop="phast", local_limit=0),
}


UNSTAGED = "+unstaged"
"""A phast label's suffix: block 0 reads its top levels' in-edges from global memory instead of
staging them in shared memory first (:attr:`sssp.gpu.phast.PhastSweep.stage_edges`, on by
default; runs 121-122 labelled the staged points ``+stage``)."""
NAP = "+nap"
"""A phast label's suffix ``+napN``: the sweep's threads nap up to N ns between two polls of a
tail not yet published (:attr:`sssp.gpu.phast.PhastSweep.nap_ns`; 0: they never nap)."""
CORE = "+core"
"""A phast label's suffix ``+coreN``: the host keeps the distances between the nodes of the top
levels of at most N nodes, and the device sweeps only the levels below them
(``LaunchConfig.core``; 0, the default: none)."""

EARLY = "+early"
"""A phast label's suffix: a single solve launches the sweep before the host's upward search
and writes the seeds into mapped host memory after it
(:attr:`sssp.gpu.phast.PhastSweep.early_launch`); without it, a label turns that off (run 141
measured it so, before it became the default)."""

DEVICE_SEARCH = "+dsearch"
"""A phast label's suffix: the sweep's block 0 searches upward from the source itself, no
search on the host (:attr:`sssp.gpu.phast.PhastSweep.device_search`); without it, the host
searches."""

LABELS = "+labels"
"""A phast label's suffix: the solver keeps every position's upward search on the device and a
solve launches from its source's (:attr:`sssp.gpu.phast.PhastSweep.labels`); without it, the
labels are off."""


class PhastOptions(NamedTuple):
    """A phast label's parts (:func:`phast_options`)."""

    name: str
    """The label without its phast suffixes."""
    stage: bool
    nap: int | None
    """The longest nap, or None for the default."""
    core: int | None
    """The core's most nodes, or None for the default."""
    early: bool
    search: bool
    labels: bool


def phast_options(label: str) -> PhastOptions:
    """``label``'s phast suffixes, in any order, last: ``+unstaged``, ``+napN``, ``+coreN``,
    ``+early``, ``+dsearch`` and ``+labels``."""
    stage, nap, core, early, search, labels = True, None, None, False, False, False
    while True:
        if label.endswith(UNSTAGED):
            label, stage = label.removesuffix(UNSTAGED), False
            continue
        if label.endswith(EARLY):
            label, early = label.removesuffix(EARLY), True
            continue
        if label.endswith(DEVICE_SEARCH):
            label, search = label.removesuffix(DEVICE_SEARCH), True
            continue
        if label.endswith(LABELS):
            label, labels = label.removesuffix(LABELS), True
            continue
        head, plus, ns = label.rpartition(NAP)
        if plus and ns.isdigit():
            label, nap = head, int(ns)
            continue
        head, plus, nodes = label.rpartition(CORE)
        if plus and nodes.isdigit():
            label, core = head, int(nodes)
            continue
        return PhastOptions(label, stage, nap, core, early, search, labels)


def config_for(label: str) -> LaunchConfig:
    """The configuration of ``label``: a name of :data:`CONFIGS`, optionally with ``+sN`` for N
    shortcut edges per node (``LaunchConfig.shortcuts``), e.g. ``cluster-1024+s16``, or
    ``+unstaged`` (:data:`UNSTAGED`), ``+napN`` (:data:`NAP`) and ``+coreN`` (:data:`CORE`)
    after a phast name."""
    label, core = (o := phast_options(label)).name, o.core
    base, plus, rho = label.partition("+s")
    if base not in CONFIGS or (plus and not rho.isdigit()):
        raise sssp.SSSPError(
            f"unknown configuration {label!r}: use one of {', '.join(CONFIGS)}, +sN"
        )
    config = replace(CONFIGS[base], shortcuts=int(rho)) if plus else CONFIGS[base]
    return config if core is None else replace(config, core=core)


def graphs(args: argparse.Namespace):
    for spec in args.random:
        size, deg = spec.split("x")
        yield (
            f"random-{size}-deg{deg}",
            lambda s=size, d=deg: sssp.generate("random", size=s, degree=int(d), seed=0),
        )
    for name in args.generated:
        yield name, lambda nm=name: generated(nm, 0)
    if args.graphs_dir:
        for path in sorted(Path(args.graphs_dir).rglob("*.gz")):
            # the record's weights (bench_sssp.py): uniform random 1..100 on every real graph
            yield path.name.split(".")[0], lambda p=path: sssp.load(p, weights="random", seed=0)


@contextlib.contextmanager
def phast_sweep(label: str):
    """The phast sweep's options of ``label`` that are no configuration's (:func:`phast_options`:
    staging, naps, the early launch, the device's search, the labels) set on
    :class:`sssp.gpu.phast.PhastSweep` while the block
    runs (the solvers it makes and runs); ``+coreN`` is the configuration's
    (:func:`config_for`)."""
    from sssp.gpu.phast import PhastSweep

    o = phast_options(label)
    names = ("stage_edges", "nap_ns", "early_launch", "device_search", "labels")
    saved = {name: getattr(PhastSweep, name) for name in names}
    PhastSweep.stage_edges, PhastSweep.early_launch = o.stage, o.early
    PhastSweep.device_search, PhastSweep.labels = o.search, o.labels
    if o.nap is not None:
        PhastSweep.nap_ns = o.nap
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(PhastSweep, name, value)


def measure(graph, sources, refs, **kw) -> tuple[float, int, int, float, str, int, float, float]:
    """(CUDA-event ms, steps, buckets, loop us a step, verified, local nodes, wall ms: medians
    over ``sources``; the solver's construction in seconds: module, upload, shortcut build)."""
    t0 = time.perf_counter()
    solver = sssp.Solver(graph, backend="gpu", **kw)
    with solver:
        setup_s = time.perf_counter() - t0
        solver.solve(sources[0])
        times, walls, steps, buckets, loop, local = [], [], [], [], [], []
        ok = True
        for s in sources:
            r = solver.solve(s)
            ok &= bool(np.array_equal(r.dist, refs[s]))
            if "shortcuts" in r.stats or "phast" in r.stats:  # trees on the graph's own edges
                try:
                    check_tree(graph, r)
                except VerificationError as err:
                    print(f"  tree from {s}: {err}", flush=True)
                    ok = False
            times.append(1e3 * r.timings.get("gpu", r.timings["total"]))
            walls.append(1e3 * r.timings["wall"])
            loop.append(1e3 * r.timings["loop"])
            steps.append(r.iterations)
            buckets.append(r.stats.get("buckets", 0))
            local.append(r.stats.get("local_nodes", 0))
    st = float(np.median(steps))
    if "cluster_fallback" in r.stats:
        print(f"  cluster loop fell back: {r.stats['cluster_fallback']}", flush=True)
    if "phast" in r.stats:  # the sweep's shape and where the last solve's time went
        parts = {k: f"{1e6 * v:.0f}us" for k, v in r.timings.items()}
        print(f"  phast {r.stats['phast']} seeds {r.stats['upward_settled']} {parts}", flush=True)
    return (
        float(np.median(times)),
        int(st),
        int(np.median(buckets)),
        1e3 * float(np.median(loop)) / max(st, 1),
        "yes" if ok else "no",
        int(np.median(local)),
        float(np.median(walls)),
        setup_s,
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=Path("bench_nearfar.csv"))
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--graphs-dir")
    ap.add_argument("--min-nodes", type=int, default=10_000)
    ap.add_argument("--random", nargs="*", default=["24kx2", "98kx2", "98kx20"], metavar="SIZExDEG")
    ap.add_argument("--generated", nargs="*", default=[], metavar="NAME")
    ap.add_argument("--budget-seconds", type=float, default=300)
    ap.add_argument(
        "--configs",
        nargs="*",
        default=list(CONFIGS),
        metavar="LABEL",
        help="near-far launch configurations to run (default: all); LABEL+sN adds N shortcut "
        "edges per node (e.g. cluster-1024+s16)",
    )
    ap.add_argument(
        "--scales",
        nargs="*",
        type=float,
        default=list(SCALES),
        metavar="S",
        help="Δ scales to run, as multiples of the default rule (default: %(default)s)",
    )
    ap.add_argument("--no-crauser", action="store_true", help="skip the two Crauser baselines")
    args = ap.parse_args()
    configs = {label: config_for(label) for label in args.configs}
    t0 = time.perf_counter()
    bad = 0
    with args.out.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(COLUMNS)
        for name, make in graphs(args):
            if time.perf_counter() - t0 > args.budget_seconds:
                print(f"budget spent: stopping before {name}", flush=True)
                break
            graph = make()
            if graph.n < args.min_nodes:
                continue
            sources = pick_sources(graph, args.sources, 0)
            refs = {s: dijkstra(graph, s).dist for s in sources}
            points = (
                []
                if args.no_crauser
                else [
                    (a, None, None, "default", LaunchConfig.default())
                    for a in ("crauser", "crauser-inout")
                ]
            )
            for scale in args.scales:
                delta = scaled_delta(graph, scale)
                points += [("near-far", scale, delta, label, cfg) for label, cfg in configs.items()]
            for algorithm, scale, delta, label, cfg in points:
                kw = {"algorithm": algorithm, "config": cfg}
                if delta is not None:
                    kw["delta"] = delta
                try:
                    with phast_sweep(label):
                        ms, steps, buckets, step_us, ok, local, wall, setup = measure(
                            graph, sources, refs, **kw
                        )
                except Exception as err:  # a point that cannot run is data
                    print(f"{name} {algorithm} {label}: {type(err).__name__}: {err}", flush=True)
                    ms, steps, buckets, step_us, ok, local, wall, setup = (
                        float("nan"),
                        0,
                        0,
                        float("nan"),
                        "no",
                        0,
                        float("nan"),
                        float("nan"),
                    )
                bad += ok != "yes"
                row = (
                    name,
                    graph.n,
                    graph.m,
                    algorithm,
                    scale or "",
                    delta or "",
                    label,
                    steps,
                    buckets,
                    f"{ms:.4g}",
                    f"{step_us:.3g}",
                    ok,
                    local,
                    f"{wall:.4g}",
                    f"{setup:.3g}",
                )
                out.writerow(row)
                fh.flush()
                print(" ".join(map(str, row)), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_nearfar", main)
