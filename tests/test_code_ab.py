"""benchmarks/code_ab.py's checks before any device work: what a version is, which graphs, and
that a version's process runs that version's code (not the environment's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "code_ab.py"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.mark.parametrize(
    "trees, needle",
    [
        (["--tree", "base"], "expected NAME=DIR"),
        (["--tree", "base=/nonexistent-tree", "--tree", f"new={ROOT}"], "has no sssp/__init__.py"),
        (["--tree", f"new={ROOT}"], "two or more --tree"),
        (["--tree", f"a={ROOT}", "--tree", f"a={ROOT}"], "each NAME once"),
        (["--tree", f"a={ROOT}", "--tree", f"b={ROOT}", "--sources", "2"], "at least 3"),
        (["--tree", f"a={ROOT}", "--tree", f"b={ROOT}"], "no graph given"),
    ],
)
def test_bad_arguments_get_one_line_and_no_table(tmp_path, trees, needle):
    out = tmp_path / "ab.csv"
    proc = run(*trees, "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert not out.exists()


def test_a_graph_not_in_the_folder_is_named(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "mesh.graph.gz").write_bytes(b"")  # listed, never read
    proc = run(
        "--tree", f"a={ROOT}", "--tree", f"b={ROOT}", "--graphs-dir", str(tmp_path / "g"),
        "--graphs", "mesh", "nope", "--out", str(tmp_path / "ab.csv"), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "no graph named nope" in proc.stderr and not (tmp_path / "ab.csv").exists()


def test_a_process_refuses_code_from_outside_its_version(tmp_path):
    """A version whose folder is not where ``sssp`` was imported from (here: an empty copy that
    PYTHONPATH does not name) is refused before any graph is read."""
    for pkg in ("sssp", "kernels"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    proc = run("--child", str(tmp_path), "--random", "64x2", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"not from {tmp_path}" in lines[0], proc.stderr
