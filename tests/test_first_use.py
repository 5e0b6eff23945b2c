"""What a user coming from SciPy or NetworkX meets in the first minutes, on a machine without a
GPU: command defaults, outputs piped or redirected, the help's examples, error families, warnings
and the file formats they already have. Each test is one trip a first user hit."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sssp
from sssp import cli as sssp_cli
from sssp.cli import main as sssp_main
from sssp.formats import npz
from tuner import cli as tune_cli

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[1]

# A 1-based METIS file (a path 1-2-3-4), as the DIMACS10 and clustering files are.
METIS_PATH4 = "4 3\n2\n1 3\n2 4\n3\n"


def solve_help(option: str | None = None) -> str:
    """``sssp solve --help``, or the help text of one of its options."""
    solve = sssp_cli.build_parser()._subparsers._group_actions[0].choices["solve"]
    if option is None:
        return solve.format_help()
    return next(a.help for a in solve._actions if option in a.option_strings)


def run(capsys, main, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("first") / "g.npz"
    sssp.save(sssp.generate("random", size=300, degree=4, seed=2), path)
    return path


# -- sssp solve ---------------------------------------------------------------------------------
def test_source_outside_a_one_based_file_names_its_ids(tmp_path, capsys):
    path = tmp_path / "path4.graph"
    path.write_text(METIS_PATH4)
    rc, out, err = run(capsys, sssp_main, "solve", str(path), "--source", "0", "--backend", "cpu")
    assert rc == 1 and out == ""
    assert "--source 0" in err and "1..4" in err and len(err.strip().splitlines()) == 1
    # The default is a valid source: the first node, which the file calls 1.
    rc, out, _ = run(capsys, sssp_main, "solve", str(path), "--backend", "cpu", "--json")
    assert rc == 0 and json.loads(out)["runs"][0]["source"] == 1
    rc, out, _ = run(
        capsys, sssp_main, "solve", str(path), "--source", "4", "--backend", "cpu", "--json"
    )
    assert rc == 0 and json.loads(out)["runs"][0]["reached"] == 4
    assert "default 0" not in solve_help("--source") and "the first node" in solve_help("--source")


def _solve_to_stdout(graph_file: Path, stdout, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sssp",
            "solve",
            str(graph_file),
            "--backend",
            "cpu",
            "--source",
            "3",
            "-o",
            "/dev/stdout",
        ],
        stdout=stdout,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # this checkout's sssp, whatever is installed


def test_output_to_dev_stdout_piped_and_redirected(graph_file, tmp_path):
    want = sssp.solve(sssp.load(graph_file), 3, backend="cpu").dist
    piped = _solve_to_stdout(graph_file, subprocess.PIPE, tmp_path)
    assert piped.returncode == 0, piped.stderr.decode()
    np.testing.assert_array_equal(np.load(io.BytesIO(piped.stdout)), want)
    assert b"reached" in piped.stderr  # the summary goes beside the data, not into it
    # Redirected to a file, and appended to one (>>): written at stdout's position.
    target = tmp_path / "out.bin"
    target.write_bytes(b"head")
    with open(target, "ab") as fh:
        appended = _solve_to_stdout(graph_file, fh, tmp_path)
    assert appended.returncode == 0, appended.stderr.decode()
    data = target.read_bytes()
    assert data.startswith(b"head")
    np.testing.assert_array_equal(np.load(io.BytesIO(data[4:])), want)


def test_sources_are_distinct(graph_file, capsys):
    n = sssp.load(graph_file).n
    rc, out, _ = run(
        capsys,
        sssp_main,
        "solve",
        str(graph_file),
        "--sources",
        str(n),
        "--seed",
        "5",
        "--backend",
        "cpu",
        "--algorithm",
        "dijkstra",
        "--json",
    )
    assert rc == 0
    sources = [r["source"] for r in json.loads(out)["runs"]]
    assert sorted(sources) == list(range(n))  # every node once: drawn without replacement
    rc, _, err = run(
        capsys, sssp_main, "solve", str(graph_file), "--sources", str(n + 1), "--backend", "cpu"
    )
    assert rc == 1 and "without replacement" in err and str(n) in err
    assert "without replacement" in solve_help("--sources")


def test_gpu_hint_names_an_installable_command():
    hint = sssp.BackendUnavailableError("gpu", "pycuda cannot be imported").hint
    assert "sssp-tune[gpu]" not in hint  # not on PyPI: that name installs nothing
    assert "pip install -e '.[gpu]'" in hint and "checkout" in hint
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert "gpu" in extras


# -- sssp generate: the compressed write --------------------------------------------------------
def test_compressed_write_reports_progress_with_a_total(tmp_path):
    g = sssp.generate("random", size=4096, degree=20, seed=1)
    calls: list[tuple[int, int]] = []
    npz.write(g, tmp_path / "g.npz", progress=lambda done, total: calls.append((done, total)))
    total = g.indptr.nbytes + g.indices.nbytes + g.weights.nbytes
    assert calls and all(t == calls[0][1] for _, t in calls) and total <= calls[0][1] < total + 4096
    assert calls[-1][0] == calls[-1][1]
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) > (g.indices.nbytes >> 20)  # about every MiB, not once per array
    assert sssp.load(tmp_path / "g.npz") == g
    with np.load(tmp_path / "g.npz") as z:  # numpy's own reader, as for np.savez_compressed
        np.testing.assert_array_equal(z["indices"], g.indices)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_generate_draws_a_progress_bar_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setattr(sssp_cli, "SAVE_PROGRESS_DELAY_S", 0)
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setenv("COLUMNS", "100")
    rc = sssp_main(
        ["generate", "random", "--size", "8192", "--degree", "20", "-o", str(tmp_path / "g.npz")]
    )
    assert rc == 0
    text = term.getvalue()
    # A bar with its total (the arrays' bytes, 1.3 MiB), not a counter of compressed bytes.
    assert "write:" in text and "%|" in text and "/1.31M" in text, text[-500:]


@pytest.mark.slow
def test_compressed_write_is_not_needlessly_slow(tmp_path):
    """CPU time of the compressed write against zlib's default level (what np.savez_compressed
    runs) on the same arrays: level 1 costs about a sixth; the bound leaves room for noise."""
    g = sssp.generate("random", size="49k", degree=20, seed=0)
    arrays = [np.ascontiguousarray(a).tobytes() for a in (g.indptr, g.indices, g.weights)]
    t0 = time.process_time()
    for a in arrays:
        zlib.compress(a, 6)
    level6 = time.process_time() - t0
    t0 = time.process_time()
    npz.write(g, tmp_path / "g.npz")
    ours = time.process_time() - t0
    assert ours < 0.5 * level6, (ours, level6)
    raw = sum(len(a) for a in arrays)
    assert (tmp_path / "g.npz").stat().st_size < 0.7 * raw  # still compressed


# -- tune ---------------------------------------------------------------------------------------
def test_the_help_example_of_import_works_as_printed(tmp_path, monkeypatch, capsys):
    line = next(ln for ln in tune_cli.EPILOG.splitlines() if "tune import" in ln)
    commands = [shlex.split(part.split("#")[0]) for part in line.split("&&")]
    assert [c[:2] for c in commands] == [["tune", "export"], ["tune", "import"]]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the default database, seeded
    monkeypatch.delenv("SSSP_TUNING_DB", raising=False)
    for argv in commands:
        rc, _, err = run(capsys, tune_cli.main, *argv[1:])
        assert rc == 0, f"{' '.join(argv)}: {err}"
    db = next(argv[argv.index("--db") + 1] for argv in commands if "--db" in argv)
    rc, out, _ = run(capsys, tune_cli.main, "show", "--db", db, "--format", "csv")
    assert rc == 0 and "NVIDIA H200" in out


def test_replay_of_a_class_that_does_not_ship_lists_those_that_do(tmp_path, capsys):
    rc, out, err = run(
        capsys,
        tune_cli.main,
        "run",
        "--replay",
        "--graph-class",
        "deg2",
        "--size",
        "12k",
        "--db",
        f"sqlite:///{tmp_path / 'r.sqlite'}",
    )
    assert rc == 1 and out == ""
    assert "12k/deg2" in err and len(err.strip().splitlines()) == 1
    for shipped in ("24k/deg2", "49k/deg200", "98k/deg1000"):
        assert shipped in err


def test_html_report_draws_its_figures_from_the_shipped_results(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert (
        tune_cli.main(
            ["import", str(ROOT / "tuning_db" / "data" / "h200-engine2.json"), "--db", db]
        )
        == 0
    )
    baselines = ROOT / "benchmarks" / "results" / "h200" / "sssp_vs_boost.csv"
    out = tmp_path / "report.html"
    rc, _, err = run(
        capsys, tune_cli.main, "report", "--db", db, "--baselines", str(baselines), "-o", str(out)
    )
    assert rc == 0, err  # the format follows the suffix
    html = out.read_text(encoding="utf-8")
    assert html.count('<img src="data:image/svg+xml;base64,') == 2
    assert "sssp_vs_boost.csv, not measured by this command" in html
    with pytest.raises(SystemExit) as exc:
        tune_cli.main(
            ["report", "--db", db, "--baselines", str(baselines)]
        )  # Markdown has no figures
    assert exc.value.code == 2 and "--format html" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("graph,boost_ms\nx,1\n")
    rc, _, err = run(
        capsys, tune_cli.main, "report", "--db", db, "--format", "html", "--baselines", str(bad)
    )
    assert rc == 1 and "bad.csv" in err and "gpu_ms" in err


# -- the library --------------------------------------------------------------------------------
def small_graph() -> sssp.Graph:
    return sssp.Graph([0, 1, 2, 2], [1, 2], [3, 4])


def test_a_variant_the_algorithm_lacks_is_a_value_error():
    from sssp.cpu import solve_cpu

    g = small_graph()
    for algorithm in ("dijkstra", "near-far"):
        with pytest.raises(ValueError, match="predecessors"):
            sssp.solve(g, 0, algorithm=algorithm, variant="predecessors", backend="cpu")
        with pytest.raises(sssp.InvalidArgumentError):
            solve_cpu(g, 0, algorithm=algorithm, variant="predecessors")
    with pytest.raises(ValueError, match="'bogus'"):
        solve_cpu(g, 0, algorithm="bogus")


def test_backend_unavailable_is_an_import_error():
    err = sssp.BackendUnavailableError("gpu", "no CUDA device is visible")
    assert isinstance(err, ImportError) and isinstance(err, sssp.SSSPError)
    try:
        raise err
    except ImportError as caught:  # the fallback idiom for optional accelerators
        assert "no CUDA device" in str(caught)


def test_tuned_on_the_cpu_warns_through_warnings():
    g = small_graph()
    with pytest.warns(sssp.ConfigIgnoredWarning, match="tuned=True is ignored") as record:
        sssp.solve(g, 0, backend="cpu", tuned=True)
    assert record[0].filename == __file__  # attributed to the caller's line
    assert issubclass(sssp.ConfigIgnoredWarning, sssp.SSSPWarning)
    assert issubclass(sssp.SSSPWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sssp.SSSPWarning)
        with pytest.raises(sssp.ConfigIgnoredWarning):
            sssp.Solver(g, backend="cpu", tuned=True)
        warnings.simplefilter("ignore", sssp.SSSPWarning)
        sssp.solve(g, 0, backend="cpu", tuned=True)  # filtered: no error


def test_the_cli_shows_a_library_warning_as_one_line(graph_file, capsys):
    rc, _, err = run(capsys, sssp_main, "solve", str(graph_file), "--backend", "cpu", "--tuned")
    assert rc == 0
    lines = [ln for ln in err.splitlines() if "tuned=True is ignored" in ln]
    assert len(lines) == 1 and lines[0].startswith("sssp: WARNING: ")
    assert "warn(" not in err and ".py:" not in err


@pytest.mark.parametrize("kind", ["csr", "csc", "coo"])
def test_scipy_save_npz_files_load(tmp_path, kind):
    dense = np.array([[0, 4, 1, 0], [0, 0, 2, 0], [0, 0, 0, 0], [5, 0, 0, 0]], dtype=np.int64)
    path = tmp_path / f"m-{kind}.npz"
    sp.save_npz(path, getattr(sp, f"{kind}_matrix")(dense), compressed=kind != "coo")
    g = sssp.load(path)
    ref = sssp.Graph.from_scipy(sp.csr_matrix(dense))
    for attr in ("indptr", "indices", "weights"):
        np.testing.assert_array_equal(getattr(g, attr), getattr(ref, attr))
    assert g.meta["format"] == "scipy-npz" and g.meta["scipy_format"] == kind
    assert g.name == f"m-{kind}"
    r = sssp.solve(g, 0, backend="cpu", algorithm="dijkstra")
    assert r.dist.tolist() == [0, 4, 1, sssp.UNREACHABLE]


def test_a_non_square_scipy_matrix_is_refused_by_name(tmp_path):
    path = tmp_path / "rect.npz"
    sp.save_npz(path, sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(sssp.GraphFormatError, match=r"rect\.npz.*2 x 3"):
        sssp.load(path)


def test_unreachable_is_documented_where_users_meet_it(capsys):
    doc = sssp.SSSPResult.__doc__
    assert "2**63 - 1" in doc and "overflow" in doc and "dist_float" in doc
    readme = (ROOT / "README.md").read_text()
    python_section = readme[readme.index("## Python") :]
    assert "overflow" in python_section[:4000]
    assert "overflow" in solve_help()


# -- the test command on a fresh clone ----------------------------------------------------------
@pytest.mark.slow
def test_real_graph_tests_skip_without_the_shared_folder(tmp_path):
    """A checkout with no ``../shared`` beside it: the modules that read the real graphs collect,
    and their tests skip with the reason (CI, which sets SSSP_GRAPHS_DIR, requires the folder)."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "tests", clone / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    env = {k: v for k, v in os.environ.items() if k != "SSSP_GRAPHS_DIR"}
    env["PYTHONPATH"] = str(ROOT)  # the packages of this checkout
    modules = ["tests/test_real_graphs.py", "tests/test_gpu.py", "tests/test_gpu_nearfar.py"]
    quick = "tests/test_first_use.py::test_gpu_hint_names_an_installable_command"  # one that runs
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-m",
            "not gpu",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            *modules,
            quick,
        ],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout and "error" not in proc.stdout.lower()
    assert (
        "SKIPPED" in proc.stdout
        and "shared/graphs" in proc.stdout
        and "SSSP_GRAPHS_DIR" in proc.stdout
    )
    # The GPU modules' real-graph tests skip with the same reason (on a GPU host too).
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            f"{modules[1]}::test_real_graphs",
            f"{modules[2]}::test_real_graphs",
        ],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 skipped" in proc.stdout and proc.stdout.count("shared/graphs") >= 2
    # An explicit SSSP_GRAPHS_DIR (as .ci/run sets) that is missing is a failure, not a skip.
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", modules[0]],
        cwd=clone,
        env={**env, "SSSP_GRAPHS_DIR": str(tmp_path / "nowhere")},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 1 and "nowhere" in proc.stdout
