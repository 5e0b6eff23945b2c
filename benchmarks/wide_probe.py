"""The wide loop against the class's tuned configuration, over Δ, on large graphs.

    python benchmarks/wide_probe.py --anchors A --out OUT.csv gap-kron-22 gap-urand-22 grid-1024

Graph names as in ``result_path.py``. Per graph: SciPy's distances from each source (the
reference, cached in ``--cache-dir``), then for the tuned configuration (``Solver(tuned=True)``)
and for near-far on the wide loop at each Δ scale (times the default rule,
:func:`sssp.cpu.nearfar.default_delta`): one warm-up solve and ``--repeat`` solves per source,
``time.perf_counter()`` around each (``wall``) beside its CUDA-event time (``gpu``), medians,
with the steps, raises and list entries of the last solve; every answer compared with SciPy's.
``--no-tree`` times the same solvers again without the predecessor tree.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import time
from pathlib import Path

import numpy as np

import kernels
import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu.nearfar import default_delta

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import pick_sources  # noqa: E402
from result_path import build, references  # noqa: E402

COLUMNS = (
    "graph",
    "n",
    "m",
    "config",
    "delta",
    "loop",
    "gpu_ms",
    "wall_ms",
    "steps",
    "buckets",
    "updates",
    "us_per_step",
    "verified",
)
WIDE = LaunchConfig(KernelConfig(256, "N", 8), loop="wide")


def run(
    name: str, graph: sssp.Graph, solver: sssp.Solver, sources, refs, repeat: int, tree: bool = True
) -> dict:
    r = solver.solve(sources[0], return_predecessors=tree)
    walls, gpus, ok = [], [], True
    for _ in range(repeat):
        for s in sources:
            t = time.perf_counter()
            r = solver.solve(s, return_predecessors=tree)
            walls.append(time.perf_counter() - t)
            gpus.append(r.timings["gpu"])
            ok = ok and bool(np.array_equal(r.dist, refs[s]))
    steps = r.iterations
    return {
        "graph": name,
        "n": graph.n,
        "m": graph.m,
        "loop": r.stats.get("loop", "?"),
        "delta": r.stats.get("delta", ""),
        "gpu_ms": round(1e3 * float(np.median(gpus)), 3),
        "wall_ms": round(1e3 * float(np.median(walls)), 3),
        "steps": steps,
        "buckets": r.stats.get("buckets", ""),
        "updates": r.stats.get("updates", ""),
        "us_per_step": round(1e3 * r.timings["loop"] / max(steps, 1) * 1e3, 2),
        "verified": "yes" if ok else "NO",
    }


def write_trace(path: Path, name: str, label: str, solver: sssp.Solver, source: int) -> None:
    """The wide loop's rounds from ``source``, one JSON line each (the engine solver behind
    ``solver``: its private handle, this is a diagnostic)."""
    import json

    engine = solver._gpu  # noqa: SLF001
    engine.start(source)
    rows = engine._wide.trace(engine._lane0)  # noqa: SLF001
    with path.open("a") as fh:
        for row in rows:
            fh.write(json.dumps({"graph": name, "config": label, "source": source, **row}) + "\n")
    total = sum(v for row in rows for k, v in row.items() if k.endswith("_ms"))
    print(f"  trace {name} {label}: {len(rows)} rounds, {total:.2f} ms of kernels", flush=True)


def wide_params(variant: str) -> kernels.WideParams:
    """``bB-hH-cC-mM[-s1]`` as :class:`kernels.WideParams` (the inverse of its key)."""
    parts = variant.split("-")
    if len(parts) not in (4, 5) or (len(parts) == 5 and parts[4] != "s1"):
        raise SystemExit(f"wide_probe: variant {variant!r} is not bB-hH-cC-mM[-s1]")
    try:
        b, h, c, m = (int(part[1:]) for part in parts[:4])
    except ValueError:
        raise SystemExit(f"wide_probe: variant {variant!r} is not bB-hH-cC-mM[-s1]") from None
    return kernels.WideParams(batch=b, hub_degree=h, chunk=c, min_blocks=m, split=len(parts) == 5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--graphs-dir", type=Path)
    ap.add_argument("--anchors", type=Path)
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/sssp-result-path"))
    ap.add_argument("--sources", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--scales", type=float, nargs="+", default=[1, 4, 16, 64, 256])
    ap.add_argument(
        "--variants",
        nargs="+",
        default=[kernels.WideParams().key.removeprefix("wide-")],
        help="wide module builds, bB-hH-cC-mM[-s1] (kernels.WideParams: batch, hub degree, "
        "chunk, min blocks, and -s1 for the light/heavy split); default: the shipped build",
    )
    ap.add_argument("--no-tuned", action="store_true", help="skip the tuned configuration")
    ap.add_argument(
        "--copies",
        action="store_true",
        help="also run each wide build with host_mapped=False (the result pass writes device "
        "buffers, then copies bring them to the host)",
    )
    ap.add_argument(
        "--trace",
        type=Path,
        help="also write, per graph and wide build, the first source's rounds one by one (each "
        "kernel between CUDA events: sssp.gpu.wide.WideLoop.trace) as JSON lines here",
    )
    ap.add_argument(
        "--no-tree",
        action="store_true",
        help="also time each configuration's solves without the predecessor tree "
        "(return_predecessors=False; its rows' config ends in 'no tree')",
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.graphs:
        t = time.perf_counter()
        graph = build(name, args.graphs_dir, args.anchors, args.cache_dir, args.seed)
        sources = pick_sources(graph, args.sources, args.seed)
        refs = references(graph, name, sources, args.cache_dir)
        print(
            f"{name}: n={graph.n} m={graph.m} ready in {time.perf_counter() - t:.1f} s", flush=True
        )
        runs = [] if args.no_tuned else [("tuned", dict(tuned=True))]
        base = default_delta(graph)
        for variant, scale in itertools.product(args.variants, args.scales):
            params = wide_params(variant)
            delta = max(1, round(base * scale)) if not graph.is_float else base * scale
            kwargs = dict(algorithm="near-far", config=WIDE, delta=delta, wide=params)
            runs.append((f"wide {variant} x{scale:g}", kwargs))
            if args.copies:
                runs.append((f"wide {variant} x{scale:g} copies", {**kwargs, "host_mapped": False}))
        for label, kwargs in runs:
            with sssp.Solver(graph, backend="gpu", **kwargs) as solver:
                done = [{"config": label, **run(name, graph, solver, sources, refs, args.repeat)}]
                if args.no_tree:
                    bare = run(name, graph, solver, sources, refs, args.repeat, tree=False)
                    done.append({"config": f"{label} no tree", **bare})
                if args.trace and "wide" in kwargs:
                    write_trace(args.trace, name, label, solver, sources[0])
            for row in done:
                rows.append(row)
                print("  ".join(f"{k}={row[k]}" for k in COLUMNS), flush=True)
        del graph, refs
    if args.out:
        with args.out.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    return 0 if all(r["verified"] == "yes" for r in rows) else 1


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("wide_probe", main)
