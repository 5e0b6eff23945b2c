"""The recorded results of the paper's experiments: one file format, its writer and its readers.

``benchmarks/bench_paper.py`` writes, and ``benchmarks/claims.py`` and ``notebooks/`` read, files
under ``benchmarks/results/<gpu>/``:

``exp1_martin.csv``
    Experiment 1 (Martín graphs).
``exp2_graphs.csv``
    Experiment 2 (random classes, real graphs, Kronecker and social-network-like graphs).

Each file starts with ``# key: value`` lines (device, driver, date, kernel digest, sources, the
command, whether the run finished or stopped at its time budget), then one CSV table in the long
format of :data:`COLUMNS`: one row per graph × solver (algorithm, variant, backend, launch
configuration), times in milliseconds over the same seeded sources.

:func:`legacy_exp2` reads the older ``benchmarks/bench_gpu.py`` outputs kept in
``benchmarks/results/`` (``h200_bench_gpu_part1.log`` and ``h200_bench_gpu_part2.csv``) into the
same rows, labelled as such, so that the claims and figures can use them until a new run exists.
"""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAPER_VALUES = ROOT / "benchmarks" / "paper" / "paper_values.csv"

EXP1_FILE = "exp1_martin.csv"
EXP2_FILE = "exp2_graphs.csv"

COLUMNS = (
    "experiment",  # 1 or 2
    "graph",  # e.g. martin-1M, random-49k-deg200, fe_body, kronecker-logn18
    "family",  # one line per family in the figures: martin, random-49k, kronecker, walshaw, ...
    "origin",  # how the graph was made: generator call or file path
    "n",
    "m",
    "algorithm",  # crauser, martin, ... (sssp.result.ALGORITHMS), dijkstra (SciPy), boost-dijkstra
    "variant",  # successors | predecessors ("" for Dijkstra)
    "backend",  # gpu | cpu
    "config",  # GPU launch configuration asked for: default | tuned ("" on the CPU)
    "config_source",  # what ran (SSSPResult.config_source): default, tuned-exact, tuned-nearest
    "sources",  # number of sources timed
    "mean_ms",  # mean time per source (the paper reports the mean)
    "median_ms",
    "iterations",  # mean outer-loop iterations
    "relax_active_share",  # mean share of relax threads that had work (GPU)
    "mem_mb",  # GPU: device memory of the solver; Boost: resident set after building the graph
    "status",  # ok | the reason there is no measurement
)


@dataclass(frozen=True)
class Recorded:
    """One results file: its header and its rows (values as strings, as in the file)."""

    path: Path
    meta: Mapping[str, str]
    rows: tuple[Mapping[str, str], ...]
    legacy: bool = False

    @property
    def label(self) -> str:
        """``"NVIDIA H200, 2026-11-30"``: what every figure and table built from it must show."""
        device = self.meta.get("device", "unknown device")
        date = self.meta.get("date", "date not recorded")
        text = f"{device}, {date[:10]}"
        if self.legacy:
            text += ", recorded by bench_gpu.py (older engine, default configuration)"
        if self.meta.get("status", "complete") != "complete":
            text += f" [{self.meta['status']}]"
        return text

    def select(self, **equal: str) -> list[Mapping[str, str]]:
        """Rows with ``status == "ok"`` whose columns equal the given values."""
        return [
            r
            for r in self.rows
            if r.get("status") == "ok" and all(r.get(k) == str(v) for k, v in equal.items())
        ]


@dataclass
class ResultsWriter:
    """Rewrites a results file after every graph (atomically), so a run that is stopped by its
    budget or killed still leaves a complete, well-formed file of what it measured."""

    path: Path
    meta: dict[str, str]
    rows: list[dict[str, object]] = field(default_factory=list)

    def add(self, row: Mapping[str, object]) -> None:
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise ValueError(f"unknown result columns {sorted(unknown)}")
        self.rows.append({c: row.get(c, "") for c in COLUMNS})

    def flush(self, status: str | None = None) -> None:
        if status is not None:
            self.meta["status"] = status
        buf = io.StringIO()
        for k, v in self.meta.items():
            buf.write(f"# {k}: {' '.join(str(v).split())}\n")
        w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for row in self.rows:
            w.writerow({k: _fmt(v) for k, v in row.items()})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        with os.fdopen(fd, "w", newline="") as f:
            f.write(buf.getvalue())
        os.replace(tmp, self.path)


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return "" if v != v else f"{v:.6g}"
    return str(v)


def read(path: str | os.PathLike[str]) -> Recorded:
    """Read a file written by :class:`ResultsWriter`.

    Raises
    ------
    ValueError
        The file's table does not have the columns of :data:`COLUMNS` (message names the file).
    """
    path = Path(path)
    meta: dict[str, str] = {}
    body: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            meta[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    reader = csv.DictReader(body)
    missing = set(COLUMNS) - set(reader.fieldnames or ())
    if missing:
        raise ValueError(
            f"{path}: not a bench_paper.py results file (missing columns {sorted(missing)})"
        )
    return Recorded(path, meta, tuple(reader))


def git_date(path: Path) -> str | None:
    """Commit date of the last change to ``path`` (the legacy files record no date of their own)."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%cs", "--", str(path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None


_LEGACY_FIELDS = (
    "graph",
    "n",
    "m",
    "sources",
    "gpu_crauser_ms",
    "gpu_martin_ms",
    "cpu_crauser_ms",
    "scipy_ms",
    "boost_ms",
    "crauser_vs_martin",
    "crauser_vs_boost",
    "iters_crauser",
    "iters_martin",
    "relax_active_share",
    "gpu_mem_mb",
    "boost_rss_mb",
)


def _legacy_family(graph: str, families: Mapping[str, str]) -> str:
    m = re.fullmatch(r"random-(\d+k)-deg\d+", graph)
    return f"random-{m.group(1)}" if m else families.get(graph, "real")


def legacy_exp2(
    results: Path = RESULTS, graphs_dir: str | os.PathLike[str] | None = None
) -> Recorded | None:
    """The older ``bench_gpu.py`` H200 outputs in ``results`` as experiment-2 rows, or None.

    They hold medians (not means) over 20 sources of GPU Crauser/Martín with the default
    configuration, CPU Crauser, SciPy and Boost; ``mean_ms`` is left empty. ``graphs_dir`` (default
    ``$SSSP_GRAPHS_DIR``) only names each real graph's family (its folder).
    """
    part1, part2 = results / "h200_bench_gpu_part1.log", results / "h200_bench_gpu_part2.csv"
    found: dict[str, dict[str, str]] = {}
    meta: dict[str, str] = {}
    for path in (part1, part2):
        if not path.exists():
            continue
        lines = path.read_text().splitlines()
        head = next((ln for ln in lines if ln.startswith("# device")), "")
        m = re.search(r"device[:=] ?([^(,]+?)\s*[(,]", head)
        if m:
            meta["device"] = m.group(1).strip()
        m = re.search(r"driver[ =]([\d.]+)", head)
        if m:
            meta["driver"] = m.group(1)
        m = re.search(r"kernels[ =]([0-9a-f]+)", head)
        if m:
            meta["kernels"] = m.group(1)
        table = [ln for ln in lines if not ln.startswith("#")]
        if path.suffix == ".csv":
            found.update({r["graph"]: r for r in csv.DictReader(table)})
        else:
            for ln in table:
                cells = [c.strip() for c in ln.split("(graph")[0].split("|")]
                if len(cells) >= len(_LEGACY_FIELDS) - 1 and cells[1].isdigit():
                    found[cells[0]] = dict(zip(_LEGACY_FIELDS, cells, strict=False))
        meta.setdefault("date", git_date(path) or "date not recorded")
    if not found:
        return None
    gdir = Path(
        graphs_dir or os.environ.get("SSSP_GRAPHS_DIR") or ROOT.parent / "shared" / "graphs"
    )
    families = (
        {p.name.split(".")[0]: p.parent.name for p in gdir.rglob("*.gz")} if gdir.is_dir() else {}
    )
    meta.update(
        experiment="2",
        sources_per_graph="20 (median)",
        status="complete",
        recorded_by="benchmarks/bench_gpu.py, default configuration 256-N; medians, not means",
    )
    rows = []
    for g, r in found.items():
        base = dict(
            experiment="2",
            graph=g,
            family=_legacy_family(g, families),
            origin="",
            n=r["n"],
            m=r["m"],
            sources=r["sources"],
            mean_ms="",
            iterations="",
            relax_active_share="",
            mem_mb="",
            status="ok",
        )
        for algo, backend, config, key, iters, mem in (
            ("crauser", "gpu", "default", "gpu_crauser_ms", "iters_crauser", "gpu_mem_mb"),
            ("martin", "gpu", "default", "gpu_martin_ms", "iters_martin", ""),
            ("crauser", "cpu", "", "cpu_crauser_ms", "", ""),
            ("dijkstra", "cpu", "", "scipy_ms", "", ""),
            ("boost-dijkstra", "cpu", "", "boost_ms", "", "boost_rss_mb"),
        ):
            row = dict(
                base,
                algorithm=algo,
                variant="" if "dijkstra" in algo else "successors",
                backend=backend,
                config=config,
                config_source=config,
                median_ms=r[key],
            )
            if iters:
                row["iterations"] = r[iters]
            if mem:
                row["mem_mb"] = r[mem]
            if algo == "crauser" and backend == "gpu":
                row["relax_active_share"] = r["relax_active_share"]
            if row["median_ms"] in ("", "nan"):
                row["status"] = "not measured in that run"
            rows.append(row)
    return Recorded(part2 if part2.exists() else part1, meta, tuple(rows), legacy=True)


def gpu_dirs(results: Path = RESULTS) -> list[Path]:
    """The ``benchmarks/results/<gpu>/`` folders that hold bench_paper.py output."""
    if not results.is_dir():
        return []
    return sorted(
        p
        for p in results.iterdir()
        if p.is_dir() and ((p / EXP1_FILE).exists() or (p / EXP2_FILE).exists())
    )


def load(gpu_dir: Path | None, name: str, *, results: Path = RESULTS) -> Recorded | None:
    """The recorded file ``name`` of one GPU folder; for experiment 2 without a new run, the
    legacy H200 files (labelled as such); None when nothing is recorded."""
    if gpu_dir is not None and (gpu_dir / name).exists():
        return read(gpu_dir / name)
    if name == EXP2_FILE:
        return legacy_exp2(results)
    return None


def as_float(value: str | None) -> float | None:
    """A recorded number, or None for an empty or unparsable cell."""
    try:
        x = float(value) if value not in (None, "") else None
    except ValueError:
        return None
    return None if x is None or x != x else x


def time_ms(row: Mapping[str, str]) -> float | None:
    """The time the paper compares: the mean per source, or the median where only that exists."""
    mean = as_float(row.get("mean_ms"))
    return mean if mean is not None else as_float(row.get("median_ms"))
