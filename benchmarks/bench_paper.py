"""The paper's experiments 1 and 2, recorded for the claims table and the notebooks.

One command on a CUDA host writes every recorded result of the paper's evaluation::

    python benchmarks/bench_paper.py --experiment all          # reduced set, at most 500 s
    python benchmarks/bench_paper.py --experiment 1 --full     # the paper's full set (hours)

Experiment 1 (``exp1_martin.csv``): Martín graphs (in-degree 7, weights 1..10,
``sssp.generate("martin", size=...)``). GPU Martín and GPU Crauser, successors and predecessors,
the paper's default launch configuration and the tuned one; CPU Martín and CPU Crauser (the
paper's sequential versions), both variants; the share of relax threads that had work.

Experiment 2 (``exp2_graphs.csv``): the 15 random classes (24k/49k/98k × degree 2..2000, plus
98k × degree 10, where the paper puts the GPU/Boost crossover at that size), the
real graphs of ``$SSSP_GRAPHS_DIR`` (seeded weights 1..100, as the paper), Graph500 Kronecker
graphs (DIMACS10's edge factor 48) and a social-network-like R-MAT graph. (A) GPU Martín, GPU
Crauser, CPU Crauser; (B) default vs tuned GPU configuration; (D) GPU against Boost's Dijkstra
(``benchmarks/boost_dijkstra.cpp``), time and memory; and, as a last column, what
``solve(tuned=True)`` runs: the algorithm the tuner picked for the graph's class (rows
``algorithm=auto:<what ran>``, e.g. ``auto:near-far``).

Files go to ``benchmarks/results/<gpu>/`` (e.g. ``h200``), in the format of
``benchmarks/recorded.py``: a header naming the device, driver, date, kernel digest, sources and
command, then one row per graph × solver with the mean and median time over the same seeded
random sources.

Every answer (GPU, CPU, Boost) is checked against SciPy's Dijkstra from the same source:
distances exactly (Boost: the sum of its finite distances), and the predecessor tree of the first
source where the graph has at most ``--tree-check-edges`` edges. A wrong answer is recorded as
``status=wrong: ...`` without a time, and the command exits with status 1 at the end.

Timing: each solver gets one untimed warm-up solve on the graph; times are
``SSSPResult.timings["gpu"]`` on the GPU (CUDA events around the whole solve; ``"total"`` on the CPU). Everything runs one
after the other in this process, so the CPU anchors (CPU Crauser/Martín, SciPy, Boost) are timed
alone, with no other work on the host.

Sizes. The default is a reduced set meant to fit in a 9-minute device call, with a default
``--budget-seconds 500`` as a guard: experiment 1 on 1M, 2M and 4M nodes with 10 GPU sources and 2 CPU
sources; experiment 2 on all 15 random classes, the real graphs of 10k to 100k nodes, Kronecker
scales 16 to 18 and the social graph, 10 GPU and 3 CPU sources. ``--full`` selects the paper's
set (1M..11M, all real graphs, scales 16..21, 100 sources everywhere). ``--budget-seconds``
stops cleanly: a graph that would not finish in time is not started, the rows measured so far
are written (the file is rewritten after every graph) and the header says where it stopped.
With ``--experiment all`` experiment 1 may use 40% of the budget, experiment 2 the rest.

On a machine without a GPU, ``--backend cpu`` runs the same code path with the CPU solvers in
place of the GPU ones (the tests do this on tiny sizes).
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script or imported by the tests
    sys.path.insert(0, str(HERE))

import anchors  # noqa: E402
import recorded  # noqa: E402

import kernels  # noqa: E402
import sssp  # noqa: E402
from sssp.graph import iter_sources  # noqa: E402
from sssp.result import PHASED_ALGORITHMS, VARIANTS  # noqa: E402
from sssp.verify import VerificationError, check_against, check_tree  # noqa: E402

log = logging.getLogger("bench_paper")

PAPER_SIZES = ("24k", "49k", "98k")
PAPER_DEGREES = (2, 20, 200, 1000, 2000)
MARTIN_FULL = tuple(f"{k}M" for k in range(1, 12))
MARTIN_REDUCED = ("1M", "2M", "4M")
KRON_FULL = tuple(range(16, 22))
KRON_REDUCED = (16, 17, 18)
KRON_EDGE_FACTOR = 48  # DIMACS10's kron_g500-logn* graphs
SOCIAL = dict(scale=19, edge_factor=28)  # R-MAT without self-loops or parallel edges
EXP1_BUDGET_SHARE = 0.4


@dataclass(frozen=True)
class Spec:
    """A graph to measure: made on demand, so a graph skipped for the budget is never built."""

    name: str
    family: str
    origin: str
    make: Callable[[], sssp.Graph]
    weight: float  # rough edge count, to predict the time a graph needs


@dataclass(frozen=True)
class SolverSpec:
    algorithm: str
    variant: str
    backend: str  # gpu | cpu
    config: str  # default | tuned | "" (CPU)
    cpu_anchor: bool  # timed on the CPU-source subset

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.algorithm, self.variant, self.backend, self.config


# -- what to run ----------------------------------------------------------------------------
def martin_specs(args: argparse.Namespace) -> list[Spec]:
    return [
        Spec(
            f"martin-{size}",
            "martin",
            f"sssp.generate('martin', size='{size}', seed={args.seed})",
            lambda size=size: sssp.generate("martin", size=size, seed=args.seed),
            7.0 * sssp.parse_size(size),
        )
        for size in args.sizes
    ]


def _real_graph_files(root: Path) -> Iterator[Path]:
    seen: set[str] = set()
    for path in sorted(root.rglob("*.gz")):
        stem = path.name.split(".")[0]
        if stem not in seen:  # the same graph in two formats (walshaw/uk.graph, mtx/uk.mtx)
            seen.add(stem)
            yield path


def _gz_size(path: Path) -> int:
    # The uncompressed size (gzip's trailer, modulo 2**32) is a cheap estimate of a file's work.
    with open(path, "rb") as f:
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")


def graph_specs(args: argparse.Namespace) -> list[Spec]:
    specs = [
        Spec(
            f"random-{size}-deg{d}",
            f"random-{size}",
            f"sssp.generate('random', size='{size}', degree={d}, seed={args.seed})",
            lambda size=size, d=d: sssp.generate("random", size=size, degree=d, seed=args.seed),
            float(sssp.parse_size(size) * d),
        )
        for size, d in [(size, d) for size in args.random_sizes for d in args.degrees]
        # The paper also reports the GPU/Boost crossover at 98k x degree 10, between its classes.
        + ([("98k", 10)] if "98k" in args.random_sizes and 10 not in args.degrees else [])
    ]
    if args.graphs_dir:
        root = Path(args.graphs_dir)
        for path in _real_graph_files(root):
            rel = path.relative_to(root)
            specs.append(
                Spec(
                    path.name.split(".")[0],
                    path.parent.name,
                    f"sssp.load('$SSSP_GRAPHS_DIR/{rel}', weights='random', seed={args.seed})",
                    lambda path=path: sssp.load(path, weights="random", seed=args.seed),
                    _gz_size(path) / 10.0,
                )
            )
    for scale in args.kron_scales:
        specs.append(
            Spec(
                f"kronecker-logn{scale}",
                "kronecker",
                f"sssp.generate('kronecker', scale={scale}, degree={KRON_EDGE_FACTOR}, seed={args.seed})",
                lambda scale=scale: sssp.generate(
                    "kronecker", scale=scale, degree=KRON_EDGE_FACTOR, seed=args.seed
                ),
                2.0 * KRON_EDGE_FACTOR * 2**scale,
            )
        )
    if args.social:
        sc, ef = SOCIAL["scale"], SOCIAL["edge_factor"]
        specs.append(
            Spec(
                f"social-rmat-logn{sc}",
                "social",
                f"sssp.generate('kronecker', scale={sc}, degree={ef}, self_loops=False, "
                f"multi_edges=False, seed={args.seed}) (R-MAT, social-network-like)",
                lambda: sssp.generate(
                    "kronecker",
                    scale=sc,
                    degree=ef,
                    self_loops=False,
                    multi_edges=False,
                    seed=args.seed,
                ),
                2.0 * ef * 2**sc,
            )
        )
    return specs


def solver_specs(experiment: int, args: argparse.Namespace) -> list[SolverSpec]:
    accel = args.backend
    configs = ("default", "tuned") if accel == "gpu" else ("",)
    variants = VARIANTS if experiment == 1 else ("successors",)
    out: list[SolverSpec] = []
    for config in configs:
        for variant in variants:
            out += [SolverSpec(a, variant, accel, config, accel == "cpu") for a in args.algorithms]
    if accel == "gpu" and experiment == 2:
        # The last column: what solve(tuned=True) runs, the algorithm the tuner picked per class
        # (recorded as "auto:<algorithm>").
        out.append(SolverSpec("auto", "successors", accel, "tuned", False))
    cpu_algos = ("martin", "crauser") if experiment == 1 else ("crauser",)
    out += [SolverSpec(a, v, "cpu", "", True) for v in variants for a in cpu_algos]
    unique: dict[tuple, SolverSpec] = {}
    for s in out:  # with --backend cpu the accelerated set and the CPU anchors coincide
        unique.setdefault(s.key, s)
    return list(unique.values())


# -- measuring one graph ---------------------------------------------------------------------
class Bench:
    def __init__(
        self,
        args: argparse.Namespace,
        writer: recorded.ResultsWriter,
        experiment: int,
        deadline: float,
        boost: Path | None,
        tmp: Path,
    ) -> None:
        self.args, self.writer, self.experiment = args, writer, experiment
        self.deadline, self.boost, self.tmp = deadline, boost, tmp
        self.failures: list[str] = []
        self._warm: set[tuple] = set()

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def row(self, spec: Spec, graph: sssp.Graph, **values: object) -> None:
        self.writer.add(
            dict(
                experiment=self.experiment,
                graph=spec.name,
                family=spec.family,
                origin=spec.origin,
                n=graph.n,
                m=graph.m,
                **values,
            )
        )

    def graph(self, spec: Spec, graph: sssp.Graph) -> None:
        args = self.args
        sources = list(iter_sources(graph, args.sources, seed=args.seed + 1))
        cpu_sources = sources[: args.cpu_sources]
        # SciPy's Dijkstra: the reference of every check, and a CPU anchor of its own.
        refs: dict[int, np.ndarray] = {}
        ref_ms = []
        for s in sources:
            r = sssp.solve(graph, s, algorithm="dijkstra", backend="cpu")
            refs[s] = r.dist
            ref_ms.append(1e3 * r.timings.get("gpu", r.timings["total"]))
        self.row(
            spec,
            graph,
            algorithm="dijkstra",
            variant="",
            backend="cpu",
            config="",
            config_source="",
            sources=len(sources),
            mean_ms=float(np.mean(ref_ms)),
            median_ms=float(np.median(ref_ms)),
            status="ok",
        )
        for solver in solver_specs(self.experiment, args):
            if self.out_of_time():
                self.row(spec, graph, **_blank(solver), status="skipped: time budget spent")
                continue
            self.solver(spec, graph, solver, cpu_sources if solver.cpu_anchor else sources, refs)
        if self.experiment == 2:
            self.boost_run(spec, graph, cpu_sources, refs)

    def solver(
        self,
        spec: Spec,
        graph: sssp.Graph,
        sol: SolverSpec,
        sources: list[int],
        refs: dict[int, np.ndarray],
    ) -> None:
        blank = _blank(sol)
        try:
            solver = sssp.Solver(
                graph,
                algorithm=sol.algorithm,
                variant=sol.variant,
                backend=sol.backend,
                tuned=sol.config == "tuned",
            )
        except sssp.SSSPError as err:
            self.row(spec, graph, **blank, status=f"not available: {err}")
            return
        try:
            self._timed(spec, graph, sol, solver, sources, refs)
        except sssp.SSSPError as err:  # e.g. a CUDA launch failure: recorded, the run goes on
            self._failed(spec, graph, sol, str(err), status="failed")
        finally:
            solver.close()

    def _timed(
        self,
        spec: Spec,
        graph: sssp.Graph,
        sol: SolverSpec,
        solver: sssp.Solver,
        sources: list[int],
        refs: dict[int, np.ndarray],
    ) -> None:
        warm = (sol.key, graph.weights.dtype.str) if sol.backend == "cpu" else None
        if warm is None or warm not in self._warm:
            solver.solve(sources[0])  # GPU: module load, first touch; CPU: numba compile
            if warm is not None:
                self._warm.add(warm)
        times, iters, share = [], [], []
        for i, s in enumerate(sources):
            r = solver.solve(s)
            try:
                check_against(refs[s], r)
                if i == 0 and graph.m <= self.args.tree_check_edges:
                    check_tree(graph, r)
            except VerificationError as err:
                self._failed(spec, graph, sol, f"source {s}: {err}", status="wrong")
                return
            times.append(1e3 * r.timings.get("gpu", r.timings["total"]))
            iters.append(r.iterations)
            if "relax_active_share" in r.stats:
                share.append(float(r.stats["relax_active_share"]))
        mem = _gpu_memory_mb(solver, r) if sol.backend == "gpu" else ""
        source_of = r.config_source.value if r.config_source is not None else ""
        picked = {"algorithm": f"auto:{r.algorithm}"} if sol.algorithm == "auto" else {}
        self.row(
            spec,
            graph,
            **dict(_blank(sol), config_source=source_of, **picked),
            sources=len(times),
            mean_ms=float(np.mean(times)),
            median_ms=float(np.median(times)),
            iterations=float(np.mean(iters)),
            relax_active_share=float(np.mean(share)) if share else "",
            mem_mb=mem,
            status="ok",
        )
        log.info(
            "  %-10s %-12s %-3s %-7s %10.3f ms (mean of %d)",
            sol.algorithm,
            sol.variant,
            sol.backend,
            sol.config,
            float(np.mean(times)),
            len(times),
        )

    def _failed(
        self, spec: Spec, graph: sssp.Graph, sol: SolverSpec, why: str, *, status: str
    ) -> None:
        """A wrong answer or a failed solve: recorded without a time, and the run exits non-zero."""
        msg = f"{spec.name}: {sol.algorithm}/{sol.variant} on {sol.backend} ({sol.config or 'cpu'}), {why}"
        log.error("%s", msg)
        self.failures.append(msg)
        self.row(spec, graph, **_blank(sol), status=f"{status}: {why}")

    def boost_run(
        self, spec: Spec, graph: sssp.Graph, sources: list[int], refs: dict[int, np.ndarray]
    ) -> None:
        blank = dict(
            algorithm="boost-dijkstra", variant="", backend="cpu", config="", config_source=""
        )
        if self.boost is None:
            self.row(
                spec,
                graph,
                **blank,
                status="not available: Boost not built (needs g++ and the "
                "Boost Graph Library headers, or --boost PATH)",
            )
            return
        if self.out_of_time():
            self.row(spec, graph, **blank, status="skipped: time budget spent")
            return
        from bench_gpu import write_raw

        raw = self.tmp / "graph.bin"
        write_raw(graph, raw)
        try:
            out = subprocess.run(
                [str(self.boost), str(raw), *map(str, sources)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError) as err:
            self.row(spec, graph, **blank, status=f"not available: Boost failed: {err}")
            return
        finally:
            raw.unlink(missing_ok=True)
        times, rss = [], ""
        for line in out.splitlines():
            parts = line.split()
            if parts and parts[0] == "rss_after_build_kb":
                rss = int(parts[1]) / 1024
            elif len(parts) == 3 and parts[0].isdigit():
                s, t, checksum = int(parts[0]), float(parts[1]), int(parts[2])
                want = int(refs[s][refs[s] != sssp.UNREACHABLE].sum())
                if checksum != want:
                    msg = f"{spec.name}: Boost from source {s}: distance sum {checksum} != SciPy's {want}"
                    self.failures.append(msg)
                    self.row(spec, graph, **blank, status=f"wrong: {msg}")
                    return
                times.append(1e3 * t)
        if len(times) != len(sources):
            self.row(
                spec,
                graph,
                **blank,
                status=f"not available: Boost answered {len(times)} of {len(sources)} sources",
            )
            return
        self.row(
            spec,
            graph,
            **blank,
            sources=len(times),
            mean_ms=float(np.mean(times)),
            median_ms=float(np.median(times)),
            mem_mb=rss,
            status="ok",
        )


def _blank(sol: SolverSpec) -> dict[str, object]:
    return dict(
        algorithm=sol.algorithm,
        variant=sol.variant,
        backend=sol.backend,
        config=sol.config,
        config_source="",
    )


def _gpu_memory_mb(solver: sssp.Solver, result: sssp.SSSPResult) -> float | str:
    """Device memory the solver holds, in MiB: ``stats["memory_bytes"]`` where the engine reports
    it, else the engine's own count (``memory_bytes()``)."""
    nbytes = result.stats.get("memory_bytes")
    if nbytes is None:
        engine = getattr(solver, "memory_bytes", None) or getattr(
            getattr(solver, "_gpu", None), "memory_bytes", None
        )
        nbytes = engine() if callable(engine) else None
    return "" if nbytes is None else nbytes / 2**20


# -- the run ---------------------------------------------------------------------------------
def device_meta(backend: str) -> dict[str, str]:
    if backend == "cpu":
        return {"device": "none (CPU backend: GPU rows are CPU runs)", "gpu": "cpu"}
    from sssp.gpu import device_info

    info = device_info(0)
    short = info.name.replace("NVIDIA ", "").replace("GeForce ", "").strip()
    return {
        "device": info.name,
        "gpu": "".join(c if c.isalnum() else "-" for c in short.lower()),
        "compute_capability": info.cc_string,
        "sm_count": str(info.sm_count),
        "driver": str(info.driver_version),
        "cuda": str(info.cuda_version),
    }


def host_cpu() -> str:
    return f"{anchors.cpu_model()} ({os.cpu_count()} logical cores)"


def git_commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, timeout=20
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + (" (with uncommitted changes)" if dirty else "")


def run_experiment(
    experiment: int,
    specs: list[Spec],
    args: argparse.Namespace,
    meta: dict[str, str],
    out_dir: Path,
    deadline: float,
    boost: Path | None,
    tmp: Path,
) -> list[str]:
    name = recorded.EXP1_FILE if experiment == 1 else recorded.EXP2_FILE
    titles = {
        1: "Experiment 1: Martín graphs",
        2: "Experiment 2: random classes, real, Kronecker and social graphs",
    }
    m = dict(meta, experiment=str(experiment), title=titles[experiment])
    writer = recorded.ResultsWriter(out_dir / name, m)
    bench = Bench(args, writer, experiment, deadline, boost, tmp)
    # Seconds per unit of Spec.weight, measured on the largest graph so far: small graphs' fixed
    # costs (module load, warm-up) would make a per-edge rate from them far too pessimistic.
    rate, largest = 0.0, 0.0
    done = 0
    # What a reader sees if the run is killed before its end: the rows written after each graph.
    writer.flush("interrupted: the run did not finish; the rows are what it had measured")
    for i, spec in enumerate(specs):
        now = time.monotonic()
        if now + rate * spec.weight > deadline:
            status = (
                f"stopped at the time budget ({args.budget_seconds:g} s) before {spec.name}: "
                f"{done} of {len(specs)} graphs measured"
            )
            log.warning("experiment %d: %s", experiment, status)
            writer.flush(status)
            return bench.failures
        t0 = time.monotonic()
        graph = spec.make()
        if (
            experiment == 2
            and spec.family not in ("kronecker", "social")
            and not spec.family.startswith("random")
        ):
            if not args.min_real_nodes <= graph.n <= args.max_real_nodes:
                continue
        log.info(
            "exp%d %d/%d %s: n=%d m=%d", experiment, i + 1, len(specs), spec.name, graph.n, graph.m
        )
        bench.graph(spec, graph)
        done += 1
        if spec.weight >= largest:
            rate, largest = (time.monotonic() - t0) / max(spec.weight, 1.0), spec.weight
        writer.flush()
    status = (
        "complete"
        if not bench.out_of_time()
        else "complete, some solvers skipped at the time budget"
    )
    writer.flush(status)
    log.info("wrote %s (%s)", writer.path, status)
    return bench.failures


def default_graphs_dir() -> str | None:
    if os.environ.get("SSSP_GRAPHS_DIR"):
        return os.environ["SSSP_GRAPHS_DIR"]
    for root in (HERE.parent / "shared" / "graphs", HERE.parent.parent / "shared" / "graphs"):
        if root.is_dir():
            return str(root)
    return None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--experiment", choices=("1", "2", "all"), default="all")
    ap.add_argument(
        "--backend",
        choices=("gpu", "cpu"),
        default="gpu",
        help="where the 'GPU' solvers run; cpu only to test this script without a GPU",
    )
    ap.add_argument(
        "--full",
        action="store_true",
        help="the paper's set: Martín 1M..11M, all real graphs, Kronecker 16..21, 100 sources",
    )
    ap.add_argument(
        "--sizes", nargs="+", help="Martín graph sizes (default 1M 2M 4M; --full 1M..11M)"
    )
    ap.add_argument(
        "--random-sizes",
        nargs="*",
        default=list(PAPER_SIZES),
        help="sizes of the random classes (default: the paper's 24k 49k 98k)",
    )
    ap.add_argument(
        "--degrees",
        nargs="+",
        type=int,
        default=list(PAPER_DEGREES),
        help="mean degrees of the random classes (default: the paper's 2 20 200 1000 2000)",
    )
    ap.add_argument(
        "--kron-scales",
        nargs="*",
        type=int,
        help="Kronecker scales (default 16 17 18; --full 16..21)",
    )
    ap.add_argument(
        "--no-social",
        dest="social",
        action="store_false",
        help="skip the social-network-like graph",
    )
    ap.add_argument(
        "--sources",
        type=int,
        help="sources per graph for GPU solvers and SciPy (default 10; --full 100)",
    )
    ap.add_argument(
        "--cpu-sources",
        type=int,
        help="sources per graph for CPU Martín/Crauser and Boost (default 2 in exp1, 3 in exp2; --full 100)",
    )
    ap.add_argument(
        "--algorithms",
        nargs="+",
        default=["martin", "crauser"],
        help=f"GPU algorithms (default martin crauser; 'all' = {' '.join(PHASED_ALGORITHMS)})",
    )
    ap.add_argument(
        "--graphs-dir",
        default=default_graphs_dir(),
        help="real graphs (default $SSSP_GRAPHS_DIR, else shared/graphs in or beside the "
        "repository); '' skips them",
    )
    ap.add_argument("--min-real-nodes", type=int, default=10_000)
    ap.add_argument("--max-real-nodes", type=int, help="default 100000; --full: no limit")
    ap.add_argument(
        "--boost", help="a built benchmarks/boost_dijkstra.cpp (default: build it here)"
    )
    ap.add_argument(
        "--budget-seconds",
        type=float,
        help="stop cleanly (writing what was measured) so that the run ends within this "
        "time, both experiments together (default 500, to fit a 9-minute call; "
        "--full: no limit)",
    )
    ap.add_argument(
        "--tree-check-edges",
        type=int,
        default=2_000_000,
        help="check the predecessor tree (first source) on graphs with at most this many edges",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", help="default benchmarks/results/<gpu>/")
    args = ap.parse_args(argv)
    args.sizes = args.sizes or list(MARTIN_FULL if args.full else MARTIN_REDUCED)
    args.kron_scales = (
        list(KRON_FULL if args.full else KRON_REDUCED)
        if args.kron_scales is None
        else args.kron_scales
    )
    args.max_real_nodes = args.max_real_nodes or (2**62 if args.full else 100_000)
    if args.budget_seconds is None:
        args.budget_seconds = float("inf") if args.full else 500.0
    if args.algorithms == ["all"]:
        args.algorithms = list(PHASED_ALGORITHMS)
    bad = [a for a in args.algorithms if a not in PHASED_ALGORITHMS]
    if bad:
        ap.error(
            f"unknown algorithm {bad[0]!r}: expected one of {', '.join(PHASED_ALGORITHMS)} or all"
        )
    for size in [*args.sizes, *args.random_sizes]:
        try:
            sssp.parse_size(size)
        except sssp.SSSPError as err:
            ap.error(str(err))
    if args.graphs_dir and not Path(args.graphs_dir).is_dir():
        ap.error(f"--graphs-dir {args.graphs_dir}: no such folder")
    for name in ("sources", "cpu_sources"):
        v = getattr(args, name)
        if v is not None and v < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1, got {v}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    start = time.monotonic()
    try:
        dev = device_meta(args.backend)
    except sssp.SSSPError as err:
        print(f"bench_paper: {err}", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir) if args.out_dir else recorded.RESULTS / dev.pop("gpu")
    dev.pop("gpu", None)
    tmp = Path(tempfile.mkdtemp(prefix="bench-paper-"))
    boost = None
    if args.experiment in ("2", "all"):
        from bench_gpu import build_boost

        boost = Path(args.boost) if args.boost else build_boost(tmp)
    failures: list[str] = []
    for exp in (1, 2):
        if args.experiment not in (str(exp), "all"):
            continue
        sources = args.sources or (100 if args.full else 10)
        cpu_sources = min(
            sources, args.cpu_sources or (100 if args.full else (2 if exp == 1 else 3))
        )
        ns = argparse.Namespace(**{**vars(args), "sources": sources, "cpu_sources": cpu_sources})
        meta = {
            **dev,
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "host_cpu": host_cpu(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "sssp": sssp.__version__,
            "git_commit": git_commit(),
            "kernels": kernels.digest(),
            "sources_per_graph": f"{sources} (GPU solvers and SciPy), {cpu_sources} (CPU Martín/Crauser and Boost)",
            "source_draw": f"sssp.graph.iter_sources(graph, count, seed={args.seed + 1}): uniform random nodes",
            "graph_sources": (
                f"generated (origin column); real graphs from {args.graphs_dir} "
                "(provenance: its SOURCES.tsv), seeded weights 1..100"
            )
            if exp == 2
            else "generated: sssp.generate('martin', ...) (origin column)",
            "boost": str(boost) if boost else "not available",
            "timing": "timings['gpu'] (GPU) or timings['total'] (CPU) per source after one warm-up solve; everything sequential",
            "check": "distances equal SciPy's for every source; tree of the first source checked "
            f"where m <= {args.tree_check_edges}",
            "budget_seconds": f"{args.budget_seconds:g}",
            "command": "python benchmarks/bench_paper.py "
            + shlex.join(sys.argv[1:] if argv is None else argv),
        }
        specs = martin_specs(ns) if exp == 1 else graph_specs(ns)
        # With both experiments in one call, experiment 1 may use 40% of the budget, so that
        # experiment 2 always gets its share; a time left over passes on to experiment 2.
        share = EXP1_BUDGET_SHARE if exp == 1 and args.experiment == "all" else 1.0
        deadline = start + share * args.budget_seconds
        failures += run_experiment(exp, specs, ns, meta, out_dir, deadline, boost, tmp)
    for msg in failures:
        print(f"bench_paper: wrong answer: {msg}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_paper", main)
