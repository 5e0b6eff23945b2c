"""benchmarks/bench_paper.py runs end to end on the CPU backend, on tiny graphs (no GPU)."""

from __future__ import annotations

import gzip
import importlib
import stat
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import sssp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
bench = importlib.import_module("bench_paper")
recorded = importlib.import_module("recorded")

TINY = [
    "--backend",
    "cpu",
    "--sizes",
    "3000",
    "--random-sizes",
    "1500",
    "--degrees",
    "3",
    "30",
    "--kron-scales",
    "9",
    "--no-social",
    "--sources",
    "3",
    "--cpu-sources",
    "2",
    "--graphs-dir",
    "",
]

# A stand-in for benchmarks/boost_dijkstra.cpp speaking its protocol (the raw graph of
# bench_gpu.write_raw in, "source seconds checksum" lines and the resident set out), answering with
# SciPy; the real binary needs the Boost headers, which this machine may not have.
FAKE_BOOST = textwrap.dedent("""\
    #!{python}
    import sys, time
    import numpy as np
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import dijkstra
    raw = open(sys.argv[1], "rb").read()
    n, m = np.frombuffer(raw[:16], np.int64)
    indptr = np.frombuffer(raw, np.int64, n + 1, 16)
    indices = np.frombuffer(raw, np.int32, m, 16 + 8 * (n + 1))
    w = np.frombuffer(raw, np.int64, m, 16 + 8 * (n + 1) + 4 * m)
    g = csr_array((w.astype(float), indices, indptr), shape=(n, n))
    for s in sys.argv[2:]:
        t = time.perf_counter()
        d = dijkstra(g, indices=int(s))
        print(s, time.perf_counter() - t, int(d[np.isfinite(d)].sum()) + {offset})
    print("rss_after_build_kb", 2048)
""")


def _fake_boost(tmp_path: Path, offset: int = 0) -> Path:
    path = tmp_path / f"boost{offset}"
    path.write_text(FAKE_BOOST.format(python=sys.executable, offset=offset))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _graphs_dir(tmp_path: Path) -> Path:
    """A real-graph folder like $SSSP_GRAPHS_DIR: a 2000-node METIS ring (family "walshaw") and a
    3-node one that --min-real-nodes leaves out."""
    root = tmp_path / "graphs"
    (root / "walshaw").mkdir(parents=True)
    for name, n in (("ring", 2000), ("tiny", 3)):
        lines = [f"{n} {n}"] + [f"{(v - 1) % n + 1} {(v + 1) % n + 1}" for v in range(n)]
        with gzip.open(root / "walshaw" / f"{name}.graph.gz", "wt") as f:
            f.write("\n".join(lines) + "\n")
    return root


def test_both_experiments_on_cpu(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setitem(bench.SOCIAL, "scale", 8)
    with_social = [a for a in TINY if a != "--no-social"]
    assert (
        bench.main(
            [
                *with_social,
                "--experiment",
                "all",
                "--boost",
                str(_fake_boost(tmp_path)),
                "--graphs-dir",
                str(_graphs_dir(tmp_path)),
                "--min-real-nodes",
                "100",
                "--out-dir",
                str(out),
            ]
        )
        == 0
    )
    exp1 = recorded.read(out / recorded.EXP1_FILE)
    assert exp1.meta["status"] == "complete" and exp1.meta["experiment"] == "1"
    for key in (
        "device",
        "date",
        "kernels",
        "sources_per_graph",
        "command",
        "git_commit",
        "host_cpu",
    ):
        assert exp1.meta[key], key
    solvers = {
        (r["algorithm"], r["variant"]) for r in exp1.select(graph="martin-3000", backend="cpu")
    }
    assert solvers == {
        ("dijkstra", ""),
        ("martin", "successors"),
        ("crauser", "successors"),
        ("martin", "predecessors"),
        ("crauser", "predecessors"),
    }
    crauser = exp1.select(algorithm="crauser", variant="successors")[0]
    martin = exp1.select(algorithm="martin", variant="successors")[0]
    assert crauser["sources"] == "2" and float(crauser["mean_ms"]) > 0
    assert float(martin["iterations"]) > float(
        crauser["iterations"]
    )  # Martín settles fewer per step

    exp2 = recorded.read(out / recorded.EXP2_FILE)
    assert exp2.meta["status"] == "complete"
    graphs = {r["graph"]: r["family"] for r in exp2.rows}
    assert graphs == {
        "random-1500-deg3": "random-1500",
        "random-1500-deg30": "random-1500",
        "kronecker-logn9": "kronecker",
        "ring": "walshaw",
        "social-rmat-logn8": "social",
    }
    ring = exp2.select(graph="ring", algorithm="crauser")[0]
    assert ring["n"] == "2000" and ring["m"] == "4000" and "weights='random'" in ring["origin"]
    assert all(r["status"] == "ok" for r in exp2.rows), [r["status"] for r in exp2.rows]
    boost = exp2.select(algorithm="boost-dijkstra", graph="kronecker-logn9")[0]
    assert boost["sources"] == "2" and float(boost["mem_mb"]) == 2.0


def test_wrong_answers_are_recorded_not_timed(tmp_path, monkeypatch):
    """The check can fail: a solver whose distances are off is recorded as wrong, exit status 1."""
    real = sssp.Solver.solve

    def off_by_one(self, source, **kw):
        r = real(self, source, **kw)
        if self.algorithm != "crauser":
            return r
        dist = r.dist.copy()
        dist[(source + 1) % dist.size] += 1
        return sssp.SSSPResult(
            dist,
            r.pred.copy(),
            r.source,
            r.algorithm,
            r.variant,
            r.backend,
            r.iterations,
            r.timings,
        )

    monkeypatch.setattr(sssp.Solver, "solve", off_by_one)
    out = tmp_path / "out"
    args = [
        *TINY,
        "--experiment",
        "2",
        "--kron-scales",
        "--boost",
        str(_fake_boost(tmp_path, offset=1)),
        "--out-dir",
        str(out),
    ]
    assert bench.main(args) == 1
    rows = recorded.read(out / recorded.EXP2_FILE).rows
    by = {(r["graph"], r["algorithm"]): r for r in rows}
    assert by[("random-1500-deg3", "crauser")]["status"].startswith("wrong: ")
    assert by[("random-1500-deg3", "crauser")]["mean_ms"] == ""
    assert by[("random-1500-deg3", "martin")]["status"] == "ok"
    assert "distance sum" in by[("random-1500-deg3", "boost-dijkstra")]["status"]


def test_a_solver_that_raises_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    real = sssp.Solver.solve

    def fails_on_martin(self, source, **kw):
        if self.algorithm == "martin":
            raise sssp.SSSPError("launch failed (simulated)")
        return real(self, source, **kw)

    monkeypatch.setattr(sssp.Solver, "solve", fails_on_martin)
    out = tmp_path / "out"
    assert bench.main([*TINY, "--experiment", "1", "--out-dir", str(out)]) == 1
    rec = recorded.read(out / recorded.EXP1_FILE)
    status = {(r["algorithm"], r["variant"]): r["status"] for r in rec.rows}
    assert status[("martin", "successors")] == "failed: launch failed (simulated)"
    assert status[("crauser", "predecessors")] == "ok" and rec.meta["status"] == "complete"


def test_budget_stops_cleanly_with_a_well_formed_file(tmp_path):
    out = tmp_path / "out"
    assert (
        bench.main([*TINY, "--experiment", "1", "--budget-seconds", "0", "--out-dir", str(out)])
        == 0
    )
    rec = recorded.read(out / recorded.EXP1_FILE)
    assert rec.rows == ()
    assert rec.meta["status"].startswith(
        "stopped at the time budget (0 s) before martin-3000: 0 of 1"
    )


def test_bad_arguments_get_one_clear_line(capsys):
    for args, msg in (
        (["--sizes", "12q"], "unknown size '12q'"),
        (["--algorithms", "bellman"], "unknown algorithm 'bellman'"),
        (["--graphs-dir", "/nonexistent"], "--graphs-dir /nonexistent: no such folder"),
        (["--sources", "0"], "--sources must be at least 1"),
    ):
        with pytest.raises(SystemExit) as exc:
            bench.parse_args(["--backend", "cpu", *args])
        assert exc.value.code == 2
        assert msg in capsys.readouterr().err


def test_sources_are_the_seeded_uniform_draw():
    g = sssp.generate("random", size=500, degree=4, seed=0)
    a = list(sssp.graph.iter_sources(g, 5, seed=1))
    assert a == list(sssp.graph.iter_sources(g, 5, seed=1)) and all(0 <= s < 500 for s in a)
    assert len(set(np.asarray(a))) > 1


@pytest.mark.gpu
def test_both_experiments_on_the_gpu(tmp_path):
    """The GPU path: default and tuned GPU solvers, the device header, memory; tiny sizes."""
    from sssp.gpu import is_available

    if not is_available():
        pytest.skip("no usable CUDA device")
    out = tmp_path / "out"
    gpu_args = [a for a in TINY if a not in ("--backend", "cpu")]
    assert (
        bench.main(
            [
                *gpu_args,
                "--experiment",
                "all",
                "--boost",
                str(_fake_boost(tmp_path)),
                "--out-dir",
                str(out),
            ]
        )
        == 0
    )
    exp1 = recorded.read(out / recorded.EXP1_FILE)
    assert exp1.meta["driver"] and exp1.meta["compute_capability"]
    gpu = exp1.select(backend="gpu")
    assert {(r["algorithm"], r["variant"], r["config"]) for r in gpu} == {
        (a, v, c)
        for a in ("martin", "crauser")
        for v in ("successors", "predecessors")
        for c in ("default", "tuned")
    }
    assert all(float(r["mem_mb"]) > 0 for r in gpu)
    assert all(0 < float(r["relax_active_share"]) <= 1 for r in gpu if r["variant"] == "successors")
    exp2 = recorded.read(out / recorded.EXP2_FILE)
    assert all(r["status"] == "ok" for r in exp2.rows), [r["status"] for r in exp2.rows]
    assert exp2.select(backend="gpu", config="tuned", algorithm="crauser")


def test_experiment_2_on_the_gpu_adds_the_tuners_pick_as_a_last_column():
    import argparse

    args = argparse.Namespace(backend="gpu", algorithms=["martin", "crauser"])
    keys = [s.key for s in bench.solver_specs(2, args)]
    assert ("auto", "successors", "gpu", "tuned") in keys
    assert all(k[0] != "auto" for k in (s.key for s in bench.solver_specs(1, args)))
    cpu = argparse.Namespace(backend="cpu", algorithms=["martin", "crauser"])
    assert all(s.algorithm != "auto" for s in bench.solver_specs(2, cpu))
