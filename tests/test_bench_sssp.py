"""The pure parts of the benchmark record (benchmarks/bench_sssp.py, benchmarks/anchors.py): file
layouts the anchors read, parsing what they print, the CSV schema, the generated graph families.
CPU only; the anchor binaries themselves are exercised when SSSP_ANCHORS_DIR names a folder built
by scripts/build_anchors.sh."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import sssp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import anchors  # noqa: E402
import bench_sssp  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def small_graph() -> sssp.Graph:
    """Parallel edges, a self-loop, a node without out-edges and an unreachable node."""
    src = [0, 0, 0, 1, 1, 2, 3, 3]
    dst = [1, 1, 2, 2, 3, 2, 0, 4]
    w = [5, 3, 9, 1, 7, 2, 4, 100]
    return sssp.Graph.from_edges(6, np.array(src), np.array(dst), np.array(w), name="small")


def arrays(g: sssp.Graph) -> tuple[list[int], list[int], list[int]]:
    return g.indptr.tolist(), g.indices.tolist(), g.weights.tolist()


# --------------------------------------------------------------------------- GAP .wsg


def test_wsg_round_trip_keeps_out_and_in_edges(tmp_path):
    g = small_graph()
    path = tmp_path / "g.wsg"
    anchors.write_wsg(g, path)
    data = path.read_bytes()
    # GAP's header: a 1-byte directed flag, then int64 edge and node counts, no padding.
    assert data[0] == 1
    assert np.frombuffer(data, "<i8", 2, offset=1).tolist() == [g.m, g.n]
    assert len(data) == 17 + 2 * (8 * (g.n + 1) + 8 * g.m)
    out, inv = anchors.read_wsg(path)
    assert arrays(out) == arrays(g)
    assert arrays(inv) == arrays(g.reverse())


def test_wsg_out_edges_only_under_the_undirected_flag(tmp_path):
    g = sssp.Graph.from_edges(
        3, np.array([0, 1, 2, 2]), np.array([1, 2, 0, 1]), np.array([3, 4, 5, 6])
    )
    path = tmp_path / "u.wsg"
    anchors.write_wsg(g, path, in_edges=False)
    assert path.read_bytes()[0] == 0 and path.stat().st_size == 17 + 8 * (g.n + 1) + 8 * g.m
    out, inv = anchors.read_wsg(path)
    assert arrays(out) == arrays(g) and inv is None
    with pytest.raises(anchors.AnchorError, match="odd"):
        anchors.write_wsg(
            sssp.Graph.from_edges(2, np.array([0]), np.array([1]), np.array([1])),
            tmp_path / "odd.wsg",
            in_edges=False,
        )
    assert not (tmp_path / "odd.wsg").exists()


def test_wsg_neighbours_are_id_then_weight(tmp_path):
    g = sssp.Graph.from_edges(2, np.array([0]), np.array([1]), np.array([42]))
    path = tmp_path / "one.wsg"
    anchors.write_wsg(g, path)
    # out-offsets [0, 1, 1] then the one neighbour {v=1, w=42}
    assert np.frombuffer(path.read_bytes(), "<i4", 2, offset=17 + 3 * 8).tolist() == [1, 42]


def test_wsg_refuses_distances_beyond_gap_int32(tmp_path):
    heavy = sssp.Graph.from_edges(3, np.array([0, 1]), np.array([1, 2]), np.array([2**29, 2**29]))
    assert not anchors.gap_fits(heavy)
    with pytest.raises(anchors.AnchorError, match="int32"):
        anchors.write_wsg(heavy, tmp_path / "h.wsg")
    assert not (tmp_path / "h.wsg").exists()
    assert anchors.gap_fits(small_graph())


def test_read_wsg_names_a_truncated_file(tmp_path):
    path = tmp_path / "cut.wsg"
    anchors.write_wsg(small_graph(), path)
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(anchors.AnchorError, match="cut.wsg"):
        anchors.read_wsg(path)


# --------------------------------------------------------------------------- Boost


def test_csr_dump_layout(tmp_path):
    g = small_graph()
    path = tmp_path / "g.csr"
    anchors.write_csr_dump(g, path)
    data = path.read_bytes()
    n, m = np.frombuffer(data, "<i8", 2).tolist()
    assert (n, m) == (g.n, g.m)
    off = 16
    indptr = np.frombuffer(data, "<i8", n + 1, offset=off)
    indices = np.frombuffer(data, "<i4", m, offset=off + 8 * (n + 1))
    weights = np.frombuffer(data, "<i8", m, offset=off + 8 * (n + 1) + 4 * m)
    assert len(data) == off + 8 * (n + 1) + 12 * m
    assert (indptr.tolist(), indices.tolist(), weights.tolist()) == arrays(g)


BOOST_OUT = """\
7 0.000125000 1234
3 0.000250000 99
weight_bits 32
rss_after_build_kb 2048
maxrss_kb 4096
"""


def test_parse_boost():
    run = anchors.parse_boost(BOOST_OUT)
    assert run.seconds == {7: 0.000125, 3: 0.00025}
    assert run.checksums == {7: 1234, 3: 99}
    assert run.rss_mb == 2.0
    assert run.weight_bits == 32


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (BOOST_OUT + "Segmentation fault\n", "line 6"),
        (BOOST_OUT.replace("weight_bits 32\n", ""), "weight_bits"),
        ("weight_bits 64\nrss_after_build_kb 1\n", "source lines"),
    ],
)
def test_parse_boost_rejects_unexpected_output(text, match):
    with pytest.raises(anchors.AnchorError, match=match):
        anchors.parse_boost(text)


# --------------------------------------------------------------------------- GAP output


GAP_OUT = """\
Read Time:           0.00123
Graph has 24576 nodes and 49152 directed edges for degree: 2
Trial Time:          0.03945
Verification:           PASS
Verification Time:   0.00102
Trial Time:          0.00050
Verification:           PASS
Verification Time:   0.00101
Trial Time:          0.00040
SSSP Tree reaches 24000 nodes
Verification:           FAIL
Verification Time:   0.00100
Average Time:        0.01345
"""


def test_parse_gap():
    run = anchors.parse_gap(GAP_OUT)
    assert run.trials == [0.03945, 0.0005, 0.0004]
    assert run.average == 0.01345
    assert run.verified == [True, True, False]
    assert run.reached == 24000
    # the first trial pays the thread start-up: the time is the median of the others
    assert run.seconds == pytest.approx(0.00045)
    one = anchors.parse_gap("Trial Time: 0.5\nAverage Time: 0.5\n")
    assert one.seconds == 0.5 and one.verified == [] and one.reached is None


def test_parse_gap_needs_times():
    with pytest.raises(anchors.AnchorError, match="Average Time"):
        anchors.parse_gap("Couldn't open file x.wsg\n")


def test_failing_binary_is_an_anchor_error(tmp_path):
    with pytest.raises(anchors.AnchorError, match="cannot run"):
        anchors.run_gap(tmp_path / "missing", tmp_path / "g.wsg", 0, 1)


# --------------------------------------------------------------------------- graphs


def test_grid_graph_is_a_symmetric_four_neighbour_grid():
    g = bench_sssp.grid_graph(5, seed=1)
    assert (g.n, g.m) == (25, 2 * 2 * 5 * 4)
    deg = g.out_degree().reshape(5, 5)
    assert deg[0, 0] == 2 and deg[0, 2] == 3 and deg[2, 2] == 4
    assert set(g.weights.tolist()) <= set(range(1, 101))
    edges = {(u, v): w for u, v, w in zip(*g.edges(), strict=True)}
    assert all(edges[(v, u)] == w for (u, v), w in edges.items())
    assert bench_sssp.grid_graph(5, seed=1) == g


def test_rgg_graph_mean_degree_and_symmetry():
    g = bench_sssp.generated("rgg-12k", seed=3)
    assert g.n == sssp.parse_size("12k")
    # n pi r^2 = 8, less at the border of the unit square
    assert 7.0 < g.m / g.n < 8.1
    edges = {(u, v): w for u, v, w in zip(*g.edges(), strict=True)}
    assert all(edges[(v, u)] == w for (u, v), w in edges.items())
    with pytest.raises(sssp.InvalidGraphError, match="rgg"):
        bench_sssp.generated("rgg", seed=0)
    with pytest.raises(sssp.InvalidGraphError, match="hex-3"):
        bench_sssp.generated("hex-3", seed=0)


def test_road_graph_by_name():
    g = bench_sssp.generated("road-12k", seed=3)
    assert g.n == sssp.parse_size("12k") and g.meta["kind"] == "road"
    assert g == sssp.generate("road", size="12k", seed=3)
    with pytest.raises(sssp.InvalidGraphError, match="road-<n>"):
        bench_sssp.generated("road", seed=0)


def test_pick_sources_are_distinct_seeded_and_have_out_edges():
    g = small_graph()
    s = bench_sssp.pick_sources(g, 3, seed=0)
    assert len(set(s)) == 3 and all(g.out_degree()[v] > 0 for v in s)
    assert bench_sssp.pick_sources(g, 3, seed=0) == s
    assert sorted(bench_sssp.pick_sources(g, 10, seed=0)) == [0, 1, 2, 3]


def test_graph_specs_selection(tmp_path):
    args = bench_sssp.parser().parse_args(
        ["--out", "o", "--anchors", "a", "--graphs-dir", str(tmp_path)]
    )
    for sub in ("walshaw", "mtx"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "uk.graph.gz").write_bytes(b"")
    (tmp_path / "mtx" / "t60k.graph.gz").write_bytes(b"")
    names = [s.name for s in bench_sssp.graph_specs(args)]
    assert names[:2] == ["random-24k-deg2", "random-24k-deg20"] and len(names) == 15 + 3
    assert names[15:] == ["t60k", "mtx-uk", "walshaw-uk"]  # sorted by path
    args.only, args.skip_synthetic = ["t60k", "random-98k-deg2000"], False
    assert [s.name for s in bench_sssp.graph_specs(args)] == ["random-98k-deg2000", "t60k"]
    args.only, args.generated = None, ["grid-4", "rgg-16k"]
    with pytest.raises(sssp.SSSPError, match="16k"):
        bench_sssp.graph_specs(args)
    args.only, args.generated = ["nope"], []
    with pytest.raises(sssp.SSSPError, match="nope"):
        bench_sssp.graph_specs(args)


# --------------------------------------------------------------------------- CSV


def measured_row() -> bench_sssp.Row:
    row = bench_sssp.Row(
        "random-24k-deg2",
        24576,
        49152,
        5,
        algorithm="crauser",
        phases=238.0,
        gpu_ms=0.5,
        gpu_wall_ms=0.6,
        loop_ms=0.4,
        gpu_mem_mb=1.5,
        scipy_ms=4.0,
        boost_ms=3.0,
        boost_weight_bits=32,
        boost_rss_mb=2.0,
        gap_ms=0.4,
        gap_delta=16,
    )
    row.checks.update(gpu="ok exact", boost="ok checksum", gap="ok verifier+reached")
    return row


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_csv_schema(tmp_path):
    ok, bad = measured_row(), measured_row()
    bad.graph, bad.checks["boost"] = "t60k", "MISMATCH source 3"
    bench_sssp.write_csvs(tmp_path, ["# device=X", "driver=1"], [ok, bad])
    rec = read_csv(tmp_path / "sssp_vs_boost.csv")
    assert rec[0] == (
        "graph,n,m,algorithm,phases,gpu_ms,gpu_wall_ms,boost_ms,speedup,gap_ms,gap_speedup,"
        "verified,gpu_mem_mb,boost_rss_mb"
    ).split(",")
    first = dict(zip(rec[0], rec[1], strict=True))
    # The ratios are of what the user waits for: the wall time, not the CUDA-event time.
    assert float(first["speedup"]) == pytest.approx(3.0 / 0.6)
    assert float(first["gap_speedup"]) == pytest.approx(0.4 / 0.6)
    assert first["verified"] == "yes" and first["phases"] == "238"
    assert dict(zip(rec[0], rec[2], strict=True))["verified"] == "no"
    detail = read_csv(tmp_path / "sssp_vs_boost_detail.csv")
    assert detail[0] == ["# device=X", "driver=1"]
    assert detail[1] == list(bench_sssp.DETAIL_COLUMNS)
    row = dict(zip(detail[1], detail[2], strict=True))
    assert float(row["us_per_phase"]) == pytest.approx(1e3 * 0.5 / 238)
    assert float(row["loop_us_per_phase"]) == pytest.approx(1e3 * 0.4 / 238, rel=1e-5)
    assert not list(tmp_path.glob("*.part"))


def test_merge_keeps_old_rows_and_replaces_a_graph_run_again(tmp_path):
    env = ["# date=1", "device=H200", "kernels=abc"]
    a, b = measured_row(), measured_row()
    b.graph = "t60k"
    bench_sssp.write_csvs(tmp_path, env, [a, b])
    again, new = measured_row(), measured_row()
    again.gpu_ms, new.graph = 0.25, "grid-512"
    later = ["# date=2", "device=H200", "kernels=abc"]
    bench_sssp.write_csvs(tmp_path, later, [again, new], bench_sssp.previous_rows(tmp_path, later))
    rec = read_csv(tmp_path / "sssp_vs_boost.csv")
    assert [(r[0], r[5]) for r in rec[1:]] == [
        ("random-24k-deg2", "0.25"),
        ("t60k", "0.5"),
        ("grid-512", "0.5"),
    ]
    detail = read_csv(tmp_path / "sssp_vs_boost_detail.csv")
    assert detail[0] == later and [r[0] for r in detail[2:]] == [
        "random-24k-deg2",
        "t60k",
        "grid-512",
    ]
    with pytest.raises(sssp.SSSPError, match="kernels=new"):
        bench_sssp.previous_rows(tmp_path, ["# date=3", "device=H200", "kernels=new"])
    assert bench_sssp.previous_rows(tmp_path / "empty", env) == []


def test_min_weight_csr_shortcut_matches_the_sorting_path():
    # The benchmark's SciPy reference relies on sssp.cpu.reference.min_weight_csr, which skips
    # sorting when every row is already strictly increasing: both paths must give one matrix.
    from sssp.cpu.reference import min_weight_csr

    grid = min_weight_csr(bench_sssp.grid_graph(6, seed=2))
    canonical = sssp.Graph(grid.indptr, grid.indices, grid.data.astype(np.int64))  # rows increasing
    src, dst, w = canonical.edges()
    shuffled = sssp.Graph.from_edges(
        canonical.n, src[::-1].copy(), dst[::-1].copy(), w[::-1].copy()
    )
    doubled = sssp.Graph.from_edges(
        canonical.n, np.tile(src, 2), np.tile(dst, 2), np.concatenate([w + 7, w])
    )
    expected = min_weight_csr(canonical).toarray()
    for g in (shuffled, doubled):
        assert np.array_equal(min_weight_csr(g).toarray(), expected)
    zero = sssp.Graph.from_edges(3, np.array([0, 1]), np.array([1, 2]), np.array([0, 4]))
    assert min_weight_csr(zero).nnz == 2  # a zero weight is an edge, stored explicitly


def test_verified_needs_every_check_that_ran():
    row = bench_sssp.Row("g", 1, 0, 1)
    assert row.verified == "no"  # nothing ran
    row.checks["boost"] = "ok checksum"
    row.checks["gap"] = "n/a (distances exceed int32)"
    assert row.verified == "yes"
    row.checks["gpu"] = "FAILED RuntimeError: out of memory"
    assert row.verified == "no"
    assert math.isnan(row.record()[bench_sssp.COLUMNS.index("speedup")])


def test_budget_model_is_fixed_plus_steepest_rate():
    a, b = bench_sssp.Row("a", 10, 90, 1), bench_sssp.Row("b", 100, 900, 1)
    a.seconds, b.seconds = 2.0, 12.0
    assert bench_sssp.predict_seconds([], 10**9) == 0.0
    assert bench_sssp.predict_seconds([a, b], 2000) == pytest.approx(2.0 + 10 / 1000 * 2000)
    # A graph under a quarter of the largest one's size does not set the rate: its time is
    # mostly one-time costs (run 110: the first, tiny graph predicted 951 s for one of 49M edges).
    first, big = bench_sssp.Row("first", 25_000, 50_000, 1), bench_sssp.Row("big", 1, 24_999_999, 1)
    first.seconds, big.seconds = 2.3, 10.6
    fixed = 0.9
    mid = bench_sssp.Row("mid", 25_000, 500_000, 1)
    mid.seconds = fixed
    rate = (10.6 - fixed) / 25_000_000
    got = bench_sssp.predict_seconds([first, mid, big], 50_000_000)
    assert got == pytest.approx(fixed + rate * 50_000_000) and got < 30


def test_run_without_gpu_or_anchors_writes_an_unverified_row(tmp_path, capsys):
    status = bench_sssp.main(
        [
            "--no-gpu",
            "--anchors",
            str(tmp_path / "none"),
            "--out",
            str(tmp_path),
            "--skip-synthetic",
            "--skip-real",
            "--generated",
            "grid-12",
            "--sources",
            "2",
        ]
    )
    assert status == 1  # nothing but SciPy ran: no answer was checked
    rec = read_csv(tmp_path / "sssp_vs_boost.csv")
    assert [r[:3] for r in rec[1:]] == [["grid-12", "144", str(2 * 2 * 12 * 11)]]
    assert "grid-12" in capsys.readouterr().out


def test_a_missing_tuning_database_is_one_line_before_any_graph(tmp_path, capsys):
    out = tmp_path / "out"
    missing = tmp_path / "typo.sqlite"
    argv = ["--no-gpu", "--anchors", str(tmp_path), "--out", str(out), "--skip-synthetic"]
    status = bench_sssp.main(
        [*argv, "--skip-real", "--generated", "grid-12", "--db", f"sqlite:///{missing}"]
    )
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(missing) in err[0] and "Traceback" not in err[0]
    assert not missing.exists() and not out.exists()  # nothing created, nothing written


# --------------------------------------------------------------------------- the binaries


ANCHORS_DIR = os.environ.get("SSSP_ANCHORS_DIR")


@pytest.mark.skipif(
    not ANCHORS_DIR, reason="SSSP_ANCHORS_DIR (scripts/build_anchors.sh OUTDIR) not set"
)
def test_anchors_agree_with_scipy(tmp_path):
    folder = Path(ANCHORS_DIR)
    # symmetric, and directed with few edges (some nodes unreachable): the undirected .wsg
    # layout must still give GAP exactly the out-edges
    for g in (
        bench_sssp.rgg_graph(3000, seed=5),
        sssp.generate("random", size=3000, degree=2, seed=1),
    ):
        sources = bench_sssp.pick_sources(g, 3, seed=0)
        refs = {s: sssp.solve(g, s, algorithm="dijkstra", backend="cpu").dist for s in sources}
        anchors.write_csr_dump(g, tmp_path / "g.csr")
        boost = anchors.run_boost(folder / anchors.BINARIES["boost"], tmp_path / "g.csr", sources)
        assert boost.checksums == {s: bench_sssp.checksum(d) for s, d in refs.items()}
        for in_edges in (True, False):
            anchors.write_wsg(g, tmp_path / "g.wsg", in_edges=in_edges)
            for s in sources:
                run = anchors.run_gap(
                    folder / anchors.BINARIES["gap"],
                    tmp_path / "g.wsg",
                    s,
                    8,
                    trials=1,
                    verify=True,
                )
                assert run.verified == [True]
                assert run.reached == int((refs[s] != sssp.UNREACHABLE).sum())


# --------------------------------------------------------------------------- the GPU stage


REAL_SOLVER = sssp.Solver


class CpuStandIn:
    """Stands in for ``sssp.Solver(graph, backend="gpu", tuned=True)`` on a machine without a
    GPU: the CPU Crauser behind the same interface, so the GPU stage's bookkeeping is tested."""

    def __init__(self, graph, *, backend, tuned, device, hierarchy, db=None, corrupt=False):
        # a phast pick's hierarchy is ready before the timing starts, never built meanwhile
        assert (backend, tuned, hierarchy) == ("gpu", True, "build")
        self.db = db
        self.inner = REAL_SOLVER(graph, backend="cpu", algorithm="crauser")
        self.corrupt = corrupt
        self.calls = []

    def solve(self, s):
        self.calls.append(s)
        r = self.inner.solve(s)
        if self.corrupt:
            dist = r.dist.copy()
            dist[dist == dist.max()] -= 1
            return dataclasses.replace(r, dist=dist)
        return r

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


@pytest.mark.parametrize("corrupt", [False, True])
def test_gpu_stage_bookkeeping_with_a_cpu_stand_in(monkeypatch, tmp_path, corrupt):
    made = []

    def factory(graph, **kw):
        made.append(CpuStandIn(graph, corrupt=corrupt, **kw))
        return made[-1]

    monkeypatch.setattr(bench_sssp.sssp, "Solver", factory)
    args = bench_sssp.parser().parse_args(
        ["--out", str(tmp_path), "--anchors", str(tmp_path), "--sources", "3"]
        + ["--warmup-seconds", "0"]
    )
    g = bench_sssp.grid_graph(20, seed=4)
    row = bench_sssp.measure("grid-20", g, args, tmp_path)
    sources = bench_sssp.pick_sources(g, 3, args.seed)
    assert made[0].calls == [sources[0], *sources]  # one warm-up solve, then every source
    assert row.checks["gpu"] == (f"MISMATCH source {sources[0]}" if corrupt else "ok exact")
    assert row.verified == ("no" if corrupt else "yes")
    assert row.algorithm == "crauser" and row.phases > 0 and row.gpu_ms > 0
    assert math.isnan(row.gpu_mem_mb)  # the stand-in reports no device memory


def test_the_named_tuning_database_is_what_the_gpu_reads_and_the_header_names(
    monkeypatch, tmp_path
):
    """``--db`` goes to the solver as named (a default database opened by a process takes the
    newer shipped records; a named one is read as it is), and the CSV's header names it with its
    password hidden."""
    from tuning_db import Store

    made = []

    def factory(graph, **kw):
        made.append(CpuStandIn(graph, **kw))
        return made[-1]

    monkeypatch.setattr(bench_sssp.sssp, "Solver", factory)
    db = tmp_path / "own.sqlite"
    Store(f"sqlite:///{db}", seed=False).close()
    argv = ["--out", str(tmp_path), "--anchors", str(tmp_path), "--db", str(db)]
    args = bench_sssp.parser().parse_args([*argv, "--sources", "2", "--warmup-seconds", "0"])
    bench_sssp.measure("grid-12", bench_sssp.grid_graph(12, seed=4), args, tmp_path)
    assert made and made[0].db == str(db) and made[0].calls

    def header(argv):
        return bench_sssp.environment(bench_sssp.parser().parse_args([*argv, "--no-gpu"]))

    assert f"tuning_db={db}" in header(argv)
    assert "tuning_db=default" in header(argv[:-2])  # without --db
    secret = "postgresql+psycopg://tuner:hunter2@db.example/tuning"
    assert bench_sssp.shown_url(secret) == "postgresql+psycopg://tuner:***@db.example/tuning"
    assert bench_sssp.shown_url(str(db)) == str(db)


def test_the_gpu_warms_up_for_the_seconds_asked_before_its_timed_solves(monkeypatch, tmp_path):
    """The warm-up solves the sources in turn until ``--warmup-seconds`` have passed, then times
    every source once."""
    made = []
    clock = iter(range(1000))  # each reading of the clock: one more second

    def factory(graph, **kw):
        made.append(CpuStandIn(graph, **kw))
        return made[-1]

    monkeypatch.setattr(bench_sssp.sssp, "Solver", factory)
    # bench_sssp's own clock only (the solver keeps its own timings)
    monkeypatch.setattr(bench_sssp, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    g = bench_sssp.grid_graph(12, seed=4)
    sources = bench_sssp.pick_sources(g, 3, 0)
    row = bench_sssp.Row("grid-12", g.n, g.m, 3)
    bench_sssp.measure_gpu(g, sources, row, 0, warmup_seconds=4.5)
    # Read 0 at the start; after each solve 1, 2, 3, 4 are under 4.5 s and 5 is not: 5 solves.
    warm = [sources[i % 3] for i in range(5)]
    assert made[0].calls == [*warm, *sources]
    assert row.gpu_wall_ms == 1e3  # one clock second between each timed solve's two readings


@pytest.mark.parametrize("bad", ["-1", "nan", "inf", "soon"])
def test_a_bad_warmup_is_one_line_naming_the_value(bad, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        bench_sssp.parser().parse_args(
            ["--out", str(tmp_path), "--anchors", str(tmp_path), "--warmup-seconds", bad]
        )
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(f"argument --warmup-seconds: expected seconds >= 0, got {bad!r}")


@pytest.mark.gpu
def test_gpu_stage_on_a_device(tmp_path):
    from sssp.gpu import is_available

    if not is_available():
        pytest.skip("no usable CUDA device (pycuda missing or no GPU)")
    args = bench_sssp.parser().parse_args(
        ["--out", str(tmp_path), "--anchors", ANCHORS_DIR or str(tmp_path)]
    )
    row = bench_sssp.measure("rgg-3000", bench_sssp.rgg_graph(3000, seed=1), args, tmp_path)
    assert row.checks["gpu"] == "ok exact", row.checks
    assert row.gpu_ms > 0 and row.gpu_mem_mb > 0
    # A phast pick whose core table holds every node (a core of 4 096 on this graph of 3 000)
    # sweeps no level: its answer is the table's rows.
    phast = json.loads(row.stats).get("phast") or {}
    assert row.phases > 0 or phast.get("core_nodes") == row.n, (row.phases, phast)
    assert row.config_source != "n/a" and row.config != "n/a"


def test_bench_ab_pins_the_tuned_lookup_and_names_bad_graphs(monkeypatch, capsys):
    """benchmarks/bench_ab.py: both checkouts must look up the records of one kernel version, so
    the pin changes engine 2's digest only; a bad graph name is one line and exit status 1."""
    import bench_ab

    import kernels

    monkeypatch.setattr(kernels, "digest", kernels.digest)  # undone after the test
    paper = kernels.digest(kernels.SOURCE_FILE)
    bench_ab.pin_digest("54e9743fe1a5d3c7")
    assert kernels.digest(kernels.ENGINE_SOURCE_FILE) == "54e9743fe1a5d3c7"
    assert kernels.digest(kernels.SOURCE_FILE) == paper
    assert bench_ab.spec("random-98k-deg2000") == bench_sssp.Spec(
        "random-98k-deg2000", "random", ("98k", 2000)
    )
    assert bench_ab.spec("grid-512").kind == "generated"
    for bad in ("random-98k", "random-98k-degx", "grid-x"):
        capsys.readouterr()
        assert bench_ab.main(["--digest", "0", bad]) == 1
        err = capsys.readouterr().err
        assert err.startswith("bench_ab: ") and err.count("\n") == 1 and repr(bad)[1:-1] in err


def test_phase_counts_covers_the_generated_graphs_of_the_record(tmp_path, capsys):
    """benchmarks/phase_counts.py --generated: the record's grid and geometric graphs get the same
    columns as the paper classes, with the CPU reference's counts from the same sources."""
    import phase_counts

    from sssp.cpu import solve_cpu

    out = tmp_path / "counts.csv"
    phase_counts.main(
        ["--out", str(out), "--skip-synthetic", "--generated", "grid-24", "--sources", "2"]
    )
    (row,) = list(csv.DictReader(out.open()))
    graph = bench_sssp.generated("grid-24", 0)
    assert (row["graph"], int(row["n"]), int(row["m"])) == ("grid-24", graph.n, graph.m)
    sources = [int(s) for s in np.random.default_rng(1).integers(0, graph.n, 2)]
    for criterion in phase_counts.CRITERIA:
        want = np.median([solve_cpu(graph, s, algorithm=criterion).iterations for s in sources])
        assert int(row[f"phases_{criterion}"]) == int(want)
    with pytest.raises(SystemExit):
        phase_counts.main(["--out", str(out), "--generated", "ring-5"])
    assert "unknown generated graph 'ring-5'" in capsys.readouterr().err


def test_gap_families_are_parsed_and_refused_by_name():
    assert bench_sssp.parse_gap_family("kron-22") == ("kron", 22)
    assert bench_sssp.parse_gap_family("urand-20") == ("urand", 20)
    for bad in ("kron", "kron-x", "rmat-22", "urand-0", "kron-99"):
        with pytest.raises(sssp.InvalidGraphError, match="GAP family"):
            bench_sssp.parse_gap_family(bad)
    args = bench_sssp.parser().parse_args(
        [
            "--out",
            "o",
            "--anchors",
            "a",
            "--skip-synthetic",
            "--skip-real",
            "--gap-families",
            "kron-12",
        ]
    )
    assert [(s.name, s.kind, s.arg) for s in bench_sssp.graph_specs(args)] == [
        ("gap-kron-12", "gap", ("kron", 12))
    ]


def test_gap_graph_reads_what_the_converter_writes(tmp_path):
    """The converter is an external binary: a stand-in writes a .wsg the way GAP's does, and the
    graph read back is that graph (GAP's weights kept, not the paper's random ones)."""
    g = sssp.Graph.from_edges(
        4, np.array([0, 1, 2, 3]), np.array([1, 0, 3, 2]), np.array([5, 5, 200, 200])
    )
    wsg = tmp_path / "graph.wsg"
    anchors.write_wsg(g, wsg, in_edges=False)
    fake = tmp_path / "gap_converter"
    fake.write_text(
        f'#!/bin/sh\n# args: $@\nlast=""; for a in "$@"; do last=$a; done\ncp {wsg} "$last"\n'
    )
    fake.chmod(0o755)
    got = bench_sssp.gap_graph("urand", 2, fake, tmp_path)
    assert got == g and got.meta["source"] == "GAP converter -u 2 -k 16 -w"
    assert not (tmp_path / "gap-urand-2.wsg").exists()
    with pytest.raises(sssp.SSSPError, match="converter"):
        bench_sssp.gap_graph("kron", 2, tmp_path / "missing", tmp_path)


def test_boost_processes_share_the_sources_and_report_the_makespan(tmp_path):
    """``run_boost_parallel`` deals the sources out to the processes in turn and takes the
    largest sum of one process's own solve times (a stand-in prints what boost_dijkstra does:
    the warm-up line, then ``source seconds checksum`` lines, then its keys)."""
    fake = tmp_path / "boost_dijkstra"
    fake.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        sources = [int(s) for s in sys.argv[2:]]
        for s in sources:
            print(s, 0.001 * (s + 1), 10 * s)
        print("weight_bits 32")
        print("rss_after_build_kb 2048")
        print("maxrss_kb 4096")
    """)
    )
    fake.chmod(0o755)
    makespan, wall, sums = anchors.run_boost_parallel(
        fake, tmp_path / "unused.csr", [0, 1, 2, 3, 4], 2
    )
    # Process 0 solves 0, 2, 4 (and 0 again first, untimed); process 1 solves 1, 3.
    assert makespan == pytest.approx(0.001 * (1 + 3 + 5))
    assert sums == {s: 10 * s for s in range(5)} and wall > 0
    fake.write_text(f"#!{sys.executable}\nimport sys\nsys.exit('boom')\n")
    with pytest.raises(anchors.AnchorError, match="boom"):
        anchors.run_boost_parallel(fake, tmp_path / "unused.csr", [0, 1], 2)


def test_spt_depth_counts_the_hops_of_every_tree_path(tmp_path):
    import spt_depth

    # 0 -> 1 -> 2 -> 3 and 0 -> 4 -> 5; 6 outside the tree (SciPy marks it -9999 as the root)
    pred = np.array([-9999, 0, 1, 2, 0, 4, -9999])
    assert spt_depth.tree_depth(pred).tolist() == [0, 1, 2, 3, 1, 2, 0]
    chain = np.arange(-1, 999)  # a path of 1000 nodes: 999 hops, in about ten sweeps
    assert spt_depth.tree_depth(chain)[-1] == 999
    # An 8 x 8 grid: a tree path has 1 to 63 hops; the record row gives the cost of a step
    record = tmp_path / "record.csv"
    record.write_text("graph,phases,gpu_ms\ngrid-8,30,0.06\n")
    out = tmp_path / "depth.csv"
    assert (
        spt_depth.main(["grid-8", "--record", str(record), "--sources", "2", "--out", str(out)])
        == 0
    )
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and all(1 <= int(r["spt_depth"]) <= 63 for r in rows)
    assert all(float(r["record_us_per_step"]) == pytest.approx(2.0) for r in rows)


def test_phast_core_reports_the_levels_a_core_table_leaves(tmp_path, monkeypatch):
    """``phast_core.py``: per core size the core's levels and nodes within the bound, the levels
    left, the table's size, seeds at least the core's nodes, the labels' size, answers and
    labels checked (exit 0)."""
    import phast_core

    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "core.csv"
    argv = ["grid-40", "--core-nodes", "0", "100", "--searches", "20", "--out", str(out)]
    assert phast_core.main(argv) == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["core_nodes_max"]) for r in rows] == [0, 100]
    none, core = rows
    assert int(none["core_nodes"]) == int(none["core_levels"]) == 0
    assert int(none["levels_left"]) == int(none["levels"])
    assert 0 < int(core["core_nodes"]) <= 100 and int(core["core_levels"]) > 0
    assert int(core["levels_left"]) == int(core["levels"]) - int(core["core_levels"])
    assert core["table_dtype"] == "int32"  # a grid's distances fit
    assert float(core["table_mib"]) == pytest.approx(
        int(core["core_nodes"]) ** 2 * 4 / 2**20, abs=0.006
    )
    assert int(core["seeds_median"]) >= int(core["core_nodes"])
    # The labels: without a core no entries; under one each label keeps at least one.
    assert float(none["label_entries_mean"]) == 0 < float(none["label_items_per_node"])
    assert 1 <= float(core["label_entries_mean"]) <= float(core["label_items_per_node"])
    assert all(float(r["label_mib"]) > 0 and float(r["label_s"]) >= 0 for r in rows)
    assert all(r["verified"] == "yes" for r in rows)


def test_hierarchy_cache_fills_the_folder_bench_sssp_and_the_tuner_read(
    tmp_path, monkeypatch, capsys
):
    """``hierarchy_cache.py``: the hierarchies of the graphs bench_sssp builds from the same
    options and of a class's tuning instances are built once, then read; ``--skip`` leaves one
    out; bad options fail by name."""
    import gzip

    import hierarchy_cache

    from sssp.hierarchy import hierarchy_for
    from tuner import workload

    graphs = tmp_path / "graphs"
    graphs.mkdir()
    ring = "".join(f"a {i} {i % 6 + 1} 1\na {i % 6 + 1} {i} 1\n" for i in range(1, 7))
    with gzip.open(graphs / "ring.gr.gz", "wt") as f:
        f.write(f"p sp 6 12\n{ring}")
    instance = sssp.generate("grid", size=100, seed=5)
    monkeypatch.setattr(
        workload, "class_instances", lambda gc, seed: [(instance, f"grid {gc} seed={seed}")]
    )
    cache = tmp_path / "cache"
    argv = ["--cache", str(cache), "--graphs-dir", str(graphs), "--generated", "grid-7"]
    argv += ["--classes", "24k/deg2/highdiam", "--class-seed", "5"]
    assert hierarchy_cache.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "grid-7",
        "ring",
        "grid 24k/deg2/highdiam seed=5",
    ]
    assert all(" built " in line for line in lines) and len(list(cache.glob("*.npz"))) == 3
    # bench_sssp's own graph of the file reads the kept hierarchy.
    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(cache))
    spec = bench_sssp.Spec("ring", "file", graphs / "ring.gr.gz")
    assert hierarchy_for(bench_sssp.build(spec, 0))[1] is True
    assert hierarchy_cache.main([*argv, "--skip", "ring"]) == 0
    again = capsys.readouterr().out.splitlines()
    assert len(again) == 2 and all(" read " in line for line in again)
    with pytest.raises(sssp.SSSPError, match="no such folder"):
        hierarchy_cache.main(["--cache", str(cache), "--graphs-dir", str(tmp_path / "none")])
    with pytest.raises(sssp.SSSPError, match="no graphs"):
        hierarchy_cache.main(["--cache", str(cache)])
    with pytest.raises(sssp.SSSPError, match="unknown generated graph"):
        hierarchy_cache.main(["--cache", str(cache), "--generated", "tree-5"])


def test_bucket_model_counts_waves_buckets_and_hop_rounds(tmp_path):
    import bucket_model

    # A path of 10 nodes, unit weights: a wave per hop; one bucket with a Δ past every
    # distance, a bucket per node with Δ = 1; 2 warps pop a wave of one node in one round.
    n = 10
    indptr = np.arange(n + 1, dtype=np.int64).clip(max=n - 1)
    indices = np.arange(1, n, dtype=np.int32)
    weights = np.ones(n - 1, np.int64)
    assert bucket_model._counts(indptr, indices, weights, 0, 100, 2) == (10, 1, 10, 9)
    assert bucket_model._counts(indptr, indices, weights, 0, 1, 2) == (10, 10, 10, 9)
    # A star: one wave of 8 leaves after the centre, popped by 3 warps in 3 rounds.
    star = sssp.Graph.from_edges(9, np.zeros(8, np.int64), np.arange(1, 9), np.full(8, 5))
    waves, buckets, rounds, relaxed = bucket_model._counts(
        star.indptr, star.indices, star.weights.astype(np.int64), 0, 100, 3
    )
    assert (waves, buckets, rounds, relaxed) == (2, 1, 1 + 3, 8)
    # The script on a generated grid: its counts are checked against the CPU reference's (it
    # raises otherwise) and the estimates follow from them and the assumed costs.
    record = tmp_path / "record.csv"
    record.write_text("graph,phases,gpu_ms,gap_ms\ngrid-8,30,0.06,0.05\n")
    out = tmp_path / "model.csv"
    args = ["grid-8", "--record", str(record), "--sources", "2", "--scales", "1", "4"]
    assert bucket_model.main([*args, "--out", str(out)]) == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and {r["delta_scale"] for r in rows} == {"1", "4"}
    for r in rows:
        waves, buckets, rounds = int(r["waves"]), int(r["buckets"]), int(r["hop_rounds"])
        assert 1 <= buckets <= waves <= rounds
        assert float(r["model_wave_ms"]) == pytest.approx(waves * 3.5e-3, rel=1e-3)
        assert float(r["model_bucket_ms"]) == pytest.approx(
            (buckets * 3.5 + rounds * 0.35) * 1e-3, rel=1e-3
        )
        assert float(r["record_gap_ms"]) == 0.05


def test_latency_probe_chases_one_cycle_and_compiles():
    import latency_probe

    for n in (1, 2, 7, 1000):
        nxt = latency_probe.sattolo(n, seed=n)
        assert sorted(nxt.tolist()) == list(range(n)) and nxt.dtype == np.int32
        p, seen = 0, set()
        for _ in range(n):  # one cycle through every index, back at 0 after n steps
            seen.add(p)
            p = int(nxt[p])
        assert p == 0 and len(seen) == n
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    with tempfile.TemporaryDirectory() as tmp_dir:
        src = Path(tmp_dir) / "probe.cu"
        src.write_text(latency_probe.SOURCE)
        run = subprocess.run(
            [
                "nvcc",
                "-O3",
                "-arch=sm_90",
                "--cubin",
                "-o",
                str(src.with_suffix(".cubin")),
                str(src),
            ],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        cubin = src.with_suffix(".cubin").read_bytes()
    assert b"chase_global" in cubin and b"chase_shared" in cubin


def test_cluster_probe_forces_a_distances_only_layout_into_the_plan():
    """benchmarks/cluster_probe.py replaces kernels.cluster_layout while a solver is made: the
    plan then runs the cluster loop on that many blocks with the rows in global memory, and a
    layout whose distances do not fit makes the plan fall back as it would on its own."""
    from unittest import mock

    import cluster_probe

    import kernels
    from sssp.config import KernelConfig, LaunchConfig
    from sssp.cpu.nearfar import default_delta
    from sssp.gpu.plan import GraphFacts, plan_engine

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_gpu_plan import H200

    graph = sssp.generate("grid", size=16_384, seed=1)  # 128 x 128, a mesh-like graph
    config = LaunchConfig(
        KernelConfig(1024, "N", 8), loop="cluster", blocks_per_sm=1, local_limit=0
    )
    delta = default_delta(graph)
    shipped = plan_engine(GraphFacts.of(graph), config, "near-far", "successors", delta, H200)
    assert shipped.loop == "cluster" and shipped.cluster > 1 and shipped.cluster_mb > 0
    for blocks in (1, 2):
        with mock.patch.object(kernels, "cluster_layout", cluster_probe.distances_only(blocks)):
            p = plan_engine(GraphFacts.of(graph), config, "near-far", "successors", delta, H200)
        assert (p.loop, p.cluster, p.cluster_mb) == ("cluster", blocks, 0)
    big = sssp.generate("grid", size=262_144, seed=1)  # 1 MB of distances: not in one block
    with mock.patch.object(kernels, "cluster_layout", cluster_probe.distances_only(1)):
        p = plan_engine(GraphFacts.of(big), config, "near-far", "successors", delta, H200)
    assert p.loop == "persistent" and "do not fit" in p.cluster_fallback


def test_hierarchy_levels_counts_a_pass_per_grid_width_of_a_level():
    import hierarchy_levels

    # A level that fits the grid is one pass whatever its lanes; a wider one takes one pass per
    # grid's width; an empty slice of levels none.
    assert hierarchy_levels.grid_passes(np.array([1, 100, 1024]), 1024) == 3
    assert hierarchy_levels.grid_passes(np.array([1025, 2048, 2049]), 1024) == 2 + 2 + 3
    assert hierarchy_levels.grid_passes(np.array([467_660, 244_280, 131_551]), 135_168) == 4 + 2 + 1
    assert hierarchy_levels.grid_passes(np.array([], dtype=np.int64), 1024) == 0
