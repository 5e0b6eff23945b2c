"""The CPU anchors of the benchmark record: Boost's Dijkstra and GAP's Δ-stepping ``sssp``.

Both are external static binaries built by ``scripts/build_anchors.sh OUTDIR GAP_CHECKOUT``
(``OUTDIR/boost_dijkstra`` from ``benchmarks/boost_dijkstra.cpp``, ``OUTDIR/gap_sssp`` from a
checkout of the GAP benchmark suite, https://github.com/sbeamer/gapbs, never copied here). This
module writes each one's input file from a :class:`sssp.Graph`, runs it in the foreground (one
process at a time, nothing else running) and parses what it prints.

File layouts
------------
Boost reads the project's raw CSR dump (:func:`write_csr_dump`), native little-endian::

    int64 n, int64 m, int64 indptr[n+1], int32 indices[m], int64 weights[m]

GAP reads its serialized weighted graph ``.wsg`` (``WriterBase::WriteSerializedGraph`` and
``BuilderBase``/``Reader::ReadSerializedGraph`` in gapbs ``src/``), with no padding::

    bool directed (1 byte), int64 num_edges, int64 num_nodes,
    int64 out_offsets[n+1], {int32 v, int32 w} out_neighbours[m],
    and, when directed, int64 in_offsets[n+1], {int32 v, int32 w} in_neighbours[m]

GAP's reader loads the in-edge half only for a directed file, and GAP's ``sssp`` (kernel and
verifier) reads out-edges only. So :func:`write_wsg` can also write just the out-edges under the
undirected flag (``in_edges=False``): ``sssp`` then runs on exactly the same edges, without the
transpose, which takes tens of seconds at 10^8 edges. Such a file is for ``sssp`` alone (GAP's
bfs, pr or bc would read it as symmetric); GAP sizes its frontier by ``2 * (m // 2)`` for it, so it
needs an even ``m``.

GAP keeps weights and distances in int32 with ``INT32_MAX / 2`` as infinity, so a graph whose
longest possible path ``(n - 1) * max_weight`` reaches that value is not fed to it.
"""

from __future__ import annotations

import platform
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import sssp

GAP_DIST_LIMIT = np.iinfo(np.int32).max // 2
"""GAP's ``kDistInf``: every distance must stay below it."""

BINARIES = {"boost": "boost_dijkstra", "gap": "gap_sssp"}
"""File names of the anchors in the folder ``scripts/build_anchors.sh`` fills."""

_WSG_NODE = np.dtype([("v", "<i4"), ("w", "<i4")])


class AnchorError(sssp.SSSPError):
    """An anchor binary failed, printed something unexpected, or cannot take the graph."""


# --------------------------------------------------------------------------- Boost


def write_csr_dump(graph: sssp.Graph, path: Path) -> None:
    """Write ``graph`` in the raw CSR layout ``boost_dijkstra`` reads (module docstring)."""
    with open(path, "wb") as f:
        f.write(np.array([graph.n, graph.m], "<i8").tobytes())
        f.write(graph.indptr.astype("<i8").tobytes())
        f.write(graph.indices.astype("<i4").tobytes())
        f.write(graph.weights.astype("<i8").tobytes())


@dataclass(frozen=True)
class BoostRun:
    """What one ``boost_dijkstra`` process reported.

    ``seconds`` and ``checksums`` map each source to its solve time and to the sum of its finite
    distances; ``rss_mb`` is the resident set once the graph is built (MiB); ``weight_bits`` the
    width of the weights and distances it chose (32 or 64).
    """

    seconds: dict[int, float]
    checksums: dict[int, int]
    rss_mb: float
    weight_bits: int


def parse_boost(text: str) -> BoostRun:
    """Parse ``boost_dijkstra``'s output: ``source seconds checksum`` lines, then ``key value``
    lines (``weight_bits``, ``rss_after_build_kb``, ``maxrss_kb``).

    Raises
    ------
    AnchorError
        A line of neither form, a missing key, or no source line.
    """
    seconds: dict[int, float] = {}
    checksums: dict[int, int] = {}
    keys: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if len(parts) == 3 and parts[0].isdigit():
            s = int(parts[0])
            seconds[s] = float(parts[1])
            checksums[s] = int(parts[2])
        elif len(parts) == 2 and parts[1].isdigit():
            keys[parts[0]] = int(parts[1])
        elif parts:
            raise AnchorError(f"boost_dijkstra output line {number} is not understood: {line!r}")
    missing = [k for k in ("weight_bits", "rss_after_build_kb") if k not in keys]
    if missing or not seconds:
        raise AnchorError(f"boost_dijkstra output lacks {', '.join(missing) or 'source lines'}")
    return BoostRun(seconds, checksums, keys["rss_after_build_kb"] / 1024, keys["weight_bits"])


def run_boost(binary: Path, dump: Path, sources: list[int]) -> BoostRun:
    """Run ``boost_dijkstra`` once over ``sources``; the first source is solved once more first,
    untimed in the result, as the warm-up (the GPU gets one too)."""
    args = [str(binary), str(dump), str(sources[0]), *map(str, sources)]
    out = _run(args, "boost_dijkstra")
    return parse_boost("\n".join(out.splitlines()[1:]))  # the first line is the warm-up


def run_boost_parallel(
    binary: Path, dump: Path, sources: list[int], processes: int
) -> tuple[float, float, dict[int, int]]:
    """Run ``processes`` ``boost_dijkstra`` processes at once, the sources dealt out in turn (what
    a CPU user runs for many sources: one single-threaded Dijkstra per core). Each process solves
    its first source once more first, as the warm-up.

    Returns
    -------
    (makespan, wall, checksums)
        The largest sum of one process's own solve times (seconds; loading the graph excluded, as
        in the single-source anchor), the wall time from the start of the first process to the
        end of the last (loading included), and every source's checksum.
    """
    shares = [sources[i::processes] for i in range(processes) if sources[i::processes]]
    t0 = time.perf_counter()
    procs = []
    try:
        for share in shares:
            args = [str(binary), str(dump), str(share[0]), *map(str, share)]
            procs.append(
                subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            )
        outs = [p.communicate() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    wall = time.perf_counter() - t0
    makespan, checksums = 0.0, {}
    for p, (out, err) in zip(procs, outs, strict=True):
        if p.returncode != 0:
            tail = (err or out).strip().splitlines()[-1:] or ["no output"]
            raise AnchorError(f"boost_dijkstra exited with status {p.returncode}: {tail[0]}")
        run = parse_boost("\n".join(out.splitlines()[1:]))
        makespan = max(makespan, sum(run.seconds.values()))
        checksums.update(run.checksums)
    return makespan, wall, checksums


# --------------------------------------------------------------------------- GAP


def gap_fits(graph: sssp.Graph) -> bool:
    """Whether GAP's int32 distances hold every shortest path of ``graph``."""
    return graph.n <= np.iinfo(np.int32).max and (graph.n - 1) * graph.max_weight < GAP_DIST_LIMIT


def write_wsg(graph: sssp.Graph, path: Path, *, in_edges: bool = True) -> None:
    """Write ``graph`` as GAP's ``.wsg`` (module docstring): directed, out-edges then in-edges;
    or, with ``in_edges=False``, the out-edges alone under the undirected flag (for GAP's
    ``sssp`` only).

    Raises
    ------
    AnchorError
        The graph does not fit GAP's int32 ids, weights and distances (:func:`gap_fits`), or
        ``in_edges=False`` with an odd edge count.
    """
    if not gap_fits(graph):
        raise AnchorError(
            f"graph {graph.name}: (n - 1) * max_weight = {(graph.n - 1) * graph.max_weight} does not fit "
            f"GAP's int32 distances (limit {GAP_DIST_LIMIT})"
        )
    if not in_edges and graph.m % 2:
        raise AnchorError(
            f"graph {graph.name}: m = {graph.m} is odd; GAP's undirected layout needs it even"
        )
    with open(path, "wb") as f:
        f.write(b"\x01" if in_edges else b"\x00")
        f.write(np.array([graph.m, graph.n], "<i8").tobytes())
        for g in (graph, graph.reverse()) if in_edges else (graph,):
            pairs = np.empty(g.m, dtype=_WSG_NODE)
            pairs["v"] = g.indices
            pairs["w"] = g.weights
            f.write(g.indptr.astype("<i8").tobytes())
            f.write(pairs.tobytes())


def read_wsg(path: Path) -> tuple[sssp.Graph, sssp.Graph | None]:
    """Read a ``.wsg`` file back: the out-edge graph and, for a directed file, the in-edge graph.

    Raises
    ------
    AnchorError
        The file is shorter or longer than its header says.
    """
    data = Path(path).read_bytes()
    if len(data) < 17:
        raise AnchorError(f"{path}: {len(data)} bytes, shorter than a .wsg header (17)")
    directed = data[0] != 0
    m, n = (int(x) for x in np.frombuffer(data, "<i8", 2, offset=1))
    part = 8 * (n + 1) + _WSG_NODE.itemsize * m
    expected = 17 + part * (2 if directed else 1)
    if n < 0 or m < 0 or len(data) != expected:
        raise AnchorError(
            f"{path}: {len(data)} bytes, but its header (n={n}, m={m}) needs {expected}"
        )
    graphs = []
    for k in range(2 if directed else 1):
        base = 17 + k * part
        indptr = np.frombuffer(data, "<i8", n + 1, offset=base)
        pairs = np.frombuffer(data, _WSG_NODE, m, offset=base + 8 * (n + 1))
        graphs.append(sssp.Graph(indptr, pairs["v"], pairs["w"], name=Path(path).stem))
    return graphs[0], (graphs[1] if directed else None)


@dataclass(frozen=True)
class GapRun:
    """What one ``gap_sssp`` process reported: the times of its trials (seconds, in order), its
    ``Average Time``, the verifier's verdicts (``-v``) and the reached-node count (``-a``)."""

    trials: list[float]
    average: float
    verified: list[bool]
    reached: int | None

    @property
    def seconds(self) -> float:
        """The median trial time after the first, which pays OpenMP's thread start-up (it is the
        warm-up, as on the GPU); the single trial when there is only one."""
        warm = self.trials[1:] or self.trials
        return float(np.median(warm))


_TRIAL = re.compile(r"^Trial Time:\s+([0-9.eE+-]+)\s*$")
_AVERAGE = re.compile(r"^Average Time:\s+([0-9.eE+-]+)\s*$")
_VERIFY = re.compile(r"^Verification:\s+(PASS|FAIL)\s*$")
_REACHED = re.compile(r"^SSSP Tree reaches (\d+) nodes\s*$")


def parse_gap(text: str) -> GapRun:
    """Parse ``gap_sssp``'s output (``Trial Time``, ``Average Time``, ``Verification`` and
    ``SSSP Tree reaches N nodes`` lines; the rest is ignored).

    Raises
    ------
    AnchorError
        No trial time or no average time was printed.
    """
    trials, verified, average, reached = [], [], None, None
    for line in text.splitlines():
        if m := _TRIAL.match(line):
            trials.append(float(m.group(1)))
        elif m := _AVERAGE.match(line):
            average = float(m.group(1))
        elif m := _VERIFY.match(line):
            verified.append(m.group(1) == "PASS")
        elif m := _REACHED.match(line):
            reached = int(m.group(1))
    if not trials or average is None:
        raise AnchorError("gap_sssp printed no 'Trial Time'/'Average Time' line")
    return GapRun(trials, average, verified, reached)


def run_gap(
    binary: Path, wsg: Path, source: int, delta: int, *, trials: int = 3, verify: bool = False
) -> GapRun:
    """Run ``gap_sssp -f WSG -r SOURCE -d DELTA -n TRIALS`` (with ``-v -a`` when ``verify``)."""
    args = [str(binary), "-f", str(wsg), "-r", str(source), "-d", str(delta), "-n", str(trials)]
    if verify:
        args += ["-v", "-a"]
    return parse_gap(_run(args, "gap_sssp"))


def _run(args: list[str], label: str) -> str:
    try:
        proc = subprocess.run(args, capture_output=True, text=True, check=False)
    except OSError as err:
        raise AnchorError(f"{label}: cannot run {args[0]}: {err}") from err
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise AnchorError(f"{label} exited with status {proc.returncode}: {tail[0]}")
    return proc.stdout


def cpu_model() -> str:
    """The host CPU's model name (``/proc/cpuinfo``; else what ``platform`` knows), for the
    headers of records whose CPU anchors ran on it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass  # no /proc (not Linux): fall back below
    return platform.processor() or platform.machine()
