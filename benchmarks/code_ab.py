"""Versions of the code, A/B: a phast solve's wall and event times, each version in its own processes.

    git archive HEAD~1 kernels sssp | tar -x -C /tmp/base
    python benchmarks/code_ab.py --tree base=/tmp/base --tree new=. --graphs-dir G \\
        --graphs fe_body 4elt --sources 300 --rounds 3 --out OUT.csv

A version (``--tree NAME=DIR``) is a folder holding ``sssp/`` and ``kernels/``: its processes
import those two first (``PYTHONPATH``); everything else (this folder's helpers, the installed
packages) comes from the environment that runs this script. A process compiles and loads one
version of the kernels, so versions are compared across processes, and processes differ: on the
device hosts a process sometimes runs 4-6 us slower for its whole life, whatever its code (runs
179-180 in ``benchmarks/results/h200``: those processes' ``host_before`` near 3.3 us instead of
2.2). So each round starts one fresh process per version, in the order given, and the table keeps
every process's medians beside its ``host_before``: a slow process is seen, not averaged in. Each
process checks that it imported the version's ``sssp`` and ``kernels``, and reports the engine's
digest.

In a process, for each graph: one solver of ``--config`` (``bench_nearfar.py``'s labels), three
sources solved and checked (distances against the CPU reference's, every tree edge by
:func:`sssp.verify.check_tree`), then ``--sources`` seeded sources solved back to back the way a
caller makes them (``r = solver.solve(s)``): wall time from the call to the returned result by
``time.perf_counter`` (median and 10th percentile), the solve's CUDA-event times (``gpu``,
``loop``) and host times (``host_before``, ``host_after``) beside it, medians in microseconds,
and how long dropping the previous result took (``release_us``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
COLUMNS = (
    "version",
    "round",
    "graph",
    "n",
    "config",
    "digest",
    "sources",
    "wall_us",
    "wall_p10_us",
    "gpu_us",
    "loop_us",
    "host_before_us",
    "host_after_us",
    "release_us",
    "tree",
    "verified",
)
CHECKED = 3
"""Sources solved and checked before the timed solves."""
PROCESS_TIMEOUT_S = 900
"""The longest one version's process may take (its compiles included)."""


def parse_tree(text: str) -> tuple[str, Path]:
    """``NAME=DIR`` of ``--tree``: DIR must hold ``sssp/__init__.py`` and ``kernels/__init__.py``."""
    import sssp

    name, eq, folder = text.partition("=")
    if not eq or not name or not folder:
        raise sssp.SSSPError(f"--tree {text!r}: expected NAME=DIR")
    path = Path(folder).resolve()
    for pkg in ("sssp", "kernels"):
        if not (path / pkg / "__init__.py").is_file():
            raise sssp.SSSPError(f"--tree {text!r}: {path} has no {pkg}/__init__.py")
    return name, path


def child(args: argparse.Namespace) -> int:
    """One version's process: a JSON line per graph on stdout."""
    sys.path.insert(0, str(HERE))
    from bench_nearfar import config_for, graphs, phast_sweep

    import kernels
    import sssp
    from sssp.cpu.reference import dijkstra
    from sssp.verify import check_tree

    tree = Path(args.child).resolve()
    for mod in (sssp, kernels):
        if not Path(mod.__file__).resolve().is_relative_to(tree):
            raise sssp.SSSPError(f"{mod.__name__} came from {mod.__file__}, not from {tree}")
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    for name, make in graphs(args):
        if args.graphs and name not in args.graphs:
            continue
        graph = make()
        rng = np.random.default_rng(0)
        sources = [int(s) for s in rng.choice(graph.n, args.sources)]
        with (
            phast_sweep(args.config),
            sssp.Solver(
                graph, backend="gpu", algorithm="near-far", config=config_for(args.config)
            ) as sv,
        ):
            for s in sources[:CHECKED]:
                r = sv.solve(s)
                if not np.array_equal(r.dist, dijkstra(graph, s).dist):
                    raise sssp.SSSPError(f"{name}: wrong distances from {s}")
                check_tree(graph, r)
            wall, release, gpu, loop, before, after = [], [], [], [], [], []
            r = None
            for s in sources:
                t = time.perf_counter()
                r2 = sv.solve(s)
                wall.append(time.perf_counter() - t)
                t = time.perf_counter()
                r = None  # the previous result, dropped
                release.append(time.perf_counter() - t)
                r, r2 = r2, None
                gpu.append(r.timings["gpu"])
                loop.append(r.timings["loop"])
                before.append(r.timings["host_before"])
                after.append(r.timings["host_after"])
            tree_form = sv._gpu._static_stats()["tree"]

        def us(xs: list[float], q: float = 50) -> str:
            return f"{1e6 * np.percentile(xs, q):.1f}"

        row = {
            "graph": name,
            "n": graph.n,
            "config": args.config,
            "digest": digest,
            "sources": len(sources),
            "wall_us": us(wall),
            "wall_p10_us": us(wall, 10),
            "gpu_us": us(gpu),
            "loop_us": us(loop),
            "host_before_us": us(before),
            "host_after_us": us(after),
            "release_us": us(release),
            "tree": tree_form,
            "verified": "yes",
        }
        print(json.dumps(row), flush=True)
    return 0


def run_version(args: argparse.Namespace, path: Path) -> list[dict]:
    """One process of the version in ``path``; its rows."""
    import sssp

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(path), env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(path)]
    cmd += ["--config", args.config, "--sources", str(args.sources)]
    if args.graphs_dir:
        cmd += ["--graphs-dir", args.graphs_dir]
    for flag in ("graphs", "generated", "random"):
        if getattr(args, flag):
            cmd += [f"--{flag}", *getattr(args, flag)]
    try:
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise sssp.SSSPError(f"{path}: no answer in {PROCESS_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise sssp.SSSPError(f"{path}: the process failed: {last}")
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not rows:
        raise sssp.SSSPError(f"{path}: the process measured no graph")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    ap.add_argument("--out", type=Path, default=Path("code_ab.csv"))
    ap.add_argument("--sources", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--graphs-dir")
    ap.add_argument("--graphs", nargs="*", default=[], metavar="NAME")
    ap.add_argument("--random", nargs="*", default=[], metavar="SIZExDEG")
    ap.add_argument("--generated", nargs="*", default=[], metavar="NAME")
    ap.add_argument("--config", default="phast-x4+core4096+labels", metavar="LABEL")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    import sssp

    versions = [parse_tree(t) for t in args.tree]
    if len(versions) < 2 or len({name for name, _ in versions}) < len(versions):
        raise sssp.SSSPError("give two or more --tree NAME=DIR, each NAME once")
    if args.sources < CHECKED or args.rounds < 1:
        raise sssp.SSSPError(f"--sources must be at least {CHECKED} and --rounds at least 1")
    sys.path.insert(0, str(HERE))
    from bench_nearfar import graphs

    names = [name for name, _ in graphs(args)]  # names only: nothing is read yet
    missing = sorted(set(args.graphs) - set(names))
    if missing or not names:
        raise sssp.SSSPError(
            f"no graph named {', '.join(missing)}"
            if missing
            else "no graph given: --graphs-dir, --generated or --random"
        )
    with args.out.open("w", newline="") as fh:
        out = csv.DictWriter(fh, COLUMNS)
        out.writeheader()
        for rnd in range(args.rounds):
            for name, path in versions:
                for row in run_version(args, path):
                    row.update(version=name, round=rnd)
                    out.writerow(row)
                    fh.flush()
                    print(" ".join(str(row[c]) for c in COLUMNS), flush=True)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("code_ab", main)
