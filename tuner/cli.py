"""The ``tune`` command: tune the relax/min/update kernels per graph class, and read back what the
tuning database holds.

``tune run`` is the default subcommand, so ``tune --graph-class deg200 --size 49k`` still works.
Results go to stdout, progress and logs to stderr; exit statuses are those of
:mod:`sssp.cliutil` (1 for an error, 2 for bad usage).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sssp.classes import (
    DIAMETER_CLASSES,
    ESTIMATED_DEGREES,
    GraphClass,
    high_diameter_classes,
    large_classes,
    paper_classes,
    parse_degree,
    size_label,
)
from sssp.cliutil import (
    ArgumentParser,
    atomic_output,
    check_writable_dir,
    escape,
    is_stdout,
    logging_to_stderr,
    non_negative_int,
    positive_int,
    run_command,
    size_arg,
)
from sssp.config import KERNELS
from sssp.errors import SSSPError
from sssp.result import GPU_ALGORITHMS, PHASED_ALGORITHMS, VARIANTS
from tuning_db.records import KERNEL_KINDS

from . import interrupt
from .space import SCOPES

if TYPE_CHECKING:
    from sssp.graph import Graph

log = logging.getLogger("tuner")

PROG = "tune"
COMMANDS = ("run", "engine", "report", "show", "export", "import", "upgrade")
FORMATS = ("md", "csv", "latex", "html")
# -o FILE picks the format from its suffix when --format is not given.
SUFFIX_FORMATS = {".md": "md", ".csv": "csv", ".tex": "latex", ".html": "html", ".htm": "html"}

EPILOG = """\
examples:
  tune --graph-class deg200 --size 49k          # tune one class on GPU 0 (short for tune run ...)
  tune run --all --device 1                     # the paper's 12 classes on GPU 1
  tune run --graph my.graph.gz --kernel relax --strategy tpe --budget 60
  tune run --replay --all                       # no GPU: replay recorded measurements
  tune engine --all                             # engine 2: loop, mapping and launch, end to end
  tune report                                   # Table 1 and the speedups, from the database
  tune report --format html -o report.html     # with figures; add --baselines FILE.csv for Boost/GAP
  tune report --format csv > results.csv        # one tidy table, for pandas
  tune show --device-name H200
  tune export -o results.json && tune import results.json --db sqlite:///other.sqlite
  tune upgrade --db URL                         # migrate an older database's tables
  tune run --all --devices 0,1                  # one worker process per GPU
  tune run --replay --all --workers 4 --db postgresql+psycopg://host/tuning   # shared by workers

The database is tuning.sqlite in the user data folder; --db URL (any SQLAlchemy URL or a file
path) or the environment variable SSSP_TUNING_DB points at another.
"""

RUN_EPILOG = """\
examples:
  tune run --graph-class deg200 --size 49k
  tune run --all --scope paper
  tune run --replay --graph-class deg2 --size 24k --db sqlite:///replay.sqlite
"""


# -- parsers: one function per subcommand -------------------------------------------------------
def _degree_class(text: str) -> str:
    try:
        return parse_degree(text)
    except SSSPError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _common() -> ArgumentParser:
    """Options every subcommand takes (before or after its name)."""
    p = ArgumentParser(add_help=False)
    p.add_argument(
        "--db",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="tuning database: an SQLAlchemy URL or a SQLite file path "
        "(default: $SSSP_TUNING_DB, else tuning.sqlite in the user data folder)",
    )
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


def _add_class_choice(p: ArgumentParser, *, graph_file: bool) -> None:
    """What is tuned: one class (``--graph-class`` with ``--size``), the paper's twelve, or
    (``graph_file``) the classes of a graph file."""
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--graph-class",
        type=_degree_class,
        metavar="DEG",
        help="degree class deg2, deg20, deg200 or deg1000 (with --size)",
    )
    what.add_argument("--all", action="store_true", help="the paper's 12 classes")
    if graph_file:
        what.add_argument(
            "--graph",
            metavar="FILE",
            help="tune on a graph file instead of a generated class instance",
        )
    p.add_argument(
        "--size",
        type=size_arg,
        metavar="SIZE",
        help="size of --graph-class: 24k, 49k, 98k, ... or a node count",
    )


def _add_target_options(
    p: ArgumentParser, algorithms: tuple[str, ...] = PHASED_ALGORITHMS, default: str = "crauser"
) -> None:
    """What is tuned and where: algorithm, variant, GPU, seed (run and engine alike)."""
    p.add_argument(
        "--algorithm",
        default=default,
        choices=algorithms,
        help=f"algorithm to tune for (default {default})",
    )
    p.add_argument(
        "--variant",
        default="successors",
        choices=VARIANTS,
        help="relax variant (default successors)",
    )
    p.add_argument(
        "--device",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="CUDA device ordinal, as in nvidia-smi and CUDA_VISIBLE_DEVICES (default 0)",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="seed of the class instances, sources and search (default 0)",
    )


def _add_run_parser(sub: Any, common: ArgumentParser) -> ArgumentParser:
    p = sub.add_parser(
        "run",
        parents=[common],
        help="tune graph classes (the default subcommand)",
        description="Measure launch configurations of the relax, min and update "
        "kernels on a GPU for each graph class, verify the best end to "
        "end, and store it. Needs a CUDA GPU, except with --replay.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_class_choice(p, graph_file=True)
    p.add_argument(
        "--kernel",
        default="all",
        choices=[*KERNELS, "all"],
        help="tune only this kernel (default: all three)",
    )
    p.add_argument(
        "--strategy",
        default="exhaustive",
        choices=["exhaustive", "tpe"],
        help="try every configuration (default) or sample with Optuna's TPE",
    )
    p.add_argument(
        "--budget", type=positive_int, metavar="N", help="trials per kernel for --strategy tpe"
    )
    p.add_argument(
        "--scope",
        default="extended",
        choices=SCOPES,
        help="search space: the paper's, extended (default) or full",
    )
    p.add_argument(
        "--sources",
        type=positive_int,
        default=20,
        metavar="K",
        help="random sources of the end-to-end check (default 20; use >= 20)",
    )
    _add_target_options(p)
    p.add_argument(
        "--replay",
        action="store_true",
        help="replay recorded measurements instead of timing a GPU (no GPU needed); "
        "results are labelled as replayed",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="folder for Kernel Tuner's cache files (default: a private per-user folder)",
    )
    _add_worker_options(p)
    p.set_defaults(
        func=cmd_run,
        parser=p,
        interrupted="interrupted; the run is stored as interrupted and resumes on the next call",
    )
    return p


def _add_engine_parser(sub: Any, common: ArgumentParser) -> ArgumentParser:
    p = sub.add_parser(
        "engine",
        parents=[common],
        help="tune engine 2 end to end (what solve uses)",
        description="Search engine 2's structural and launch choices (loop mechanism, "
        "block size, L1 state, lanes per node, blocks per SM, block-local "
        "phase limit; with --algorithm auto, the default, also the "
        "algorithm and near-far's delta) with Optuna, scoring each by the "
        "median wall time of whole solves on the class instance, and store the "
        "best for solve(tuned=True). Each class is a tuning run: an interrupted "
        "search resumes where it stopped on the next call, and a class with a "
        "finished run of the same kernels, class, algorithm and seed is done. "
        "Needs a CUDA GPU, except with --replay.",
        epilog="examples:\n  tune engine --all\n  tune engine --graph-class deg2 --size 98k "
        "--budget 40\n  tune engine --all --devices 0,1\n"
        "  tune engine --all --high-diameter --many-sources only   # the batch kernel's picks\n"
        "  tune engine --replay --all --db tuning.sqlite   # no GPU: the measured runs in the db",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_class_choice(p, graph_file=False)
    p.add_argument(
        "--diameter",
        default="lowdiam",
        choices=DIAMETER_CLASSES,
        help="diameter class of --graph-class (default lowdiam; highdiam: a grid or "
        "random geometric instance, for roads and meshes)",
    )
    p.add_argument(
        "--high-diameter",
        action="store_true",
        help="with --all: also the high-diameter classes (24k-393k x deg2, deg20)",
    )
    p.add_argument(
        "--large",
        action="store_true",
        help="with --all: also the classes of 196k-3145k nodes x deg2, deg20 (low diameter, "
        "and high diameter past 393k)",
    )
    p.add_argument(
        "--budget",
        type=positive_int,
        default=30,
        metavar="N",
        help="configurations tried per class (default 30)",
    )
    p.add_argument(
        "--sources",
        type=positive_int,
        default=5,
        metavar="K",
        help="sources per configuration, medians (default 5)",
    )
    _add_target_options(p, ("auto", *GPU_ALGORITHMS), "auto")
    p.add_argument(
        "--many-sources",
        choices=("search", "skip", "only"),
        default="search",
        help="the many-source choices (the batch kernel's blocks per source and threads "
        "per block, scored by wall time per source of solve_many): search them after each "
        "class's search (default), skip them, or search only them on the class's stored record",
    )
    p.add_argument(
        "--replay",
        action="store_true",
        help="score configurations from the measured runs of the same classes in the "
        "database instead of a GPU (no GPU needed); results are labelled as replayed",
    )
    _add_worker_options(p)
    p.set_defaults(
        func=cmd_engine,
        parser=p,
        interrupted="interrupted; the run is stored as interrupted and resumes on the next call",
    )
    return p


def _add_worker_options(p: ArgumentParser) -> None:
    p.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="worker processes sharing the classes through the database (one host; run "
        "the same command on other hosts against one PostgreSQL --db to share more)",
    )
    p.add_argument(
        "--devices", metavar="LIST", help="GPU ordinals, one worker process each, e.g. 0,1"
    )


def _add_upgrade_parser(sub: Any, common: ArgumentParser) -> ArgumentParser:
    p = sub.add_parser(
        "upgrade",
        parents=[common],
        help="migrate an older database's tables",
        description="Bring the project's tables of an older tuning database to this "
        "version's schema (Alembic migrations; Optuna's own tables are "
        "Optuna's to upgrade).",
    )
    p.set_defaults(func=cmd_upgrade, parser=p)
    return p


def _add_output_options(p: ArgumentParser, *, what: str) -> None:
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="md (default), csv (one tidy table), latex or html (a complete document); "
        "with -o, the default follows its suffix (.md .csv .tex .html)",
    )
    p.add_argument(
        "--device-name",
        metavar="NAME",
        help="only this GPU, by full or short name (e.g. 'NVIDIA H200' or H200)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help=f"write the {what} to FILE (UTF-8)")


def _add_report_parser(sub: Any, common: ArgumentParser) -> ArgumentParser:
    p = sub.add_parser(
        "report",
        parents=[common],
        help="Table 1 and the speedups",
        description="The paper's Table 1 (tuned configuration per kernel, class and "
        "GPU) and the end-to-end speedups, from the stored results. "
        "CSV gives one tidy table with every figure instead.",
    )
    _add_output_options(p, what="report")
    p.add_argument(
        "--baselines",
        metavar="FILE.csv",
        help="benchmark times (columns graph, gpu_ms, boost_ms, gap_ms, as "
        "benchmarks/bench_sssp.py writes them) for the HTML report's dot plot of "
        "the GPU against Boost and GAP, e.g. benchmarks/results/h200/sssp_vs_boost.csv",
    )
    p.set_defaults(func=cmd_report, parser=p)
    return p


def _add_show_parser(sub: Any, common: ArgumentParser) -> ArgumentParser:
    p = sub.add_parser(
        "show",
        parents=[common],
        help="every stored best configuration",
        description="List every stored best configuration: what solve(tuned=True) "
        "runs, the search's picks, speedup and date.",
    )
    _add_output_options(p, what="listing")
    p.set_defaults(func=cmd_show, parser=p)
    return p


def _add_export_parser(sub: Any, common: ArgumentParser) -> ArgumentParser:
    p = sub.add_parser(
        "export",
        parents=[common],
        help="write the database as JSON",
        description="Write every device, run, trial and best configuration of the "
        "database to a JSON file that `tune import` reads back; or, with --device-name, "
        "--kernel and --no-trials, one GPU model's results as the package ships them "
        "(tuning_db/data/*.json).",
        epilog="examples:\n"
        "  tune export -o all.json\n"
        "  # an H200 session's engine runs merged into the shipped records:\n"
        "  tune import tuning_db/data/h200-engine2.json --db sqlite:///merge.sqlite\n"
        "  tune import session.json --db sqlite:///merge.sqlite\n"
        "  tune export --db sqlite:///merge.sqlite --device-name H200 --kernel engine --no-trials \\\n"
        "      --newest -o tuning_db/data/h200-engine2.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE.json", help="the JSON file")
    p.add_argument(
        "--device-name",
        metavar="NAME",
        help="only the GPUs of this full or short name (e.g. 'NVIDIA H200' or H200)",
    )
    p.add_argument(
        "--kernel",
        choices=KERNEL_KINDS,
        help="only the runs and best configurations of engine 2 (tune engine) or of the "
        "paper's three kernels (tune run)",
    )
    p.add_argument(
        "--no-trials",
        dest="trials",
        action="store_false",
        help="leave the runs' trials out (the shipped files hold runs and best configurations)",
    )
    p.add_argument(
        "--newest",
        action="store_true",
        help="of the best configurations of a class on cards of one GPU model, only the newest "
        "(the one solve(tuned=True) takes on another card of that model)",
    )
    p.set_defaults(func=cmd_export, parser=p)
    return p


def _add_import_parser(sub: Any, common: ArgumentParser) -> ArgumentParser:
    p = sub.add_parser(
        "import",
        parents=[common],
        help="read a JSON export into the database",
        description="Import a file written by `tune export`, or with --shipped the results "
        "shipped in the package (tuning_db/data/*.json: a database seeded by an older "
        "version gets the newer ones); records already present are kept (the newer best "
        "configuration wins).",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("file", nargs="?", metavar="FILE.json", help="a file written by tune export")
    what.add_argument(
        "--shipped",
        action="store_true",
        help="the results shipped in the package (runs and best configurations)",
    )
    p.set_defaults(func=cmd_import, parser=p)
    return p


def build_parser() -> ArgumentParser:
    """The ``tune`` argument parser (exposed for documentation and tests)."""
    from sssp import __version__

    common = _common()
    parser = ArgumentParser(
        prog=PROG,
        parents=[common],
        epilog=EPILOG,
        description="Tune the relax/min/update kernels per graph class and report the results.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_run_parser(sub, common)
    _add_engine_parser(sub, common)
    _add_report_parser(sub, common)
    _add_show_parser(sub, common)
    _add_export_parser(sub, common)
    _add_import_parser(sub, common)
    _add_upgrade_parser(sub, common)
    return parser


# -- helpers ------------------------------------------------------------------------------------
def _store(args: argparse.Namespace, *, writes: bool) -> Any:
    """The tuning database of ``--db`` (default: the user's).

    A command that only reads (``writes=False``) never creates a named database: a missing file
    is an error naming it. A command that stores results refuses a database in memory, whose
    contents would be gone when the command ends.
    """
    from tuning_db import ENV_VAR, Store, default_path

    db = getattr(args, "db", None)
    try:
        store = Store(db, create=writes)
    except OSError as err:
        # The default database's folder cannot be made (unwritable HOME, read-only disk).
        where = err.filename or default_path().parent
        raise SSSPError(
            f"cannot create the tuning database folder {escape(where)}: "
            f"{err.strerror or err}; pass --db URL or set {ENV_VAR}"
        ) from err
    if writes and not store.shared:
        store.close()
        raise SSSPError(
            f"tuning database {store.url} is in memory: what `tune {args.command}` "
            "stores would be lost when it exits; pass a file (sqlite:///PATH) or a "
            "server URL"
        )
    return store


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    if args.output:
        return SUFFIX_FORMATS.get(Path(args.output).suffix.lower(), "md")
    return "md"


def _emit(text: str, args: argparse.Namespace) -> None:
    """Print ``text``, or write it (UTF-8, atomically) to ``-o FILE``. Control characters that
    came from the database (a hand-edited device name) are shown escaped, line by line."""
    text = "\n".join(escape(line) for line in text.split("\n"))
    if not args.output or is_stdout(args.output):  # -o /dev/stdout: at stdout's position
        sys.stdout.write(text)
        return
    check_writable_dir(args.output)
    with atomic_output(args.output, Path(args.output).suffix) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    print(f"wrote {escape(args.output)}", file=sys.stderr)


def _records(store: Any) -> list[Any]:
    records = store.all_best(device_name=None)
    if not records:
        raise SSSPError(f"no tuned configurations in {store.url}")
    return records


# -- commands -----------------------------------------------------------------------------------
def _classes(args: argparse.Namespace) -> list[GraphClass]:
    diameter = getattr(args, "diameter", "lowdiam")
    if args.all:
        classes = paper_classes()
        if getattr(args, "high_diameter", False):
            classes += high_diameter_classes()
        if getattr(args, "large", False):
            classes += large_classes()
        return classes
    if args.graph_class:
        if args.size is None:
            args.parser.error("--graph-class needs --size (e.g. --size 49k)")
        if diameter == "highdiam" and args.graph_class not in ESTIMATED_DEGREES:
            args.parser.error(f"--diameter highdiam goes with {' or '.join(ESTIMATED_DEGREES)}")
        return [GraphClass(size_label(args.size), args.graph_class, diameter)]
    return []


def _require_gpu(device: int, command: str) -> None:
    """One clear error when CUDA device ``device`` is missing, pointing at ``--replay``."""
    from sssp.gpu import is_available

    if is_available(device):
        return
    from sssp.gpu.device import driver

    try:
        driver()
        reason = f"device {device} does not exist"
    except SSSPError as err:
        reason = str(err)
    raise SSSPError(
        f"tuning needs a CUDA GPU: {reason}. On a machine without one, "
        f"`{command} --replay ...` re-runs the search on recorded measurements"
    )


def cmd_run(args: argparse.Namespace) -> int:
    """``tune run``: tune classes (or replay them), store the best, print a summary."""
    from tqdm import tqdm

    from . import report
    from .pipeline import TuneOptions, tune_class

    if args.size is not None and not args.graph_class:
        args.parser.error("--size goes with --graph-class")
    if args.budget is not None and args.strategy != "tpe":
        args.parser.error("--budget goes with --strategy tpe")
    if args.sources < 20:
        log.warning(
            "--sources %d is below the 20 the end-to-end check is meant to use", args.sources
        )
    jobs: list[tuple[GraphClass, Graph | None, str]] = [(gc, None, "") for gc in _classes(args)]
    if args.replay and not args.graph:
        _check_replayable([gc for gc, _, _ in jobs], args)
    if not args.replay:
        _require_gpu(args.device, "tune run")
    store = _store(args, writes=True)
    kernels_ = KERNELS if args.kernel == "all" else (args.kernel,)
    opts = TuneOptions(
        kernels=kernels_,
        strategy=args.strategy,
        budget=args.budget,
        scope=args.scope,
        sources=args.sources,
        algorithm=args.algorithm,
        variant=args.variant,
        seed=args.seed,
        device=args.device,
        replay=args.replay,
    )
    label = " [REPLAY of recorded measurements]" if args.replay else ""
    if args.workers is not None or args.devices:
        from . import workers

        devices = workers.parse_devices(args.devices)
        if args.graph:
            args.parser.error("--workers/--devices go with --all or --graph-class")
        classes = [gc for gc, _, _ in jobs]
        t_all = time.perf_counter()
        workers.run_pool(
            classes,
            opts,
            getattr(args, "db", None),
            workers=args.workers,
            devices=devices,
            cache_dir=args.cache_dir,
        )
        done = [b for b in store.all_best() if b.graph_class in classes and b.replay == args.replay]
        print(
            f"# {len(classes)} class(es) in {time.perf_counter() - t_all:.1f} s by "
            f"{args.workers or len(devices)} worker(s){label}",
            flush=True,
        )
        about = report.about(done, results="replayed" if args.replay else "measured")
        if len(done) > 1:
            print(report.render([report.table1_data(done)], "md", about=about), end="")
        return 0
    if args.graph:
        import sssp

        g = sssp.load(args.graph, seed=args.seed)
        jobs = [(g.graph_class(), g, f"file {args.graph}")]
    t_all = time.perf_counter()
    done = []
    for gc, graph, instance in jobs:
        # disable=None: no bar unless stderr is a terminal (a log file gets no \r updates).
        bar = tqdm(desc=f"{gc}{label}", unit="cfg", file=sys.stderr, leave=False, disable=None)

        def progress(kernel, trial, bar=bar):
            bar.set_postfix_str(f"{kernel} {trial.config.label} {trial.status.value}")
            bar.update(1)

        out = tune_class(
            gc,
            opts,
            store=store,
            graph=graph,
            instance=instance,
            progress=progress,
            cache_root=None if args.cache_dir is None else Path(args.cache_dir),
        )
        bar.close()
        assert out is not None  # None only for a run that a claim callback refused
        b = out.best
        verdict = "kept default (not faster beyond noise)" if b.kept_default else "tuned"
        print(
            f"{gc}{label}: {b.tuned_config}  default {b.default_median_ms:.3f} ms  tuned "
            f"{b.tuned_median_ms:.3f} ms  speedup {b.speedup:.2f}×  -> {verdict}  "
            f"[{out.trials} trials, {out.wall_seconds:.1f} s{', resumed' if out.resumed else ''}]",
            flush=True,
        )
        done.append(b)
    print(f"# {len(done)} class(es) in {time.perf_counter() - t_all:.1f} s{label}", flush=True)
    about = report.about(done, results="replayed" if args.replay else "measured")
    if len(done) > 1:
        tables = [report.table1_data(done), report.speedup_table_data(done)]
        print(report.render(tables, "md", about=about), end="")
    else:
        print("\n".join(about))
    return 0


def _check_replayable(classes: list[GraphClass], args: argparse.Namespace) -> None:
    """Refuse, before any work, a replay of classes whose recorded measurements do not ship,
    naming those that do (for this algorithm, variant, scope and kernels, else all that ship)."""
    from .pipeline import TuneOptions, cache_path, recorded_dir, store_recorded_bests

    kernels_ = KERNELS if args.kernel == "all" else (args.kernel,)
    root = recorded_dir() / "kt_cache"
    shipped: dict[tuple[str, str, str], set[GraphClass]] = {}
    for r in store_recorded_bests():
        for scope in SCOPES:
            opts = TuneOptions(
                kernels=kernels_, scope=scope, algorithm=r.algorithm, variant=r.variant
            )
            if all(
                cache_path(
                    root, r.kernel_version.digest, r.device.name, r.graph_class, k, opts
                ).exists()
                for k in kernels_
            ):
                shipped.setdefault((r.algorithm, r.variant, scope), set()).add(r.graph_class)

    def names(gcs: Iterable[GraphClass]) -> str:
        return ", ".join(
            str(gc) for gc in sorted(gcs, key=lambda gc: (gc.nodes, gc.mean_degree, gc.diameter))
        )

    key = (args.algorithm, args.variant, args.scope)
    missing = [gc for gc in classes if gc not in shipped.get(key, ())]
    if not missing:
        return
    what = f"{args.algorithm}/{args.variant}, --scope {args.scope}"
    if key in shipped:
        raise SSSPError(
            f"no recorded measurements ship for class {names(missing)} ({what}); "
            f"--replay can replay {names(shipped[key])}"
        )
    others = "; ".join(
        f"{a}/{v} --scope {sc}: {names(gcs)}" for (a, v, sc), gcs in sorted(shipped.items())
    )
    raise SSSPError(f"no recorded measurements ship for {what}; recorded are {others or 'none'}")


def cmd_engine(args: argparse.Namespace) -> int:
    """``tune engine``: the class search per class on this GPU (or replayed), best stored."""
    from . import workers
    from .class_search import EngineOptions

    classes = _classes(args)
    opts = EngineOptions(
        algorithm=args.algorithm,
        variant=args.variant,
        budget=args.budget,
        sources=args.sources,
        seed=args.seed,
        device=args.device,
        replay=args.replay,
        many=args.many_sources,
    )
    devices = workers.parse_devices(args.devices)
    if not args.replay:
        _require_gpu(args.device, "tune engine")
    _store(args, writes=True).close()  # created (or refused) once, before any worker
    db = getattr(args, "db", None)
    if args.workers is not None or devices:
        workers.run_pool(classes, opts, db, workers=args.workers, devices=devices)
    else:  # one worker, in this process: the same claims, so that a finished class is done
        workers.worker(0, None, classes, opts, db, None)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """``tune report``: Table 1 and the speedups (CSV: the tidy long table)."""
    from . import report

    fmt = _format(args)
    if args.baselines and fmt != "html":
        args.parser.error("--baselines draws a figure of the HTML report: add --format html")
    baselines = None
    if args.baselines:  # read first: a bad file fails before the database is opened
        from .figures import read_baselines

        try:
            text = Path(args.baselines).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise SSSPError(
                f"cannot read --baselines {escape(args.baselines)!r}: "
                f"{getattr(err, 'strerror', None) or err}"
            ) from err
        baselines = read_baselines(text, escape(args.baselines))
    store = _store(args, writes=False)
    selected = report.select(_records(store), device_name=args.device_name)
    if fmt == "csv":
        text = report.long_table(selected)
    else:
        tables = []  # Table 1 shows the paper's kernels, which a database of tune engine lacks
        if not all(report.is_engine2(r) for r in selected):
            tables.append(report.table1_data(selected))
        if any(report.is_engine2(r) for r in selected):
            tables.append(report.engine_table_data(selected))
        tables.append(report.speedup_table_data(selected))
        figures, notes = [], []
        if fmt == "html":
            from . import figures as draw

            figures.append(draw.speedup_heatmap(selected))
            if baselines is not None:
                figures.append(draw.baseline_dotplot(baselines, source=Path(args.baselines).name))
            else:
                notes.append(
                    "The GPU against Boost and GAP: give the benchmark times with --baselines "
                    "FILE.csv (e.g. benchmarks/results/h200/sssp_vs_boost.csv) for that figure."
                )
        text = report.render(
            tables,
            fmt,
            about=report.about(selected, database=store.url),
            figures=figures,
            notes=notes,
        )
    _emit(text, args)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """``tune show``: every stored best configuration."""
    from . import report

    store = _store(args, writes=False)
    text = report.show_table(
        _records(store), _format(args), device_name=args.device_name, database=store.url
    )
    _emit(text, args)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """``tune export``: the database as JSON."""
    store = _store(args, writes=False)
    check_writable_dir(args.output)
    with atomic_output(args.output, ".json") as tmp:
        store.export_json(
            tmp,
            device_name=args.device_name,
            kernel=args.kernel,
            trials=args.trials,
            newest=args.newest,
        )
    print(f"wrote {escape(args.output)}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """``tune import``: read a JSON export into the database."""
    store = _store(args, writes=True)
    if args.shipped:
        n = store.seed_from_package()
        print(f"imported {n} records from the shipped results into {store.url}", file=sys.stderr)
        return 0
    n = store.import_json(args.file)
    print(f"imported {n} records from {escape(args.file)} into {store.url}", file=sys.stderr)
    return 0


def cmd_upgrade(args: argparse.Namespace) -> int:
    """``tune upgrade``: migrate the project's tables of an older database."""
    from tuning_db import Store

    store = Store(getattr(args, "db", None), upgrade=True, create=False)
    print(f"{store.url}: schema revision {store.upgrade()}", file=sys.stderr)
    return 0


# -- entry point --------------------------------------------------------------------------------
def _with_default_command(argv: list[str]) -> list[str]:
    """``tune --graph-class ...`` (options first, no subcommand) means ``tune run ...``."""
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        if not any(a in COMMANDS for a in argv):
            return ["run", *argv]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tune`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 on an error (one line on stderr), 128 + the signal's number when
        SIGINT, SIGTERM or SIGHUP stopped it (130, 143, 129; the run under way is stored as
        interrupted), 141 when stdout's reader went away. Usage errors raise
        ``SystemExit(2)`` (argparse).
    """
    argv = _with_default_command(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(argv)
    with interrupt.policy(), logging_to_stderr(PROG, getattr(args, "verbose", 0)):
        return run_command(
            PROG,
            lambda: args.func(args),
            debug=getattr(args, "debug", False),
            interrupted=getattr(args, "interrupted", "interrupted"),
        )


if __name__ == "__main__":
    sys.exit(main())
