"""The ``tune`` command.

Examples::

    tune --graph-class deg200 --size 49k            # tune one class on GPU 0
    tune --all                                      # the paper's 12 classes
    tune --graph my.graph.gz --kernel relax --strategy tpe --budget 60
    tune --replay --all                             # no GPU: replay recorded measurements
    tune report --format latex                      # Table 1 from the database
    tune show
    tune export -o results.json
    tune import results.json                        # add an export (with its trials)
    tune upgrade --db URL                           # migrate an older database's tables
    tune --all --devices 0,1                        # one worker process per GPU
    tune --replay --all --workers 4 --db postgresql+psycopg://host/tuning   # shared by workers
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from sssp.classes import GraphClass, paper_classes, parse_degree, parse_size, size_label
from sssp.config import KERNELS
from sssp.errors import SSSPError

log = logging.getLogger("tuner")


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tune", description="Tune the relax/min/update kernels per graph class.",
                                epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--graph-class", help="degree class: deg2, deg20, deg200 or deg1000 (with --size)")
    what.add_argument("--all", action="store_true", help="the paper's 12 classes")
    what.add_argument("--graph", help="tune on a graph file instead of a generated class instance")
    p.add_argument("--size", help="size label such as 24k, 49k, 98k (with --graph-class)")
    p.add_argument("--kernel", default="all", choices=[*KERNELS, "all"])
    p.add_argument("--strategy", default="exhaustive", choices=["exhaustive", "tpe"])
    p.add_argument("--budget", type=int, help="trials per kernel for tpe")
    p.add_argument("--scope", default="extended", choices=["paper", "extended", "full"])
    p.add_argument("--sources", type=int, default=20, help="sources of the end-to-end check (>= 20)")
    p.add_argument("--algorithm", default="crauser", choices=["crauser", "martin"])
    p.add_argument("--variant", default="successors", choices=["successors", "predecessors"])
    p.add_argument("--db", help="SQLAlchemy URL of the tuning database (default: the user's)")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--replay", action="store_true", help="replay recorded measurements (no GPU needed)")
    p.add_argument("--cache-dir", help="where Kernel Tuner's cache files go")
    p.add_argument("--workers", type=int, help="worker processes sharing the classes through the database")
    p.add_argument("--devices", help="GPU ordinals, one worker each, e.g. 0,1")
    p.add_argument("-v", "--verbose", action="count", default=0)
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _report_parser(name: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"tune {name}")
    p.add_argument("--format", default="md", choices=["md", "csv", "latex", "html"])
    p.add_argument("--device", help="only this device (name)")
    p.add_argument("--db", help="SQLAlchemy URL of the tuning database")
    p.add_argument("-o", "--output", help="(export) JSON file to write")
    p.add_argument("file", nargs="?", help="(import) JSON export to read")
    p.add_argument("--debug", action="store_true")
    return p


def _classes(args) -> list[GraphClass]:
    if args.all:
        return paper_classes()
    if args.graph_class:
        if not args.size:
            raise SystemExit("tune: error: --graph-class needs --size (e.g. --size 49k)")
        try:
            return [GraphClass(size_label(parse_size(args.size)), parse_degree(args.graph_class))]
        except SSSPError as err:
            raise SystemExit(f"tune: error: {err}") from None
    return []


def run(args) -> int:
    from tqdm import tqdm

    from tuning_db import Store

    from . import report
    from .pipeline import TuneOptions, tune_class

    if args.sources < 20:
        log.warning("--sources %d is below the 20 the end-to-end check is meant to use", args.sources)
    if not args.replay:
        from sssp.gpu import is_available

        if not is_available(args.device):
            from sssp.gpu.device import driver

            try:
                driver()
                reason = f"device {args.device} does not exist"
            except SSSPError as err:
                reason = str(err)
            raise SSSPError(f"tuning needs a CUDA GPU: {reason}. On a machine without one, "
                            "`tune --replay ...` re-runs the pipeline on the recorded measurements")
    store = Store(args.db)
    kernels_ = KERNELS if args.kernel == "all" else (args.kernel,)
    opts = TuneOptions(kernels=kernels_, strategy=args.strategy, budget=args.budget, scope=args.scope,
                       sources=args.sources, algorithm=args.algorithm, variant=args.variant,
                       seed=args.seed, device=args.device, replay=args.replay)
    label = " [REPLAY of recorded measurements]" if args.replay else ""
    if args.workers is not None or args.devices:
        from . import workers

        devices = workers.parse_devices(args.devices)
        if args.graph or (args.workers is not None and args.workers < 1):
            raise SSSPError("--workers/--devices need --all or --graph-class, and at least 1 worker")
        classes = _classes(args)
        t_all = time.perf_counter()
        workers.run_pool(classes, opts, args.db, workers=args.workers, devices=devices,
                         cache_dir=args.cache_dir)
        done = [b for b in store.all_best() if b.graph_class in classes and b.replay == args.replay]
        print(f"# {len(classes)} class(es) in {time.perf_counter() - t_all:.1f} s by "
              f"{args.workers or len(devices)} worker(s){label}", flush=True)
        if len(done) > 1:
            print(report.table1(done, fmt="md"))
        return 0
    jobs: list[tuple[GraphClass, object, str]] = []
    if args.graph:
        import sssp

        g = sssp.load(args.graph, seed=args.seed)
        jobs.append((g.graph_class(), g, f"file {args.graph}"))
    else:
        jobs = [(gc, None, "") for gc in _classes(args)]
    t_all = time.perf_counter()
    done = []
    for gc, graph, instance in jobs:
        bar = tqdm(desc=f"{gc}{label}", unit="cfg", file=sys.stderr, leave=False)

        def progress(kernel, trial, bar=bar):
            bar.set_postfix_str(f"{kernel} {trial.config.label} {trial.status.value}")
            bar.update(1)

        out = tune_class(gc, opts, store=store, graph=graph, instance=instance, progress=progress,
                         cache_root=None if args.cache_dir is None else Path(args.cache_dir))
        bar.close()
        b = out.best
        verdict = "kept default (not faster beyond noise)" if b.kept_default else "tuned"
        print(f"{gc}{label}: {b.tuned_config}  default {b.default_median_ms:.3f} ms  tuned "
              f"{b.tuned_median_ms:.3f} ms  speedup {b.speedup:.3f}x  -> {verdict}  "
              f"[{out.trials} trials, {out.wall_seconds:.1f} s{', resumed' if out.resumed else ''}]",
              flush=True)
        done.append(b)
    print(f"# {len(done)} class(es) in {time.perf_counter() - t_all:.1f} s{label}", flush=True)
    if len(done) > 1:
        print(report.table1(done, fmt="md"))
        print(report.speedup_table(done, fmt="md"))
    return 0


def report_cmd(name: str, args) -> int:
    from tuning_db import Store

    from . import report

    store = Store(args.db, upgrade=name == "upgrade")
    if name == "upgrade":
        print(f"{store.url}: schema revision {store.upgrade()}", file=sys.stderr)
        return 0
    if name == "import":
        if not args.file:
            raise SystemExit("tune import: error: the JSON file to import is required")
        print(f"{args.file}: {store.import_json(args.file)} records written", file=sys.stderr)
        return 0
    if name == "export":
        if not args.output:
            raise SystemExit("tune export: error: -o/--output is required")
        store.export_json(args.output)
        print(f"wrote {args.output}", file=sys.stderr)
        return 0
    records = store.all_best(device_name=None)
    if not records:
        raise SSSPError(f"no tuned configurations in {store.url}")
    if name == "report":
        print(report.table1(records, fmt=args.format, device=args.device))
        print()
        print(report.speedup_table(records, fmt=args.format, device=args.device))
    else:
        print(report.show_table(records, fmt=args.format, device=args.device))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    sub = argv[0] if argv and argv[0] in ("report", "show", "export", "import", "upgrade") else None
    import signal

    def _interrupt(signum, frame):
        raise KeyboardInterrupt  # unwind: runs stored as interrupted, temporary folders removed

    signal.signal(signal.SIGTERM, _interrupt)
    args = _report_parser(sub).parse_args(argv[1:]) if sub else _run_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING - 10 * getattr(args, "verbose", 0),
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return report_cmd(sub, args) if sub else run(args)
    except SSSPError as err:
        if args.debug:
            raise
        print(f"tune: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tune: interrupted; the run is stored as interrupted and resumes on the next call",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
