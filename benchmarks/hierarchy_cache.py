"""Fill a hierarchy cache folder before a GPU run: the contraction hierarchies of the record's
graphs and of the tuner's class instances, built once on this machine and carried to the device
host, so that its device time goes to solves rather than to contraction.

    python benchmarks/hierarchy_cache.py --cache DIR --graphs-dir G [--generated road-1M ...]
    python benchmarks/hierarchy_cache.py --cache DIR --classes 24k/deg2/highdiam 49k/deg2/highdiam \\
        --class-seed 5
    # on the device host: SSSP_HIERARCHY_CACHE=DIR python benchmarks/bench_sssp.py ...

The graphs are the ones ``bench_sssp.py`` builds from the same options (every ``*.gz`` under
``--graphs-dir`` with the record's random weights and ``--seed``; the ``--generated`` families),
and for each ``--classes`` class the instances ``tune engine --seed S`` scores points on
(:func:`tuner.workload.class_instances`; a deg2 high-diameter class holds a road-like network and
a grid). A hierarchy is filed under a digest of its graph's arrays (:func:`sssp.hierarchy.hierarchy_for`),
so a graph built with other weights or another seed is another file, and one already in the
folder is read, not built again. Dense stiffness matrices take minutes to contract (vibrobox:
4.5 minutes on a 2-core host): ``--skip`` leaves graphs out by name.

Prints one line per graph: name, nodes, whether it was read or built, seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import Spec, build, file_specs, parse_generated  # noqa: E402

import sssp  # noqa: E402
from sssp.classes import GraphClass  # noqa: E402
from sssp.cliutil import run_script  # noqa: E402
from sssp.hierarchy import CACHE_ENV, hierarchy_for  # noqa: E402


def graphs(args: argparse.Namespace) -> list[tuple[str, Spec | sssp.Graph]]:
    """(name, what builds it) in run order; bad names fail here, before any build."""
    out: list[tuple[str, Spec | sssp.Graph]] = []
    for name in args.generated:
        parse_generated(name)
        out.append((name, Spec(name, "generated", name)))
    if args.graphs_dir is not None:
        if not args.graphs_dir.is_dir():
            raise sssp.SSSPError(f"--graphs-dir {args.graphs_dir}: no such folder")
        out += [(spec.name, spec) for spec in file_specs(args.graphs_dir)]
    classes = [GraphClass.from_text(text) for text in args.classes]
    if classes:
        from tuner.workload import class_instances

        for gc in classes:
            out += [(label, g) for g, label in class_instances(gc, seed=args.class_seed)]
    return [(name, what) for name, what in out if name not in set(args.skip)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, required=True, help="the cache folder to fill")
    ap.add_argument("--graphs-dir", type=Path, help="as bench_sssp.py's --graphs-dir")
    ap.add_argument("--generated", nargs="*", default=[], help="as bench_sssp.py's --generated")
    ap.add_argument("--seed", type=int, default=0, help="as bench_sssp.py's --seed (default 0)")
    ap.add_argument(
        "--classes", nargs="*", default=[], help="classes whose tuning instances to contract"
    )
    ap.add_argument("--class-seed", type=int, default=0, help="as tune engine's --seed")
    ap.add_argument("--skip", nargs="*", default=[], help="graph names to leave out")
    args = ap.parse_args(argv)
    os.environ[CACHE_ENV] = str(args.cache)
    todo = graphs(args)
    if not todo:
        raise sssp.SSSPError("no graphs: name --graphs-dir, --generated or --classes")
    for name, what in todo:
        graph = what if isinstance(what, sssp.Graph) else build(what, args.seed)
        t0 = time.perf_counter()
        _, read = hierarchy_for(graph)
        seconds = time.perf_counter() - t0
        print(f"{name}: n={graph.n} {'read' if read else 'built'} {seconds:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    run_script("hierarchy_cache", main)
