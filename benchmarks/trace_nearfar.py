"""Where a near-far step's time goes: the kernel's clock64 trace, per move, on the GPU.

Run on a CUDA host, from the repository root with ``sssp`` importable::

    python benchmarks/trace_nearfar.py crack t60k random-98k-deg2 --graphs-dir ../shared/graphs \\
        --out trace.jsonl

Compiles engine 2 with ``SSSP_NF_TRACE=1`` (``kernels/sssp_nearfar.cu``: block 0's thread 0 stamps
``clock64()`` at fixed points of every move; off in every normal build) and solves each graph with
near-far from ``--sources`` sources under a few launch configurations. Per graph and configuration
it writes one JSON line: the median CUDA-event time of a solve (checked against SciPy's
Dijkstra), steps, block-local moves, and medians over the moves of the last solve, split into
block-local and grid moves: the ring read, the move, the gap to the next move (the grid barrier,
or a block barrier), and inside a step, for thread 0's first entry and first edge, the list read,
the key and ``pushed`` read, the edge's atomicMin and the stamp and append. All in microseconds at
the SM clock the driver reports. On the cluster loop (``cluster-*`` configurations,
``kernels/sssp_cluster.cu``) a step's segments are the scan that builds the list, the load of its
rows (when the graph is not resident), the walk of its edges, the cluster barrier, and the rest
(the choice from the inbox).

Graph names: ``random-<size>-deg<d>`` (``sssp.generate``), ``grid-<side>`` / ``rgg-<n>`` (the
record's generated families) or the stem of a ``*.gz`` under ``--graphs-dir`` (random weights
1..100, as in the record).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import kernels

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_nearfar  # noqa: E402  (sibling script modules)
from bench_sssp import generated, pick_sources  # noqa: E402

from sssp.config import KernelConfig, LaunchConfig  # noqa: E402

SLOTS = 8
"""Trace words per move (see ``SSSP_NF_MARK`` in kernels/sssp_nearfar.cu)."""
CONFIGS = {
    "x4-local8192": LaunchConfig(KernelConfig(1024, "N", 4), blocks_per_sm=1, local_limit=8192),
    "x8-local8192": LaunchConfig(KernelConfig(1024, "N", 8), blocks_per_sm=1, local_limit=8192),
    "x4-local0": LaunchConfig(KernelConfig(1024, "N", 4), blocks_per_sm=1, local_limit=0),
    "x16-local2048-256x1": LaunchConfig(
        KernelConfig(256, "N", 16), blocks_per_sm=1, local_limit=2048
    ),
    **{label: cfg for label, cfg in bench_nearfar.CONFIGS.items() if cfg.loop == "cluster"},
}
"""label -> near-far launch configuration (the cluster loop's are bench_nearfar.py's)."""
CLUSTER_SEGMENTS = ((0, 1, "scan"), (1, 6, "rows"), (6, 2, "walk"), (2, 3, "barrier"))
SEGMENTS = (
    (1, 4, "list_read"),
    (4, 5, "key_read"),
    (5, 6, "edge_atomic"),
    (6, 7, "stamp_append"),
    (7, 2, "rest"),
)


def traced_build() -> None:
    """Every engine-2 compile in this process adds SSSP_NF_TRACE=1 (pycuda caches by source and
    options, so the traced cubins never mix with normal ones)."""
    plain = kernels.EngineParams.nvcc_flags
    kernels.EngineParams.nvcc_flags = lambda self: [*plain(self), "-DSSSP_NF_TRACE=1"]


def load(name: str, graphs_dir: Path | None):
    import sssp

    if name.startswith("random-"):
        _, size, deg = name.split("-")
        return sssp.generate("random", size=size, degree=int(deg.removeprefix("deg")), seed=0)
    if name.startswith(("grid-", "rgg-")):
        return generated(name, 0)
    found = sorted(Path(graphs_dir).rglob(f"{name}.*gz")) if graphs_dir else []
    if not found:
        raise SystemExit(
            f"trace_nearfar: no graph {name!r} (give --graphs-dir, or a random-/grid-/rgg- name)"
        )
    return sssp.load(found[0], weights="random", seed=0)


def summary(trace: np.ndarray, moves: int, clock_hz: float) -> dict:
    """Medians (µs) over the steps of one traced solve (raises, with an empty list, left out)."""
    t = trace.reshape(-1, SLOTS)[:moves].astype(np.int64)
    local = ((t[:, 3] >> 40) & 1) == 1
    step = (t[:, 3] & ((1 << 40) - 1)) > 0
    us = 1e6 / clock_hz

    def med(x: np.ndarray, mask: np.ndarray) -> float | None:
        return round(float(np.median(x[mask])) * us, 3) if mask.any() else None

    out: dict = {"local_moves": int(local.sum())}
    gap = np.append(t[1:, 0] - t[:-1, 2], 0)
    has_next = np.arange(len(t)) < len(t) - 1
    for kind, mask in (("local", local & step), ("grid", ~local & step)):
        out[f"{kind}_ring_us"] = med(t[:, 1] - t[:, 0], mask)
        out[f"{kind}_move_us"] = med(t[:, 2] - t[:, 1], mask)
        out[f"{kind}_gap_us"] = med(gap, mask & has_next)
        out[f"{kind}_list_len"] = (
            float(np.median((t[:, 3] & ((1 << 40) - 1))[mask])) if mask.any() else None
        )
        for a, b, name in SEGMENTS:
            ok = mask & (t[:, a] > 0) & (t[:, b] >= t[:, a])
            out[f"{kind}_{name}_us"] = med(t[:, b] - t[:, a], ok)
    return out


def cluster_summary(trace: np.ndarray, steps: int, clock_hz: float) -> dict:
    """Medians (µs) over the steps of one traced cluster solve (SSSP_NFC_MARK)."""
    t = trace.reshape(-1, SLOTS)[:steps].astype(np.int64)
    us = 1e6 / clock_hz
    out: dict = {
        f"{name}_us": round(float(np.median(t[:, b] - t[:, a])) * us, 3)
        for a, b, name in CLUSTER_SEGMENTS
    }
    if len(t) > 1:
        out["rest_us"] = round(float(np.median(t[1:, 0] - t[:-1, 3])) * us, 3)
    out["step_us"] = round(float(np.median(np.diff(t[:, 0]))) * us, 3) if len(t) > 1 else None
    out["list_len"] = float(np.median(t[:, 4]))
    out["list_edges"] = float(np.median(t[:, 5]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("graphs", nargs="+", metavar="NAME")
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument(
        "--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS), metavar="LABEL"
    )
    ap.add_argument(
        "--scale", type=float, default=64.0, help="Δ as a multiple of the default rule (default 64)"
    )
    ap.add_argument("--sources", type=int, default=3)
    ap.add_argument("--out", type=Path, help="JSON lines (default: standard output only)")
    args = ap.parse_args()

    traced_build()
    from sssp.cpu.nearfar import scaled_delta
    from sssp.cpu.reference import dijkstra
    from sssp.gpu.engine import EngineSolver

    out = args.out.open("w") if args.out else None
    wrong = 0
    for name in args.graphs:
        graph = load(name, args.graphs_dir)
        sources = pick_sources(graph, args.sources, 0)
        refs = {s: dijkstra(graph, s).dist for s in sources}
        for label in args.configs:
            cfg = CONFIGS[label]
            with EngineSolver(
                graph, algorithm="near-far", config=cfg, delta=scaled_delta(graph, args.scale)
            ) as sv:
                ptr, size = sv.module.get_global("sssp_nf_trace")
                clock_hz = 1e3 * sv.cuda.Device(sv.info.ordinal).get_attribute(
                    sv.cuda.device_attribute.CLOCK_RATE
                )
                sv.solve(sources[0])  # warm-up
                times, ok = [], True
                for s in sources:
                    sv.cuda.memset_d8(ptr, 0, size)
                    r = sv.solve(s)
                    ok &= bool(np.array_equal(r.dist, refs[s]))
                    times.append(1e3 * r.timings.get("gpu", r.timings["total"]))
                trace = np.empty(size // 8, np.uint64)
                sv.cuda.memcpy_dtoh(trace, ptr)
            wrong += not ok
            row = {
                "graph": name,
                "config": label,
                "delta_scale": args.scale,
                "gpu_ms": round(float(np.median(times)), 4),
                "verified": "yes" if ok else "no",
                "steps": r.iterations,
                "buckets": r.stats["buckets"],
                "sm_clock_mhz": clock_hz / 1e6,
                "cluster_blocks": r.stats.get("cluster_blocks"),
                **(
                    cluster_summary(trace, r.iterations, clock_hz)
                    if "cluster_blocks" in r.stats
                    else summary(trace, r.iterations + r.stats["buckets"], clock_hz)
                ),
            }
            line = json.dumps(row)
            print(line, flush=True)
            if out:
                out.write(line + "\n")
                out.flush()
    return 1 if wrong else 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("trace_nearfar", main)
