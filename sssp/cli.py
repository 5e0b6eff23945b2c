"""The ``sssp`` command line: inspect, generate and solve graphs.

Results (tables, JSON) go to stdout; progress and logs to stderr. Any :class:`sssp.SSSPError` is
shown as ``sssp: error: <message>`` with exit status 1 (``--debug`` adds the traceback); bad
usage exits with status 2, as argparse does (:mod:`sssp.cliutil` has the other statuses).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from .cliutil import (
    ArgumentParser,
    atomic_output,
    check_writable_dir,
    device_list,
    escape,
    is_stdout,
    is_stream,
    logging_to_stderr,
    non_negative_int,
    positive_int,
    run_command,
    signal_policy,
    size_arg,
)
from .errors import GraphFormatError, SSSPError
from .generators import KINDS
from .result import ALGORITHMS, VARIANTS, SSSPResult
from .tuned import HIERARCHY_CHOICES

PROG = "sssp"
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
  sssp hierarchy road.gr.gz && sssp solve road.gr.gz --tuned --hierarchy cached

Any sssp error exits with status 1 and a one-line message (--debug shows the traceback);
bad usage exits with status 2.
"""

HIERARCHY_EPILOG = """\
examples:
  sssp hierarchy road.gr.gz                     # build it (or find it) in the cache
  sssp hierarchy fe_body.graph --weights random --seed 0 --json
  sssp solve road.gr.gz --tuned --hierarchy cached   # then the tuned phast loop reads it
The hierarchy is kept per graph (a digest of its arrays: the same file with other --weights or
--seed is another graph) in $SSSP_HIERARCHY_CACHE, else the user cache folder. It takes seconds
on roads and 2-D meshes, minutes on dense stiffness matrices (Ctrl-C stops it, keeping nothing).
"""

# Writing the graph of ``sssp generate`` shows a progress bar (on a terminal) when it takes
# longer than this many seconds.
SAVE_PROGRESS_DELAY_S = 1.0


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
  sssp generate random --size 98k --degree 1000 --uncompressed -o big.npz   # faster to write
sizes: ladder labels 24k, 49k, 98k, 196k, ..., '<k>M' (k * 2^20 nodes) or a plain node count.
"""

SOLVE_EPILOG = """\
examples:
  sssp solve g.npz --source 0 --backend cpu -o dist.npy
  sssp solve g.npz --algorithm dijkstra --source 5 --json
  sssp solve g.npz --source 3 -o tree.npz      # distances and predecessors together
  sssp solve g.npz --sources 100 --seed 1 --backend gpu --tuned --db sqlite:///tuning.db
  sssp solve g.npz --sources 1024 --backend gpu --tuned --devices 0,1   # one batch, two GPUs
  sssp solve road.gr.gz --tuned --hierarchy build   # a phast pick builds the hierarchy first
-o FILE.npy holds the distances: int64 with 2**63 - 1 (sssp.UNREACHABLE) for unreachable nodes
on integer-weighted graphs, float64 with inf on real-weighted ones. -o FILE.npz holds the arrays
'dist' (the same), 'dist_float' (float64, inf for unreachable), 'pred' (int32, -1 for the source
and unreachable nodes) and 'source' (with 'labels', the file's node ids, when it has its own).
Read them with numpy.load. A FIFO or device is written directly, never replaced; -o /dev/stdout
writes the distances (.npy) to stdout, piped or redirected, and the summary then goes to stderr.
Integer distances are exact, but do not add to them unmasked: 2**63 - 1 + 1 overflows to a
negative number (mask with dist != 2**63 - 1, or use 'dist_float').
"""


# -- argument types -----------------------------------------------------------------------------
def _degree(text: str) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid degree {text!r}: expected a positive number"
        ) from None
    if not (value > 0 and np.isfinite(value)):
        raise argparse.ArgumentTypeError(f"invalid degree {text!r}: expected a positive number")
    return int(value) if value == int(value) else value


# -- parser -------------------------------------------------------------------------------------
def _common() -> ArgumentParser:
    """Options accepted before and after the verb (``sssp -v solve ...`` = ``sssp solve -v ...``)."""
    p = ArgumentParser(add_help=False)
    # SUPPRESS so that a subcommand's default does not overwrite a value given before the verb.
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS,
        help="log progress to stderr (-v INFO, -vv DEBUG)",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of errors",
    )
    return p


def _add_load_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file", metavar="FILE", help="graph file (.graph, .gr, .mtx, .txt, .npz; .gz/.bz2/.xz ok)"
    )
    p.add_argument(
        "--format",
        metavar="F",
        help="metis, dimacs, mtx, snap or npz (default: from the suffix, then the content)",
    )
    p.add_argument(
        "--weights",
        choices=WEIGHT_MODES,
        default="auto",
        help="keep the file's weights, else unit weights (auto, the default); require "
        "them (file); the paper's seeded random weights in [1, 100] (random); unit",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="seed of random weights (and of random sources for solve); default 0",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``sssp`` argument parser (exposed for documentation and tests)."""
    from . import __version__

    common = _common()
    fmt = argparse.RawDescriptionHelpFormatter
    parser = ArgumentParser(
        prog=PROG,
        description="Single-source shortest paths with Crauser's parallel Dijkstra on CPU and "
        "GPU, with auto-tuned CUDA kernels.",
        epilog=EPILOG,
        formatter_class=fmt,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "info",
        parents=[common],
        formatter_class=fmt,
        epilog=INFO_EPILOG,
        help="print a graph's features and paper class",
        description="Load a graph and print its features (size, degrees, sinks, "
        "weights, omega) and its paper class such as 49k/deg200.",
    )
    _add_load_options(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    # parser: for usage errors found after parsing (e.g. a missing --degree)
    p.set_defaults(func=cmd_info, parser=p)

    p = sub.add_parser(
        "generate",
        parents=[common],
        formatter_class=fmt,
        epilog=GENERATE_EPILOG,
        help="generate one of the paper's synthetic graphs",
        description="Generate a seeded synthetic graph and write it as .npz.",
    )
    p.add_argument(
        "kind",
        choices=KINDS,
        metavar="KIND",
        help="random, martin, kronecker, or the high-diameter grid, geometric and road",
    )
    p.add_argument(
        "--size",
        type=size_arg,
        required=True,
        help="node count: 24k, 49k, 98k, ..., '<k>M' or an integer",
    )
    p.add_argument(
        "--degree",
        type=_degree,
        help="random: mean out-degree (required); martin: in-degree (default 7); "
        "kronecker: edge factor (default 16); geometric: mean degree (default 8); "
        "road: mean degree, 2 to 5 (default 2.6)",
    )
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed (default 0)")
    p.add_argument(
        "--uncompressed",
        action="store_true",
        help="store the arrays without compression: a larger file (about 2.2x for "
        "the paper's graphs), written about 10x faster",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT.npz", help="output file (.npz)")
    p.set_defaults(func=cmd_generate, parser=p)

    p = sub.add_parser(
        "hierarchy",
        parents=[common],
        formatter_class=fmt,
        epilog=HIERARCHY_EPILOG,
        help="build a graph's contraction hierarchy into the cache (for the phast loop)",
        description="Build the contraction hierarchy of a graph with integer weights into the "
        "hierarchy cache, or find it there, and print its levels, edges and build time: what "
        "`solve --tuned` reads when the tuned pick is the phast loop.",
    )
    _add_load_options(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_hierarchy, parser=p)

    p = sub.add_parser(
        "solve",
        parents=[common],
        formatter_class=fmt,
        epilog=SOLVE_EPILOG,
        help="shortest paths from one or several sources",
        description="Solve single-source shortest paths and print a timing summary.",
    )
    _add_load_options(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--source",
        type=non_negative_int,
        default=None,
        metavar="ID",
        help="source node, as the file numbers it (1-based in METIS and DIMACS "
        "files); default: the first node (0, or 1 in those files)",
    )
    which.add_argument(
        "--sources",
        type=positive_int,
        metavar="K",
        help="solve from K distinct random sources (drawn without replacement "
        "with --seed; at most the node count) and report the median",
    )
    p.add_argument(
        "--algorithm",
        choices=("auto", *ALGORITHMS),
        default=None,
        help="crauser, martin, crauser-in, crauser-inout, near-far (Δ-stepping, default "
        "Δ), the CPU-only dijkstra (SciPy's), or auto (the tuner's pick for the "
        "graph's class on the GPU). Default: on the CPU the faster of near-far and "
        "dijkstra for the graph; on the GPU auto with --tuned, else crauser",
    )
    p.add_argument("--variant", choices=VARIANTS, default="successors", help="default successors")
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="auto (GPU when usable, the default), cpu or gpu",
    )
    p.add_argument(
        "--tuned",
        action="store_true",
        help="GPU: use the tuned launch configuration of the graph's class",
    )
    p.add_argument("--db", metavar="URL", help="SQLAlchemy URL of the tuning database")
    p.add_argument(
        "--hierarchy",
        choices=HIERARCHY_CHOICES,
        help="with --tuned, where the tuned pick is the phast loop (roads, meshes), which needs "
        "the graph's contraction hierarchy: auto (the default) runs it where the hierarchy is "
        "in the cache, else the pick's fallback while a background process builds it; build: "
        "build it first; cached: only where cached; never: the fallback",
    )
    p.add_argument(
        "--device",
        type=non_negative_int,
        default=0,
        help="CUDA device ordinal, as in nvidia-smi and CUDA_VISIBLE_DEVICES (default 0)",
    )
    p.add_argument(
        "--devices",
        type=device_list,
        metavar="LIST",
        help="GPU: solve the --sources as one batch spread over these device ordinals "
        "(e.g. 0,1), each device with its own tuned configuration; reports the wall time "
        "per source of the batch",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="save the result of one source: FILE.npy the distances, FILE.npz the "
        "distances and predecessors (see below)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_solve, parser=p)
    return parser


# -- helpers ------------------------------------------------------------------------------------
def _load(args: argparse.Namespace) -> Any:
    from .formats import load

    t0 = time.perf_counter()
    graph = load(args.file, format=args.format, weights=args.weights, seed=args.seed)
    log.info(
        "loaded %s: n=%d, m=%d in %.2f s", args.file, graph.n, graph.m, time.perf_counter() - t0
    )
    return graph


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
    # Values may come from files (graph names, metadata): escaped, so they cannot drive the terminal.
    width = max(len(k) for k, _ in pairs)
    for key, value in pairs:
        out.write(f"{escape(key):<{width}}  {escape(value)}\n")


# -- commands -----------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace, out: TextIO) -> int:
    """``sssp info``: features and paper class of a graph file."""
    from .bands import BANDS, band_locality
    from .classes import diameter_class
    from .formats import detect_format

    graph = _load(args)
    f = graph.features()
    cls = graph.graph_class()
    diam = diameter_class(graph)
    meta = dict(graph.meta)
    # the fused cluster loop's placement, for the graphs it is meant for (sssp.bands)
    local = band_locality(graph) if diam.label == "highdiam" else None
    if args.json:
        _print_json(
            {
                "file": args.file,
                "name": graph.name,
                "format": meta.get("format") or detect_format(args.file),
                "class": str(cls),
                "size": cls.size,
                "degree": cls.degree,
                "diameter_class": diam.label,
                "diameter_hops": diam.hops,
                "diameter_reached": diam.reached,
                "band_locality": local,
                "features": f.as_dict(),
                "meta": meta,
            },
            out,
        )
        return 0
    pairs: list[tuple[str, Any]] = [
        ("file", args.file),
        ("name", graph.name),
        ("format", meta.get("format") or detect_format(args.file)),
        ("class", str(cls)),
        (
            "diameter class",
            f"{diam.label} ({diam.hops} hops across {diam.reached} nodes, "
            f"{diam.ratio:.1f} x log2; highdiam above 3)",
        ),
        *(
            [
                (
                    "band locality",
                    f"{local:.3f} of the edges inside one of {BANDS} reverse Cuthill-McKee bands "
                    "(the fused cluster loop's placement: fusion won on H200 meshes at 0.89 and more, lost at 0.83 "
                    "and less)",
                )
            ]
            if local is not None
            else []
        ),
        ("nodes", f.n),
        ("edges", f.m),
        ("mean degree", f"{f.mean_degree:.3f}"),
        ("max degree", f.max_degree),
        ("degree std", f"{f.degree_std:.3f}"),
        ("sinks", f.sinks),
        ("weights", f"{f.min_weight}..{f.max_weight}"),
        ("omega mean", f"{f.omega_mean:.3f}"),
    ]
    pairs += [
        (f"meta.{k}", _jsonable(v) if not isinstance(v, str | int | float | bool) else v)
        for k, v in sorted(meta.items())
    ]
    _print_pairs(pairs, out)
    return 0


def cmd_generate(args: argparse.Namespace, out: TextIO) -> int:
    """``sssp generate``: write a synthetic graph as .npz; a one-line summary goes to stderr."""
    from .formats.npz import write as write_npz
    from .generators import generate

    if Path(args.output).suffix.lower() != ".npz":
        # Same wording as sssp.save, checked before the (possibly long) generation.
        raise GraphFormatError(
            args.output, f"save writes .npz files only, got suffix {Path(args.output).suffix!r}"
        )
    if args.kind == "random" and args.degree is None:
        args.parser.error("generate random needs --degree (the mean out-degree, e.g. 200)")
    check_writable_dir(args.output)
    t0 = time.perf_counter()
    graph = generate(args.kind, size=args.size, degree=args.degree, seed=args.seed)
    t_gen = time.perf_counter() - t0
    compress = not args.uncompressed
    with atomic_output(args.output, ".npz") as tmp, _write_progress() as progress:
        write_npz(graph, tmp, compress=compress, progress=progress)
    t_all = time.perf_counter() - t0
    # The whole command's time: writing a compressed 10M-edge file takes longer than generating it.
    sys.stderr.write(
        f"wrote {escape(args.output)}: {graph.name}, n={graph.n}, m={graph.m}, "
        f"class {graph.graph_class()} ({t_all:.2f} s: generate {t_gen:.2f} s, "
        f"write {t_all - t_gen:.2f} s{'' if compress else ', uncompressed'})\n"
    )
    return 0


@contextlib.contextmanager
def _write_progress() -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done, total)`` callback for :func:`sssp.formats.npz.write` that draws a
    progress bar of the bytes written, on a terminal only and only once the write has taken
    :data:`SAVE_PROGRESS_DELAY_S`."""
    from tqdm import tqdm

    # disable=None: tqdm draws nothing when stderr is not a terminal (logs, pipes, CI).
    bar = tqdm(
        desc="write",
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        file=sys.stderr,
        disable=None,
        delay=SAVE_PROGRESS_DELAY_S,
        leave=False,
    )

    def progress(done: int, total: int) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        bar.close()


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


def _save_result(r: SSSPResult, path: str, labels: Any) -> None:
    """``-o``: ``.npy`` the distances, ``.npz`` distances, predecessors and source (and the
    graph's node labels when it has them), written atomically (see :func:`atomic_output`);
    ``/dev/stdout`` (any name of stdout's file) gets the distances as ``.npy`` through stdout."""
    if is_stdout(path):
        buf = io.BytesIO()
        np.save(buf, r.dist)
        sys.stdout.flush()
        sys.stdout.buffer.write(buf.getbuffer())
        sys.stdout.buffer.flush()
    elif path.lower().endswith(".npz"):
        arrays: dict[str, np.ndarray] = {
            "dist": r.dist,
            "dist_float": r.dist_float,
            "source": np.asarray(r.source, dtype=np.int64),
        }
        if r.pred is not None:  # solves here ask for the tree; None would need a pickle
            arrays["pred"] = r.pred
        if labels is not None:
            labels = np.asarray(labels)
            if labels.dtype == object:  # string ids: unicode, so the file needs no pickle
                labels = np.array([str(v) for v in labels.tolist()], dtype=np.str_)
            arrays["labels"] = labels
        from .formats.npz import save_arrays

        with atomic_output(path, ".npz") as tmp, open(tmp, "wb") as fh:
            save_arrays(fh, arrays)  # an interrupt during the write comes out as itself
    else:
        with atomic_output(path, ".npy") as tmp, open(tmp, "wb") as fh:
            if is_stream(tmp):
                # np.save writes real files with ndarray.tofile, which needs a seekable file.
                buf = io.BytesIO()
                np.save(buf, r.dist)
                fh.write(buf.getbuffer())
            else:
                np.save(fh, r.dist)


def _draw_sources(graph: Any, count: int, seed: int) -> list[int]:
    """``count`` distinct node indices drawn uniformly without replacement (a median over
    repeated sources would weigh them twice)."""
    from .graph import check_seed

    if count > graph.n:
        # Checked before drawing: 10**10 sources would otherwise exhaust memory first.
        raise SSSPError(
            f"--sources {count}: sources are distinct nodes (drawn without "
            f"replacement) and the graph has {graph.n}; use --sources {graph.n} or fewer"
        )
    rng = np.random.default_rng(check_seed(seed))
    return [int(v) for v in rng.choice(graph.n, size=count, replace=False)]


def _source_index(graph: Any, source: int, file: str) -> int:
    """The node index of ``--source``, the file's node id; an id the file does not have is an
    error naming the ids it has."""
    from .errors import InvalidGraphError

    try:
        return graph.index_of(source)
    except InvalidGraphError as err:
        reason = str(err)  # names the range itself for ids 0..n-1
    labels = graph.labels
    if labels is not None:
        if labels.dtype.kind in "iu":
            lo, hi = int(labels.min()), int(labels.max())
            valid = (
                f"{lo}..{hi}" if hi - lo + 1 == graph.n else f"{graph.n} ids between {lo} and {hi}"
            )
        else:
            valid = f"{graph.n} ids such as {escape(graph.label_of(0))!r}"
        reason += f": the node ids of {escape(file)} are {valid}"
    raise SSSPError(
        f"--source {source}: {reason}; without --source the source is the first "
        f"node, {escape(graph.label_of(0))}"
    )


def cmd_hierarchy(args: argparse.Namespace, out: TextIO) -> int:
    """``sssp hierarchy``: the graph's contraction hierarchy built into the cache, or found."""
    from .errors import InvalidArgumentError, InvalidGraphError
    from .hierarchy import CACHE_ENV, cache_path, hierarchy_for, read_cached

    graph = _load(args)
    if graph.is_float:
        raise InvalidGraphError(
            f"{args.file}: a contraction hierarchy takes integer weights only (these are real "
            "numbers); --weights random or unit gives integer ones"
        )
    path = cache_path(graph)
    if path is None:
        raise InvalidArgumentError(
            f"the hierarchy cache is off (${CACHE_ENV}): a hierarchy built now would not be "
            f"kept; unset {CACHE_ENV} or set it to a folder"
        )
    t0 = time.perf_counter()
    found = read_cached(graph, path)
    if found is not None:
        h, cached = found, True
    else:
        # Before a build of minutes: a folder that cannot keep it is refused now.
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=path.parent):
                pass
        except OSError as err:
            raise InvalidArgumentError(
                f"the hierarchy cache {escape(str(path.parent))} cannot be written "
                f"({err.strerror or err}): set {CACHE_ENV} to another folder"
            ) from err
        nodes = f"{graph.n} node" + ("" if graph.n == 1 else "s")
        print(
            f"{PROG}: building the contraction hierarchy of {nodes} (Ctrl-C stops it)",
            file=sys.stderr,
        )
        t0 = time.perf_counter()
        h, cached = hierarchy_for(graph)
        if not path.exists():  # hierarchy_for warns and goes on where it cannot write the file
            raise InvalidArgumentError(
                f"the hierarchy could not be kept in {escape(str(path.parent))} (set "
                f"{CACHE_ENV} to another folder)"
            )
    seconds = time.perf_counter() - t0
    summary = {
        "file": args.file,
        "nodes": graph.n,
        "edges": graph.m,
        "levels": h.levels,
        "hierarchy_edges": h.edges,
        "edges_per_m": round(h.edges / max(graph.m, 1), 3),
        "read_from_cache": cached,
        "build_seconds": round(h.seconds, 3),
        "seconds": round(seconds, 3),
        "cache_file": str(path),
    }
    if args.json:
        _print_json(summary, out)
        return 0
    how = "read from the cache" if cached else "built"
    _print_pairs(
        [
            ("file", args.file),
            ("nodes", graph.n),
            ("edges", graph.m),
            ("levels", f"{h.levels} (a phast solve's dependent steps, fewer under a core table)"),
            ("hierarchy edges", f"{h.edges} ({summary['edges_per_m']} x the graph's)"),
            ("hierarchy", f"{how} in {seconds:.2f} s (its build took {h.seconds:.2f} s)"),
            ("cache file", escape(str(path))),
        ],
        out,
    )
    return 0


def cmd_solve(args: argparse.Namespace, out: TextIO) -> int:
    """``sssp solve``: distances from one or several sources, with a timing summary."""
    from tqdm import tqdm

    from .solve import Solver

    if args.output and args.sources not in (None, 1):
        args.parser.error("-o saves one source's distances: drop -o or use --source/--sources 1")
    if args.output:
        to_stdout = is_stdout(args.output)
        if Path(args.output).suffix.lower() not in (".npy", ".npz") and not (
            to_stdout or is_stream(args.output)
        ):
            args.parser.error(
                f"-o {escape(args.output)!r}: the file must end in .npy "
                "(distances) or .npz (distances and predecessors)"
            )
        check_writable_dir(args.output)
        if to_stdout:
            out = sys.stderr  # stdout carries the distances: the summary goes beside them
    if args.devices is not None and args.sources is None:
        args.parser.error("--devices spreads a batch of sources over GPUs: add --sources K")
    if args.hierarchy is not None and not args.tuned:
        args.parser.error("--hierarchy says when a tuned pick on the phast loop runs: add --tuned")
    graph = _load(args)
    if args.sources is not None:
        sources = _draw_sources(graph, args.sources, args.seed)
    elif args.source is None:
        sources = [0]  # the first node, whatever the file calls it
    else:
        sources = [_source_index(graph, args.source, args.file)]
    with Solver(
        graph,
        algorithm=args.algorithm,
        variant=args.variant,
        backend=args.backend,
        tuned=args.tuned,
        db=args.db,
        device=args.device,
        hierarchy=args.hierarchy or "auto",
    ) as solver:
        if args.devices is not None:
            batch = solver.solve_many(sources, devices=args.devices)
            return _print_batch(args, graph, solver, batch, out)
        runs = []
        first: SSSPResult | None = None
        # tqdm(disable=None) draws the bar only when stderr is a terminal.
        for s in tqdm(
            sources,
            desc="solve",
            unit="source",
            file=sys.stderr,
            disable=None if len(sources) > 1 else True,
        ):
            r = solver.solve(s)
            first = r if first is None else first  # only -o needs a whole result: keep one
            runs.append(_run_summary(r, graph))
        backend, algorithm = solver.backend, solver.algorithm  # what ran (auto resolved)
        config, config_source, detail = solver.config, solver.config_source, solver.config_detail
    if args.output:
        assert first is not None
        _save_result(first, args.output, getattr(graph, "labels", None))
        log.info("wrote the result to %s", args.output)
    median_ms = statistics.median(r["time_ms"] for r in runs)
    summary = {
        "file": args.file,
        "graph": graph.name,
        "class": str(graph.graph_class()),
        "n": graph.n,
        "m": graph.m,
        "algorithm": algorithm,
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
        ("algorithm", f"{algorithm}/{args.variant}"),
        ("backend", backend),
    ]
    if config is not None:
        src = config_source.value if config_source is not None else "?"
        pairs.append(("config", f"{config} ({src}{', ' + detail if detail else ''})"))
    if len(runs) == 1:
        row = runs[0]
        pairs += [
            ("source", row["source"]),
            ("iterations", row["iterations"]),
            ("time", f"{row['time_ms']:.3f} ms"),
            ("reached", f"{row['reached']} / {graph.n}"),
            ("max dist", row["max_dist"] if row["max_dist"] is not None else "-"),
        ]
        if args.output:
            pairs.append(("output", args.output))
        _print_pairs(pairs, out)
        return 0
    _print_pairs(pairs, out)
    out.write(
        f"\n{'source':>10}  {'iterations':>10}  {'time ms':>10}  {'reached':>10}  {'max dist':>12}\n"
    )
    for row in runs:
        md = "-" if row["max_dist"] is None else row["max_dist"]
        out.write(
            f"{row['source']:>10}  {row['iterations']:>10}  {row['time_ms']:>10.3f}  "
            f"{row['reached']:>10}  {md:>12}\n"
        )
    out.write(f"\nmedian over {len(runs)} sources: {median_ms:.3f} ms\n")
    return 0


def _print_batch(args: argparse.Namespace, graph: Any, solver: Any, batch: Any, out: TextIO) -> int:
    """``sssp solve --sources K --devices ...``: one batch, its wall time per source and what
    each device solved."""
    reached = batch.reached
    runs = []
    for i, s in enumerate(batch.sources.tolist()):
        row = batch.dist[i][reached[i]]
        runs.append(
            {
                "source": graph.label_of(s),
                "iterations": int(batch.iterations[i]),
                "reached": int(reached[i].sum()),
                "max_dist": row.max().item() if row.size else None,
            }
        )
    per_source_ms = batch.timings["wall"] * 1e3 / batch.k
    rows = dict(batch.stats["rows_per_device"])
    summary = {
        "file": args.file,
        "graph": graph.name,
        "class": str(graph.graph_class()),
        "n": graph.n,
        "m": graph.m,
        "algorithm": batch.algorithm,
        "variant": args.variant,
        "backend": batch.backend,
        "devices": batch.stats["per_device"],
        "rows_per_device": rows,
        "wall_ms": batch.timings["wall"] * 1e3,
        "wall_ms_per_source": per_source_ms,
        "runs": runs,
    }
    if args.json:
        _print_json(summary, out)
        return 0
    pairs: list[tuple[str, Any]] = [
        ("graph", f"{graph.name} (n={graph.n}, m={graph.m}, class {summary['class']})"),
        ("algorithm", f"{batch.algorithm}/{args.variant}"),
        ("backend", batch.backend),
    ]
    for p in batch.stats["per_device"]:
        label = f"cuda:{p['device']}"
        pairs.append(
            (label, f"{rows[label]} sources, {p['algorithm']}, config {p['config_source']}")
        )
    pairs.append(("wall time", f"{per_source_ms:.3f} ms per source ({batch.k} sources)"))
    _print_pairs(pairs, out)
    return 0


# -- entry point --------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sssp`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 on an :class:`sssp.SSSPError` or another failure (one line on stderr),
        128 + the signal's number when SIGINT, SIGTERM or SIGHUP stopped it (130, 143, 129; no
        output file is left half-written), 141 when stdout's reader went away. Usage errors
        raise ``SystemExit(2)`` (argparse).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace, TextIO], int] = args.func
    with signal_policy(), logging_to_stderr(PROG, getattr(args, "verbose", 0)):
        return run_command(
            PROG, lambda: func(args, sys.stdout), debug=getattr(args, "debug", False)
        )


if __name__ == "__main__":
    sys.exit(main())
