"""The benchmark record: the tuned GPU solver against Boost's Dijkstra and GAP's Δ-stepping.

Example, on the GPU host, from the repository root with ``sssp`` importable (anchors built by
``scripts/build_anchors.sh DIR GAP_CHECKOUT``)::

    python benchmarks/bench_sssp.py --anchors DIR --graphs-dir ../shared/graphs \\
        --out benchmarks/results/h200/ --budget-seconds 520
    python benchmarks/bench_sssp.py ... --skip-synthetic --generated grid-512 rgg-196k --merge

Graphs, in this order: the paper's 15 random classes (``random-24k-deg2`` ...
``random-98k-deg2000``, weights 1..100, ``sssp.generate("random", ...)``), the ``--generated``
families (``grid-<side>``: a 4-neighbour 2-D grid; ``rgg-<n>``: a random geometric graph of mean
degree ~8 in the unit square; both undirected with one weight 1..100 per edge; ``road-<n>``: a
road-like network of mean degree 2.6, weights 1..100 by length, :func:`sssp.spatial.road_graph`;
stand-ins for road networks), the ``--gap-families`` (``gap-kron-<scale>``, ``gap-urand-<scale>``: GAP's own
Kronecker and uniform random graphs of degree 16 with GAP's weights 1..255, written by GAP's
converter, ``ANCHORS/gap_converter``), then every ``*.gz`` under ``--graphs-dir`` with at least
``--min-nodes`` nodes (file stem as the name, the paper's random weights 1..100). Every graph gets
the same ``--seed``; graphs of more than a million nodes get ``--big-sources`` sources.

Per graph, one thing at a time (no worker pools, nothing in the background while a CPU anchor is
timed):
  1. GPU: ``sssp.Solver(graph, backend="gpu", tuned=True, hierarchy="build")`` (a pick on the
     phast loop reads or builds the graph's hierarchy first; ``--db``: the tuning database it
     reads), solves for ``--warmup-seconds`` (steady state after the last graph's CPU anchors),
     then the medians over ``--sources`` random sources (nodes with out-edges) of the wall time
     of each ``solver.solve(s)`` call, from the call to the returned result (``gpu_wall_ms``:
     what the user waits for, the headline), of its CUDA-event time (``gpu_ms``,
     ``timings["gpu"]``), of its loop's CUDA-event time (``loop_ms``, ``timings["loop"]``: the
     solve less its result pass) and of the phases;
  2. SciPy's Dijkstra from the same sources: the reference. GPU distances must equal it exactly;
  3. Boost (``ANCHORS/boost_dijkstra``), one thread, a warm-up solve, then the sources; checked by
     the sum of its finite distances;
  4. GAP (``ANCHORS/gap_sssp``, OpenMP on all cores, or $OMP_NUM_THREADS): each ``--gap-deltas`` value on the first
     source (doubling on while the largest is the best), then the best Δ on every source (the
     median of trials 2..n of each run), then one run per source with GAP's verifier (``-v``, its
     serial Dijkstra) and its reached-node count, which must equal SciPy's.

Writes ``OUT/sssp_vs_boost.csv`` (columns :data:`COLUMNS`) and ``OUT/sssp_vs_boost_detail.csv``
(a ``#`` row with device, driver, date, kernel digest and anchors, then :data:`DETAIL_COLUMNS`),
rewritten after every graph, so an interrupted run keeps every finished row; ``--merge`` adds to
the rows already there. ``verified`` is ``yes`` when every answer that ran matched SciPy; a
mismatch or failure writes ``no``, is named on stderr and makes the exit status 1.
``--budget-seconds`` stops before a graph predicted not to fit.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import sssp
from sssp.spatial import geometric_graph, grid_graph, road_graph
from sssp.verify import check_tree

sys.path.insert(0, str(Path(__file__).resolve().parent))
import anchors  # noqa: E402  (a sibling script module, not a package)

SIZES = ("24k", "49k", "98k")
DEGREES = (2, 20, 200, 1000, 2000)
COLUMNS = (
    "graph",
    "n",
    "m",
    "algorithm",
    "phases",
    "gpu_ms",
    "gpu_wall_ms",
    "boost_ms",
    "speedup",
    "gap_ms",
    "gap_speedup",
    "verified",
    "gpu_mem_mb",
    "boost_rss_mb",
)
"""``speedup`` is ``boost_ms / gpu_wall_ms`` and ``gap_speedup`` ``gap_ms / gpu_wall_ms``: ratios
of what the user waits for."""
DETAIL_COLUMNS = (
    "graph",
    "n",
    "m",
    "sources",
    "algorithm",
    "phases",
    "gpu_ms",
    "gpu_wall_ms",
    "us_per_phase",
    "loop_ms",
    "loop_us_per_phase",
    "scipy_ms",
    "boost_ms",
    "boost_weight_bits",
    "gap_ms",
    "gap_delta",
    "gpu_check",
    "boost_check",
    "gap_check",
    "gpu_mem_mb",
    "boost_rss_mb",
    "config",
    "config_source",
    "stats",
    "seconds",
    "stage_seconds",
    "measured",
)
NAN = float("nan")
GAP_MAX_DELTA = 2**16
GAP_FAMILIES = {"kron": "-g", "urand": "-u"}
"""GAP's synthetic families and their converter flags."""
BIG_NODES = 1_000_000
"""Graphs above this many nodes get ``--big-sources`` sources (SciPy and Boost take seconds each)."""


# --------------------------------------------------------------------------- graphs


def rgg_graph(n: int, seed: int, degree: float = 8.0) -> sssp.Graph:
    """The record's ``rgg-<n>``: a random geometric graph of mean degree ~``degree``
    (:func:`sssp.spatial.geometric_graph`)."""
    return geometric_graph(n, degree, seed=seed)


GENERATED = ("grid-", "rgg-", "road-")
"""Name prefixes of the generated families (:func:`parse_generated`)."""


def parse_generated(name: str) -> tuple[str, int]:
    """``("grid", side)``, ``("rgg", n)`` or ``("road", n)`` from ``grid-<side>``, ``rgg-<n>``
    or ``road-<n>`` (``n`` as in ``sssp.parse_size``, e.g. ``rgg-196k``, ``road-1M``).

    Raises
    ------
    SSSPError
        Any other name, or a size ``sssp.parse_size`` does not know.
    """
    kind, _, size = name.partition("-")
    if kind == "grid" and size.isdigit():
        return kind, int(size)
    if kind in ("rgg", "road") and size:
        return kind, sssp.parse_size(size)
    raise sssp.InvalidGraphError(
        f"unknown generated graph {name!r}: expected grid-<side>, rgg-<n> or road-<n>"
    )


def generated(name: str, seed: int) -> sssp.Graph:
    """Build a ``grid-<side>``, ``rgg-<n>`` or ``road-<n>`` graph (:func:`parse_generated`)."""
    kind, size = parse_generated(name)
    if kind == "grid":
        return grid_graph(size, seed=seed)
    return rgg_graph(size, seed) if kind == "rgg" else road_graph(size, seed=seed)


@dataclass(frozen=True)
class Spec:
    """One graph of the run: its record name and how to build it."""

    name: str
    kind: str  # "random", "generated", "gap" or "file"
    arg: object


def graph_specs(args: argparse.Namespace) -> list[Spec]:
    """The graphs the options select, in run order."""
    specs: list[Spec] = []
    if not args.skip_synthetic:
        specs += [Spec(f"random-{s}-deg{d}", "random", (s, d)) for s in SIZES for d in DEGREES]
    for name in args.generated:
        parse_generated(name)  # a bad name fails here, not after the graphs before it
        specs.append(Spec(name, "generated", name))
    for name in args.gap_families:
        specs.append(Spec(f"gap-{name}", "gap", parse_gap_family(name)))
    if args.graphs_dir and not args.skip_real:
        specs += file_specs(Path(args.graphs_dir))
    if args.only:
        unknown = set(args.only) - {s.name for s in specs}
        if unknown:
            raise sssp.SSSPError(
                f"--only: no graph named {', '.join(sorted(unknown))} in this selection"
            )
        specs = [s for s in specs if s.name in args.only]
    return specs[: args.max_graphs] if args.max_graphs else specs


def file_specs(folder: Path) -> list[Spec]:
    """Every ``*.gz`` under ``folder``, named by its file stem (two files of one stem, e.g. a
    METIS and a Matrix Market copy, get their folder's name too)."""
    files = sorted(folder.rglob("*.gz"))
    stems = [p.name.split(".")[0] for p in files]
    return [
        Spec(stem if stems.count(stem) == 1 else f"{p.parent.name}-{stem}", "file", p)
        for p, stem in zip(files, stems, strict=True)
    ]


def parse_gap_family(name: str) -> tuple[str, int]:
    """``("kron", scale)`` or ``("urand", scale)`` from ``kron-<scale>`` or ``urand-<scale>``."""
    family, _, scale = name.partition("-")
    if family in GAP_FAMILIES and scale.isdigit() and 1 <= int(scale) <= 30:
        return family, int(scale)
    raise sssp.InvalidGraphError(
        f"unknown GAP family {name!r}: expected kron-<scale> or urand-<scale>"
    )


def gap_graph(family: str, scale: int, converter: Path, tmp: Path) -> sssp.Graph:
    """GAP's own synthetic graph (its converter: Kronecker ``-g`` or uniform random ``-u``, 2**scale
    nodes, degree 16, symmetrised, GAP's weights 1..255), read back from the ``.wsg`` it writes."""
    import subprocess

    if not converter.exists():
        raise sssp.SSSPError(
            f"GAP's converter {converter} is missing (scripts/build_anchors.sh builds it)"
        )
    wsg = tmp / f"gap-{family}-{scale}.wsg"
    subprocess.run(
        [str(converter), GAP_FAMILIES[family], str(scale), "-k", "16", "-w", "-b", str(wsg)],
        check=True,
        capture_output=True,
    )
    try:
        graph, _ = anchors.read_wsg(wsg)
    finally:
        wsg.unlink()
    return graph.with_meta(source=f"GAP converter {GAP_FAMILIES[family]} {scale} -k 16 -w")


def build(
    spec: Spec, seed: int, anchor_dir: Path | None = None, tmp: Path | None = None
) -> sssp.Graph:
    if spec.kind == "gap":
        family, scale = spec.arg
        return gap_graph(
            family,
            scale,
            (anchor_dir or Path(".")) / "gap_converter",
            tmp or Path(tempfile.gettempdir()),
        )
    if spec.kind == "random":
        size, degree = spec.arg
        return sssp.generate("random", size=size, degree=degree, seed=seed)
    if spec.kind == "generated":
        return generated(spec.arg, seed)
    return sssp.load(spec.arg, weights="random", seed=seed)


def pick_sources(graph: sssp.Graph, count: int, seed: int) -> list[int]:
    """``count`` distinct random nodes with out-edges (all such nodes if fewer), seeded."""
    candidates = np.flatnonzero(graph.out_degree() > 0)
    if candidates.size == 0:
        candidates = np.arange(graph.n)
    rng = np.random.default_rng(seed + 1)
    picked = rng.choice(candidates, size=min(count, candidates.size), replace=False)
    return [int(s) for s in picked]


# --------------------------------------------------------------------------- measurements


@dataclass
class Row:
    """Everything measured on one graph; NaN or "n/a" for what did not run."""

    graph: str
    n: int
    m: int
    sources: int
    algorithm: str = "n/a"
    phases: float = NAN
    gpu_ms: float = NAN
    gpu_wall_ms: float = NAN
    loop_ms: float = NAN
    """CUDA-event time until the solve's loop ended (``timings["loop"]``): ``gpu_ms`` less the
    result pass and its copies, so ``loop_us_per_phase`` is a step's cost with less of a solve's
    fixed cost in it."""
    gpu_mem_mb: float = NAN
    scipy_ms: float = NAN
    boost_ms: float = NAN
    boost_weight_bits: int | str = "n/a"
    boost_rss_mb: float = NAN
    gap_ms: float = NAN
    gap_delta: int | str = "n/a"
    checks: dict[str, str] = field(
        default_factory=lambda: {"gpu": "n/a", "boost": "n/a", "gap": "n/a"}
    )
    config: str = "n/a"
    config_source: str = "n/a"
    stats: str = "{}"
    seconds: float = NAN
    stage_seconds: dict[str, float] = field(default_factory=dict)
    measured: str = field(
        default_factory=lambda: dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    )

    @property
    def verified(self) -> str:
        ran = [c for c in self.checks.values() if not c.startswith("n/a")]
        return "yes" if ran and all(c.startswith("ok") for c in ran) else "no"

    def record(self) -> list[object]:
        speedup = self.boost_ms / self.gpu_wall_ms if self.gpu_wall_ms > 0 else NAN
        gap_speedup = self.gap_ms / self.gpu_wall_ms if self.gpu_wall_ms > 0 else NAN
        return [
            self.graph,
            self.n,
            self.m,
            self.algorithm,
            self.phases,
            self.gpu_ms,
            self.gpu_wall_ms,
            self.boost_ms,
            speedup,
            self.gap_ms,
            gap_speedup,
            self.verified,
            self.gpu_mem_mb,
            self.boost_rss_mb,
        ]

    def detail(self) -> list[object]:
        per_phase = 1e3 * self.gpu_ms / self.phases if self.phases > 0 else NAN
        loop_per_phase = 1e3 * self.loop_ms / self.phases if self.phases > 0 else NAN
        return [
            self.graph,
            self.n,
            self.m,
            self.sources,
            self.algorithm,
            self.phases,
            self.gpu_ms,
            self.gpu_wall_ms,
            per_phase,
            self.loop_ms,
            loop_per_phase,
            self.scipy_ms,
            self.boost_ms,
            self.boost_weight_bits,
            self.gap_ms,
            self.gap_delta,
            self.checks["gpu"],
            self.checks["boost"],
            self.checks["gap"],
            self.gpu_mem_mb,
            self.boost_rss_mb,
            self.config,
            self.config_source,
            self.stats,
            self.seconds,
            json.dumps({k: round(v, 2) for k, v in self.stage_seconds.items()}),
            self.measured,
        ]


def gpu_memory_mb(solver: sssp.Solver) -> float:
    """Device memory the engine reports (MiB), NaN when it exposes no ``memory_bytes``."""
    for owner in (getattr(solver, "_gpu", None), solver):
        probe = getattr(owner, "memory_bytes", None)
        value = probe() if callable(probe) else probe
        if isinstance(value, int | np.integer):
            return int(value) / 2**20
    return NAN


WARMUP_SECONDS = 0.25
"""Default ``--warmup-seconds``: how long the GPU solves before its timed solves. With one warm-up
solve the 14 meshes' wall times were 1.22x those after 0.25 s of solves (geometric mean, runs
alternated twice on one H100, ``warmup_ab_h100_run202_*.csv``); crack's CUDA-event time fell from
54-64 to 37-38 us. The SM clock was at 1 980 MHz through both (``warmup_ab_h100_run202_clocks.csv``),
so it is not the card's clock; what else warms up (the host thread's core and caches, the
driver's) is not isolated."""


def measure_gpu(
    graph: sssp.Graph,
    sources: list[int],
    row: Row,
    device: int,
    warmup_seconds: float = WARMUP_SECONDS,
    db: str | None = None,
) -> dict[int, np.ndarray]:
    """Fill the GPU columns of ``row``; return each source's distances for the SciPy check.
    Before the timed solves: one solve (module load, first touch of the buffers), then solves
    from the sources in turn until ``warmup_seconds`` have passed since the first began. ``db``:
    the tuning database the look-up reads (None: ``solve(tuned=True)``'s default)."""
    # A phast pick's hierarchy is built (or read) here, before any timing, never in the
    # background: the anchors are timed alone (its build seconds are in the row's stats).
    with sssp.Solver(
        graph, backend="gpu", tuned=True, device=device, hierarchy="build", db=db
    ) as solver:
        t0 = time.perf_counter()
        solver.solve(sources[0])
        warmups = 1
        while time.perf_counter() - t0 < warmup_seconds:
            solver.solve(sources[warmups % len(sources)])
            warmups += 1
        results, walls = [], []
        for s in sources:
            t0 = time.perf_counter()
            results.append(solver.solve(s))
            walls.append(time.perf_counter() - t0)
        row.gpu_mem_mb = gpu_memory_mb(solver)
    for r in results:  # a solver that relaxed shortcuts must still return the graph's own tree
        if "shortcuts" in r.stats:
            check_tree(graph, r)
    row.gpu_ms = 1e3 * float(np.median([r.timings.get("gpu", r.timings["total"]) for r in results]))
    row.gpu_wall_ms = 1e3 * float(np.median(walls))
    loops = [r.timings["loop"] for r in results if "loop" in r.timings]
    row.loop_ms = 1e3 * float(np.median(loops)) if loops else NAN
    row.phases = float(np.median([r.iterations for r in results]))
    last = results[-1]
    row.algorithm = last.algorithm
    row.config = str(last.config)
    row.config_source = getattr(last.config_source, "value", str(last.config_source))
    row.stats = json.dumps(dict(last.stats), default=str, sort_keys=True)
    return {r.source: r.dist for r in results}


def scipy_reference(graph: sssp.Graph, sources: list[int], row: Row) -> dict[int, np.ndarray]:
    """SciPy's Dijkstra from each source (``row.scipy_ms``: the median solve), as int64 distances
    with ``sssp.UNREACHABLE``. The SciPy matrix (lightest of parallel edges) is built once: on the
    dense classes building it costs far more than a solve, and ``sssp.solve`` builds it per call."""
    from scipy.sparse.csgraph import dijkstra

    from sssp.cpu.reference import FLOAT_EXACT_LIMIT, min_weight_csr

    if graph.max_weight * graph.n > FLOAT_EXACT_LIMIT:
        raise sssp.InvalidGraphError(
            f"graph {graph.name}: distances may exceed 2**53, SciPy would round"
        )
    matrix = min_weight_csr(graph)
    dists, times = {}, []
    for s in sources:
        t0 = time.perf_counter()
        d = dijkstra(matrix, directed=True, indices=s)
        times.append(time.perf_counter() - t0)
        reached = np.isfinite(d)
        dists[s] = np.full(graph.n, sssp.UNREACHABLE, dtype=np.int64)
        dists[s][reached] = d[reached]
    row.scipy_ms = 1e3 * float(np.median(times))
    return dists


def checksum(dist: np.ndarray) -> int:
    """Sum of the finite distances: what the Boost anchor prints for its own answer."""
    return int(dist[dist != sssp.UNREACHABLE].sum())


def measure_boost(
    binary: Path,
    graph: sssp.Graph,
    sources: list[int],
    ref: dict[int, np.ndarray],
    tmp: Path,
    row: Row,
) -> None:
    dump = tmp / "graph.csr"
    anchors.write_csr_dump(graph, dump)
    try:
        run = anchors.run_boost(binary, dump, sources)
    finally:
        dump.unlink()
    row.boost_ms = 1e3 * float(np.median([run.seconds[s] for s in sources]))
    row.boost_rss_mb = run.rss_mb
    row.boost_weight_bits = run.weight_bits
    bad = [s for s in sources if run.checksums.get(s) != checksum(ref[s])]
    row.checks["boost"] = f"MISMATCH source {bad[0]}" if bad else "ok checksum"


def measure_gap(
    binary: Path,
    graph: sssp.Graph,
    sources: list[int],
    ref: dict[int, np.ndarray],
    tmp: Path,
    row: Row,
    deltas: list[int],
    trials: int,
) -> None:
    if not anchors.gap_fits(graph):
        row.checks["gap"] = "n/a (distances exceed int32)"
        return
    wsg = tmp / "graph.wsg"
    anchors.write_wsg(graph, wsg, in_edges=graph.m % 2 == 1)  # no transpose unless it must
    try:
        first = {
            d: anchors.run_gap(binary, wsg, sources[0], d, trials=trials).seconds for d in deltas
        }
        best = min(first, key=first.get)
        while best == max(first) and best < GAP_MAX_DELTA:  # the best is the largest tried: go on
            first[2 * best] = anchors.run_gap(
                binary, wsg, sources[0], 2 * best, trials=trials
            ).seconds
            best = min(first, key=first.get)
        times = [first[best]] + [
            anchors.run_gap(binary, wsg, s, best, trials=trials).seconds for s in sources[1:]
        ]
        row.gap_ms = 1e3 * float(np.median(times))
        row.gap_delta = best
        bad = []
        for s in sources:
            check = anchors.run_gap(binary, wsg, s, best, trials=1, verify=True)
            if not (
                check.verified
                and all(check.verified)
                and check.reached == int((ref[s] != sssp.UNREACHABLE).sum())
            ):
                bad.append(s)
    finally:
        wsg.unlink()
    row.checks["gap"] = f"MISMATCH source {bad[0]}" if bad else "ok verifier+reached"


def measure(name: str, graph: sssp.Graph, args: argparse.Namespace, tmp: Path) -> Row:
    """Run every solver on one graph, in the order the module docstring gives. A solver that
    fails is recorded as such in its check (and so ``verified=no``); the others still run.
    ``row.stage_seconds`` says where the wall time went, to plan runs that must fit a budget."""
    count = args.big_sources if graph.n > BIG_NODES else args.sources
    sources = pick_sources(graph, count, args.seed)
    row = Row(name, graph.n, graph.m, len(sources))
    gpu: dict[int, np.ndarray] = {}
    t0 = time.perf_counter()
    if not args.no_gpu:
        try:
            gpu = measure_gpu(graph, sources, row, args.device, args.warmup_seconds, args.db)
        except (
            Exception
        ) as err:  # any engine failure is a result of this row, not the end of the run
            row.checks["gpu"] = f"FAILED {type(err).__name__}: {err}"
    t1 = time.perf_counter()
    ref = scipy_reference(graph, sources, row)
    row.stage_seconds.update(gpu=t1 - t0, scipy=time.perf_counter() - t1)
    if gpu:
        bad = [s for s in sources if not np.array_equal(gpu[s], ref[s])]
        row.checks["gpu"] = f"MISMATCH source {bad[0]}" if bad else "ok exact"
    for label, run in (
        ("boost", lambda b: measure_boost(b, graph, sources, ref, tmp, row)),
        (
            "gap",
            lambda b: measure_gap(
                b, graph, sources, ref, tmp, row, args.gap_deltas, args.gap_trials
            ),
        ),
    ):
        binary = args.anchors / anchors.BINARIES[label]
        if binary.exists():
            t0 = time.perf_counter()
            try:
                run(binary)
            except anchors.AnchorError as err:
                row.checks[label] = f"FAILED {err}"
            row.stage_seconds[label] = time.perf_counter() - t0
    return row


def predict_seconds(rows: list[Row], size: int) -> float:
    """A pessimistic cost of a graph of ``size = n + m`` from the graphs done so far: the smallest
    time seen (process starts, the fixed part) plus the steepest seconds per element above it,
    among the graphs of at least a quarter of the largest one's size. A small graph's rate is
    mostly one-time costs (the first graph compiles the kernels): run 110 predicted 951 s for a
    49M-edge graph from a 74k-element graph's 2.3 s, and stopped; such graphs take 10-20 s."""
    if not rows:
        return 0.0
    fixed = min(r.seconds for r in rows)
    largest = max(r.n + r.m for r in rows)
    rate = max((r.seconds - fixed) / (r.n + r.m) for r in rows if 4 * (r.n + r.m) >= largest)
    return fixed + rate * size


# --------------------------------------------------------------------------- output


def environment(args: argparse.Namespace) -> list[str]:
    """The ``#`` row of the detail CSV: device, driver, date, kernel digest, host and anchors."""
    fields = [f"# date={dt.datetime.now(dt.UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"]  # the run's start
    if args.no_gpu:
        fields.append("device=none (--no-gpu)")
    else:
        from sssp.gpu import device_info

        info = device_info(args.device)
        fields += [
            f"device={info.name}",
            f"driver={info.driver_version}",
            f"cuda={info.cuda_version}",
        ]
    try:
        import kernels

        fields.append(f"kernels={kernels.digest(kernels.ENGINE_SOURCE_FILE)}")
    except (ImportError, AttributeError) as err:
        fields.append(f"kernels=unknown ({err})")
    fields += [
        f"host={anchors.cpu_model()}",
        f"cores={os.cpu_count()}",
        f"gap_threads={os.environ.get('OMP_NUM_THREADS') or os.cpu_count()}",
        f"python={platform.python_version()}",
        f"sources={args.sources}",
        f"warmup_seconds={args.warmup_seconds:g}",
        f"seed={args.seed}",
        "gpu=tuned",
        f"tuning_db={'default' if args.db is None else shown_url(args.db)}",
        f"gap_deltas={args.gap_deltas}",
    ]
    build_info = args.anchors / "BUILD_INFO.txt"
    if build_info.exists():
        fields += [
            f"anchors: {line}" for line in build_info.read_text().splitlines() if line.strip()
        ]
    return fields


def _cell(value: object) -> object:
    return f"{value:.6g}" if isinstance(value, float) else value


CSV_NAMES = ("sssp_vs_boost.csv", "sssp_vs_boost_detail.csv")


def _read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def previous_rows(out: Path, env: list[str]) -> list[tuple[list[str], list[str]]]:
    """The rows already in ``out`` (record row, detail row), for ``--merge``.

    Raises
    ------
    SSSPError
        The files have other columns, or were measured on another device or kernel version.
    """
    paths = [out / name for name in CSV_NAMES]
    if not all(p.exists() for p in paths):
        return []
    record, detail = (_read_csv(p) for p in paths)
    if (
        not record
        or record[0] != list(COLUMNS)
        or len(detail) < 2
        or detail[1] != list(DETAIL_COLUMNS)
    ):
        raise sssp.SSSPError(f"--merge: {out} holds CSVs with other columns; use another --out")
    if len(record) != len(detail) - 1:
        raise sssp.SSSPError(f"--merge: {paths[0]} and {paths[1]} have different row counts")
    keys = ("device=", "kernels=")  # rows of one record come from one device and kernel version
    old, new = ({f for f in fields if f.startswith(keys)} for fields in (detail[0], env))
    if old != new:
        raise sssp.SSSPError(
            f"--merge: {paths[1]} was measured with {sorted(old)}, this run has {sorted(new)}"
        )
    return list(zip(record[1:], detail[2:], strict=True))


def write_csvs(
    out: Path, env: list[str], rows: list[Row], previous: list[tuple[list[str], list[str]]] = ()
) -> None:
    """(Re)write both CSVs: the ``previous`` rows (a graph measured again takes its old place),
    then the new ones. Each file is replaced whole, never left half-written."""
    out.mkdir(parents=True, exist_ok=True)
    new = {r.graph: ([_cell(v) for v in r.record()], [_cell(v) for v in r.detail()]) for r in rows}
    merged = [new.pop(rec[0], (rec, det)) for rec, det in previous] + list(new.values())
    for name, head, cells in (
        (CSV_NAMES[0], [COLUMNS], [rec for rec, _ in merged]),
        (CSV_NAMES[1], [env, DETAIL_COLUMNS], [det for _, det in merged]),
    ):
        part = out / (name + ".part")
        with open(part, "w", newline="") as f:
            w = csv.writer(f)
            w.writerows(head)
            w.writerows(cells)
        part.replace(out / name)


def table(rows: list[Row]) -> str:
    """A short fixed-width table of the record, for the terminal."""
    head = (
        f"{'graph':<22} {'n':>8} {'m':>11} {'phases':>7} {'gpu_ms':>9} {'wall_ms':>9} {'boost_ms':>9} "
        f"{'speedup':>8} {'gap_ms':>8} {'vs_gap':>7} {'us/ph':>6} {'ok':>3}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        rec = dict(zip(COLUMNS, r.record(), strict=True))
        us = 1e3 * r.gpu_ms / r.phases if r.phases > 0 else NAN
        lines.append(
            f"{r.graph:<22} {r.n:>8} {r.m:>11} {r.phases:>7.0f} {r.gpu_ms:>9.3f} {r.gpu_wall_ms:>9.3f} "
            f"{r.boost_ms:>9.3f} {rec['speedup']:>8.2f} {r.gap_ms:>8.3f} {rec['gap_speedup']:>7.2f} "
            f"{us:>6.1f} {r.verified:>3}"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- command line


def shown_url(db: str) -> str:
    """``--db`` as the CSV's header names it: a URL's password hidden."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(db).render_as_string(hide_password=True)
    except ArgumentError:
        return db  # a SQLite file's path


def check_db(db: str | None) -> None:
    """Refuse an unusable ``--db`` before any graph is built (the look-up itself would warn and
    run the default configuration on every graph). Opening it never creates it."""
    if db is None:
        return
    from tuning_db import Store

    Store(db, create=False).close()


def non_negative_seconds(text: str) -> float:
    """``--warmup-seconds``'s value: a finite number of seconds, at least 0."""
    try:
        value = float(text)
    except ValueError:
        value = NAN
    if not (0 <= value < math.inf):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, required=True, help="folder for the two CSVs")
    ap.add_argument(
        "--anchors",
        type=Path,
        required=True,
        help="folder with boost_dijkstra and gap_sssp (a missing one is left out: NaN)",
    )
    ap.add_argument(
        "--graphs-dir",
        type=Path,
        default=os.environ.get("SSSP_GRAPHS_DIR"),
        help="real graphs, *.gz, searched recursively (default: $SSSP_GRAPHS_DIR)",
    )
    ap.add_argument(
        "--min-nodes", type=int, default=10_000, help="skip smaller real graphs (default 10000)"
    )
    ap.add_argument(
        "--generated",
        nargs="*",
        default=[],
        metavar="NAME",
        help="extra generated graphs: grid-<side> (e.g. grid-512), rgg-<n> (e.g. rgg-196k), "
        "road-<n> (e.g. road-1M)",
    )
    ap.add_argument(
        "--gap-families",
        nargs="*",
        default=[],
        metavar="NAME",
        help="GAP's own graphs from its converter: kron-<scale>, urand-<scale> (e.g. kron-22)",
    )
    ap.add_argument(
        "--big-sources",
        type=int,
        default=3,
        help=f"sources per graph of more than {BIG_NODES} nodes (default 3)",
    )
    ap.add_argument(
        "--only", nargs="+", metavar="NAME", help="run only these graphs (record names)"
    )
    ap.add_argument("--skip-synthetic", action="store_true", help="leave out the 15 paper classes")
    ap.add_argument("--skip-real", action="store_true", help="leave out the --graphs-dir files")
    ap.add_argument("--max-graphs", type=int, help="stop after this many graphs")
    ap.add_argument("--sources", type=int, default=5, help="sources per graph, medians (default 5)")
    ap.add_argument("--seed", type=int, default=0, help="graph, weight and source seed (default 0)")
    ap.add_argument(
        "--db",
        metavar="URL",
        help="the tuning database the GPU's tuned look-up reads, as named (an SQLAlchemy URL or "
        "a SQLite file; default: $SSSP_TUNING_DB, else the user's database: a default "
        "database lacking a shipped kernel version takes the shipped records when opened)",
    )
    ap.add_argument(
        "--warmup-seconds",
        type=non_negative_seconds,
        default=WARMUP_SECONDS,
        help="solve on the GPU this long before its timed solves, so that the solves timed are "
        f"steady-state ones (default {WARMUP_SECONDS:g}; 0: one warm-up solve)",
    )
    ap.add_argument(
        "--budget-seconds",
        type=float,
        help="do not start a graph predicted to end after this many seconds from the start",
    )
    ap.add_argument(
        "--gap-deltas",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 2, 4, 8, 16, 32, 64, 128],
        help="Δ values tried (default 1,2,4,...,128)",
    )
    ap.add_argument(
        "--gap-trials",
        type=int,
        default=3,
        help="trials per GAP run; the first is warm-up (default 3)",
    )
    ap.add_argument(
        "--merge",
        action="store_true",
        help="keep the rows already in --out (same device and kernels); a graph run again is replaced",
    )
    ap.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
    ap.add_argument(
        "--skip-measured",
        action="store_true",
        help="with --merge: leave out graphs the record in --out already has",
    )
    ap.add_argument(
        "--no-gpu", action="store_true", help="anchors and SciPy only (to check the anchors)"
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        specs = graph_specs(args)
        check_db(args.db)
        env = environment(args)
        previous = previous_rows(args.out, env) if args.merge else []
    except sssp.SSSPError as err:
        print(f"bench_sssp: {err}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-sssp-") as tmp:
        done_before = {rec[0][0] for rec in previous} if args.skip_measured else set()
        for spec in specs:
            if spec.name in done_before:
                continue
            t0 = time.perf_counter()
            try:
                graph = build(spec, args.seed, args.anchors, Path(tmp))
            except sssp.SSSPError as err:
                print(f"bench_sssp: {spec.name}: {err}", file=sys.stderr)
                continue
            built = time.perf_counter() - t0
            if spec.kind == "file" and graph.n < args.min_nodes:
                continue
            elapsed = time.perf_counter() - start
            predicted = predict_seconds(rows, graph.n + graph.m)
            if args.budget_seconds is not None and elapsed + predicted > args.budget_seconds:
                print(
                    f"bench_sssp: budget: stopping before {spec.name} after {elapsed:.0f} s "
                    f"(predicted {predicted:.0f} s; {len(rows)} graphs done)",
                    file=sys.stderr,
                )
                break
            try:
                row = measure(spec.name, graph, args, Path(tmp))
            except sssp.SSSPError as err:
                print(f"bench_sssp: {spec.name}: {err}", file=sys.stderr)
                continue
            row.seconds = time.perf_counter() - t0  # building the graph included
            row.stage_seconds["build"] = built
            rows.append(row)
            write_csvs(args.out, env, rows, previous)
            print(
                f"bench_sssp: {row.graph}: {row.seconds:.1f} s, verified={row.verified} {row.checks}",
                file=sys.stderr,
                flush=True,
            )
    print(table(rows))
    bad = [r.graph for r in rows if r.verified != "yes"]
    if bad:
        print(f"bench_sssp: not verified against SciPy: {', '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("bench_sssp", main)
