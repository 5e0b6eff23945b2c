"""The ``sssp`` command line: inspect, generate and solve graphs.

Results (tables, JSON) go to stdout; progress and logs to stderr. Any :class:`sssp.SSSPError` is
shown as ``sssp: error: <message>`` with exit status 1 (``--debug`` adds the traceback); bad
usage exits with status 2, as argparse does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import statistics
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from .classes import parse_size
from .errors import GraphFormatError, SSSPError, UnknownClassError
from .result import ALGORITHMS, VARIANTS, SSSPResult

PROG = "sssp"
KINDS = ("random", "martin", "kronecker")
WEIGHT_MODES = ("auto", "file", "random", "unit")
BACKENDS = ("auto", "cpu", "gpu")

log = logging.getLogger(__name__)

EPILOG = """\
examples:
  sssp generate random --size 49k --degree 200 --seed 0 -o g49k.npz
  sssp info g49k.npz
  sssp info road-usa.gr.gz --json
  sssp solve g49k.npz --source 0 --backend cpu -o dist.npy
  sssp solve g49k.npz --sources 100 --seed 1 --backend gpu --tuned

Any sssp error exits with status 1 and a one-line message (--debug shows the traceback);
bad usage exits with status 2.
"""

INFO_EPILOG = """\
examples:
  sssp info g.npz
  sssp info delaunay_n16.graph.bz2 --weights random --seed 3
  sssp info roadNet-CA.txt --format snap --json
"""

GENERATE_EPILOG = """\
examples:
  sssp generate random --size 49k --degree 200 -o g.npz     # the paper's G(n, p), mean degree 200
  sssp generate martin --size 1M --seed 2 -o martin.npz      # Martin's graphs, in-degree 7
  sssp generate kronecker --size 65536 --degree 16 -o kron.npz
sizes: ladder labels 24k, 49k, 98k, 196k, ..., '<k>M' (k * 2^20 nodes) or a plain node count.
"""

SOLVE_EPILOG = """\
examples:
  sssp solve g.npz --source 0 --backend cpu -o dist.npy
  sssp solve g.npz --algorithm dijkstra --source 5 --json
  sssp solve g.npz --sources 100 --seed 1 --backend gpu --tuned --db sqlite:///tuning.db
The distance file holds int64 distances; unreachable nodes hold 2**63 - 1 (sssp.UNREACHABLE).
"""


# -- argument types -----------------------------------------------------------------------------
def _size(text: str) -> int:
    try:
        return parse_size(text)
    except UnknownClassError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _degree(text: str) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid degree {text!r}: expected a positive number") from None
    if not (value > 0 and np.isfinite(value)):
        raise argparse.ArgumentTypeError(f"invalid degree {text!r}: expected a positive number")
    return int(value) if value == int(value) else value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 0") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 0")
    return value


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 1")
    return value


# -- parser -------------------------------------------------------------------------------------
def _common() -> argparse.ArgumentParser:
    """Options accepted before and after the verb (``sssp -v solve ...`` = ``sssp solve -v ...``)."""
    p = argparse.ArgumentParser(add_help=False)
    # SUPPRESS so that a subcommand's default does not overwrite a value given before the verb.
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                   help="log progress to stderr (-v INFO, -vv DEBUG)")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show the traceback of errors")
    return p


def _add_load_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="graph file (.graph, .gr, .mtx, .txt, .npz; .gz/.bz2/.xz ok)")
    p.add_argument("--format", metavar="F",
                   help="metis, dimacs, mtx, snap or npz (default: from the suffix, then the content)")
    p.add_argument("--weights", choices=WEIGHT_MODES, default="auto",
                   help="keep file weights, else random [1, 100] (auto, the default); "
                        "require them (file); force random or unit weights")
    p.add_argument("--seed", type=_non_negative_int, default=0,
                   help="seed of random weights (and of random sources for solve); default 0")


def build_parser() -> argparse.ArgumentParser:
    """The ``sssp`` argument parser (exposed for documentation and tests)."""
    from . import __version__

    common = _common()
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Single-source shortest paths with Crauser's parallel Dijkstra on CPU and "
                    "GPU, with auto-tuned CUDA kernels.",
        epilog=EPILOG,
        formatter_class=fmt,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("info", parents=[common], formatter_class=fmt, epilog=INFO_EPILOG,
                       help="print a graph's features and paper class",
                       description="Load a graph and print its features (size, degrees, sinks, "
                                   "weights, omega) and its paper class such as 49k/deg200.")
    _add_load_options(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    # parser: for usage errors found after parsing (e.g. a missing --degree)
    p.set_defaults(func=cmd_info, parser=p)

    p = sub.add_parser("generate", parents=[common], formatter_class=fmt, epilog=GENERATE_EPILOG,
                       help="generate one of the paper's synthetic graphs",
                       description="Generate a seeded synthetic graph and write it as .npz.")
    p.add_argument("kind", choices=KINDS, metavar="KIND", help="random, martin or kronecker")
    p.add_argument("--size", type=_size, required=True,
                   help="node count: 24k, 49k, 98k, ..., '<k>M' or an integer")
    p.add_argument("--degree", type=_degree,
                   help="random: mean out-degree (required); martin: in-degree (default 7); "
                        "kronecker: edge factor (default 16)")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="seed (default 0)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.npz", help="output file (.npz)")
    p.set_defaults(func=cmd_generate, parser=p)

    p = sub.add_parser("solve", parents=[common], formatter_class=fmt, epilog=SOLVE_EPILOG,
                       help="shortest paths from one or several sources",
                       description="Solve single-source shortest paths and print a timing summary.")
    _add_load_options(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--source", type=_non_negative_int, default=None,
                       help="source node (default 0)")
    which.add_argument("--sources", type=_positive_int, metavar="K",
                       help="solve from K random sources (drawn with --seed) and report the median")
    p.add_argument("--algorithm", choices=ALGORITHMS, default="crauser",
                   help="crauser (default), martin, or dijkstra (SciPy's, CPU only)")
    p.add_argument("--variant", choices=VARIANTS, default="successors", help="default successors")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="auto (GPU when usable, the default), cpu or gpu")
    p.add_argument("--tuned", action="store_true",
                   help="GPU: use the tuned launch configuration of the graph's class")
    p.add_argument("--db", metavar="URL", help="SQLAlchemy URL of the tuning database")
    p.add_argument("--device", type=_non_negative_int, default=0, help="CUDA device ordinal")
    p.add_argument("-o", "--output", metavar="DIST.npy",
                   help="save the distances (int64, UNREACHABLE for unreached nodes) as .npy")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_solve, parser=p)
    return parser


# -- helpers ------------------------------------------------------------------------------------
def _load(args: argparse.Namespace) -> Any:
    from .formats import load

    t0 = time.perf_counter()
    graph = load(args.file, format=args.format, weights=args.weights, seed=args.seed)
    log.info("loaded %s: n=%d, m=%d in %.2f s", args.file, graph.n, graph.m, time.perf_counter() - t0)
    return graph


def _check_writable_dir(path: str | Path) -> None:
    """Fail before long work when the output's folder does not exist."""
    parent = Path(path).parent
    if not parent.is_dir():
        raise SSSPError(f"cannot write {str(path)!r}: folder {str(parent)!r} does not exist")


def _jsonable(value: Any) -> Any:
    """JSON stand-ins for values found in ``Graph.meta`` (NumPy scalars and arrays, paths)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        # id maps can be as long as the graph: describe them instead of dumping them.
        return f"<array {value.dtype} shape {tuple(value.shape)}>"
    return str(value)


def _print_json(obj: Any, out: TextIO) -> None:
    out.write(json.dumps(obj, indent=2, default=_jsonable) + "\n")


def _print_pairs(pairs: Sequence[tuple[str, Any]], out: TextIO) -> None:
    width = max(len(k) for k, _ in pairs)
    for key, value in pairs:
        out.write(f"{key:<{width}}  {value}\n")


@contextlib.contextmanager
def _atomic_path(path: str | Path, suffix: str) -> Iterator[Path]:
    """A fresh temporary path beside ``path``, renamed over it only if the block succeeds, so an
    error never leaves a half-written file (nor replaces a good old one)."""
    target = Path(path)
    # Not mkstemp: the writer creates the file itself, so it gets the usual umask permissions.
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp{suffix}")
    try:
        yield tmp
        os.replace(tmp, target)
    except OSError as err:
        raise SSSPError(f"cannot write {str(target)!r}: {err.strerror or err}") from err
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


# -- commands -----------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace, out: TextIO) -> int:
    """``sssp info``: features and paper class of a graph file."""
    from .formats import detect_format

    graph = _load(args)
    f = graph.features()
    cls = graph.graph_class()
    meta = dict(graph.meta)
    if args.json:
        _print_json({
            "file": args.file,
            "name": graph.name,
            "format": meta.get("format") or detect_format(args.file),
            "class": str(cls),
            "size": cls.size,
            "degree": cls.degree,
            "features": f.as_dict(),
            "meta": meta,
        }, out)
        return 0
    pairs: list[tuple[str, Any]] = [
        ("file", args.file),
        ("name", graph.name),
        ("format", meta.get("format") or detect_format(args.file)),
        ("class", str(cls)),
        ("nodes", f.n),
        ("edges", f.m),
        ("mean degree", f"{f.mean_degree:.3f}"),
        ("max degree", f.max_degree),
        ("degree std", f"{f.degree_std:.3f}"),
        ("sinks", f.sinks),
        ("weights", f"{f.min_weight}..{f.max_weight}"),
        ("omega mean", f"{f.omega_mean:.3f}"),
    ]
    pairs += [(f"meta.{k}", _jsonable(v) if not isinstance(v, str | int | float | bool) else v)
              for k, v in sorted(meta.items())]
    _print_pairs(pairs, out)
    return 0


def cmd_generate(args: argparse.Namespace, out: TextIO) -> int:
    """``sssp generate``: write a synthetic graph as .npz; a one-line summary goes to stderr."""
    from .formats import save
    from .generators import generate

    if Path(args.output).suffix.lower() != ".npz":
        # Same wording as sssp.save, checked before the (possibly long) generation.
        raise GraphFormatError(args.output, f"save writes .npz files only, got suffix {Path(args.output).suffix!r}")
    if args.kind == "random" and args.degree is None:
        args.parser.error("generate random needs --degree (the mean out-degree, e.g. 200)")
    _check_writable_dir(args.output)
    t0 = time.perf_counter()
    graph = generate(args.kind, size=args.size, degree=args.degree, seed=args.seed)
    elapsed = time.perf_counter() - t0
    with _atomic_path(args.output, ".npz") as tmp:
        save(graph, tmp)
    sys.stderr.write(
        f"wrote {args.output}: {graph.name}, n={graph.n}, m={graph.m}, "
        f"class {graph.graph_class()} ({elapsed:.2f} s)\n"
    )
    return 0


def _run_summary(r: SSSPResult, graph: Any) -> dict[str, Any]:
    """One run, with the source as the file's node id (``graph.labels``)."""
    reached = r.reached
    return {
        "source": graph.label_of(r.source),
        "iterations": r.iterations,
        "time_ms": r.timings["total"] * 1e3,
        "reached": int(reached.sum()),
        "max_dist": r.dist[reached].max().item() if reached.any() else None,
    }


def cmd_solve(args: argparse.Namespace, out: TextIO) -> int:
    """``sssp solve``: distances from one or several sources, with a timing summary."""
    from tqdm import tqdm

    from .graph import iter_sources
    from .solve import Solver

    if args.output and args.sources not in (None, 1):
        args.parser.error("-o saves one source's distances: drop -o or use --source/--sources 1")
    if args.output:
        _check_writable_dir(args.output)
    graph = _load(args)
    if args.sources is not None:
        sources = list(iter_sources(graph, args.sources, seed=args.seed))
    else:
        # --source is the file's node id (e.g. 1-based in DIMACS, as written in an edge list)
        source = 0 if args.source is None else args.source
        sources = [source if graph.labels is None else graph.index_of(source)]
    with Solver(graph, algorithm=args.algorithm, variant=args.variant, backend=args.backend,
                tuned=args.tuned, db=args.db, device=args.device) as solver:
        results = []
        # tqdm(disable=None) draws the bar only when stderr is a terminal.
        for s in tqdm(sources, desc="solve", unit="source", file=sys.stderr,
                      disable=None if len(sources) > 1 else True):
            results.append(solver.solve(s))
        backend = solver.backend
        config, config_source, detail = solver.config, solver.config_source, solver.config_detail
    if args.output:
        with _atomic_path(args.output, ".npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, np.asarray(results[0].dist))  # int64, or float64 for real weights
        log.info("wrote distances to %s", args.output)
    runs = [_run_summary(r, graph) for r in results]
    median_ms = statistics.median(r["time_ms"] for r in runs)
    summary = {
        "file": args.file,
        "graph": graph.name,
        "class": str(graph.graph_class()),
        "n": graph.n,
        "m": graph.m,
        "algorithm": args.algorithm,
        "variant": args.variant,
        "backend": backend,
        "config": None if config is None else config.as_dict(),
        "config_source": None if config_source is None else config_source.value,
        "config_detail": detail or None,
        "runs": runs,
        "median_ms": median_ms,
        "output": args.output,
    }
    if args.json:
        _print_json(summary, out)
        return 0
    pairs: list[tuple[str, Any]] = [
        ("graph", f"{graph.name} (n={graph.n}, m={graph.m}, class {summary['class']})"),
        ("algorithm", f"{args.algorithm}/{args.variant}"),
        ("backend", backend),
    ]
    if config is not None:
        src = config_source.value if config_source is not None else "?"
        pairs.append(("config", f"{config} ({src}{', ' + detail if detail else ''})"))
    if len(runs) == 1:
        r = runs[0]
        pairs += [
            ("source", r["source"]),
            ("iterations", r["iterations"]),
            ("time", f"{r['time_ms']:.3f} ms"),
            ("reached", f"{r['reached']} / {graph.n}"),
            ("max dist", r["max_dist"] if r["max_dist"] is not None else "-"),
        ]
        if args.output:
            pairs.append(("output", args.output))
        _print_pairs(pairs, out)
        return 0
    _print_pairs(pairs, out)
    out.write(f"\n{'source':>10}  {'iterations':>10}  {'time ms':>10}  {'reached':>10}  {'max dist':>12}\n")
    for r in runs:
        md = "-" if r["max_dist"] is None else r["max_dist"]
        out.write(f"{r['source']:>10}  {r['iterations']:>10}  {r['time_ms']:>10.3f}  "
                  f"{r['reached']:>10}  {md:>12}\n")
    out.write(f"\nmedian over {len(runs)} sources: {median_ms:.3f} ms\n")
    return 0


# -- entry point --------------------------------------------------------------------------------
@contextlib.contextmanager
def _logging_to_stderr(verbosity: int) -> Iterator[None]:
    """Route library logs to (the current) stderr for one call of :func:`main`, then restore."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(levelname)s: %(name)s: %(message)s"))
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler.setLevel(level)
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(min(level, old_level) if old_level else level)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sssp`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 on an :class:`sssp.SSSPError` (message on stderr), 130 when interrupted.
        Usage errors raise ``SystemExit(2)`` (argparse).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = getattr(args, "debug", False)
    func: Callable[[argparse.Namespace, TextIO], int] = args.func
    with _logging_to_stderr(getattr(args, "verbose", 0)):
        try:
            return func(args, sys.stdout)
        except SSSPError as err:
            if debug:
                traceback.print_exc(file=sys.stderr)
            sys.stderr.write(f"{PROG}: error: {err}\n")
            return 1
        except KeyboardInterrupt:
            sys.stderr.write(f"{PROG}: interrupted\n")
            return 130


if __name__ == "__main__":
    sys.exit(main())
