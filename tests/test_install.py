"""``pip install .`` (not editable) gives a working CPU install: the wheel holds the packages and
their data (with ``py.typed``), its metadata are complete (SPDX license expression, the LICENSE
file, classifiers PyPI knows, project URLs), it declares Kernel Tuner as a core dependency
(pycuda only in the gpu extra), and from a fresh environment outside the repository ``tune
report`` (HTML with its figures too), a replay and the notebooks' reading code work.

The wheel is built offline (``--no-build-isolation``, with the dev extra's setuptools) and
installed with ``--no-deps`` into a new virtual environment; the dependencies come from this
environment's site-packages through a path entry. A path entry does not run that folder's
``.pth`` files, so the editable install of this checkout stays invisible: ``sssp`` can only come
from the wheel, which the test checks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[1]


def sh(*argv: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    out = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=400
    )
    assert out.returncode == 0, f"{argv}\nstdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    return out.stdout + out.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    sh(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-q",
        "-w",
        out,
        ROOT,
    )
    (whl,) = out.glob("sssp_tune-*.whl")
    return whl


def metadata(whl: Path) -> list[tuple[str, str]]:
    """The wheel's core metadata headers, in order (the description that follows is left out)."""
    with zipfile.ZipFile(whl) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    headers = text.split("\n\n", 1)[0]
    return [
        (k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in headers.splitlines())
    ]


def requirements(whl: Path) -> list[str]:
    return [v for k, v in metadata(whl) if k == "Requires-Dist"]


def test_wheel_metadata_license_classifiers_and_urls(wheel):
    """An SPDX license expression (not setuptools' deprecated table), the LICENSE file shipped,
    classifiers PyPI knows, and project URLs."""
    from trove_classifiers import classifiers as known

    meta = metadata(wheel)
    fields = dict(meta)
    assert fields["Metadata-Version"] >= "2.4"
    assert fields["License-Expression"] == "MIT" and "License" not in fields
    assert fields["License-File"] == "LICENSE"
    names = zipfile.ZipFile(wheel).namelist()
    (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    text = zipfile.ZipFile(wheel).read(license_file).decode()
    assert text.startswith("MIT License") and "Permission is hereby granted" in text
    assert text == (ROOT / "LICENSE").read_text()
    classifiers = [v for k, v in meta if k == "Classifier"]
    assert classifiers and not [c for c in classifiers if c not in known], "unknown classifiers"
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the expression says it
    urls = [v for k, v in meta if k == "Project-URL"]
    assert urls and all(re.fullmatch(r"[\w ]+, https://\S+", u) for u in urls), urls


def test_every_package_ships_py_typed(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for pkg in ("sssp", "tuner", "tuning_db", "kernels"):
        assert f"{pkg}/py.typed" in names


def test_wheel_declares_kernel_tuner_core_and_pycuda_gpu_only(wheel):
    reqs = requirements(wheel)
    core = [r for r in reqs if "extra ==" not in r]
    assert any(re.match(r"kernel[_-]tuner\b", r, re.I) for r in core), core
    assert not any(r.lower().startswith("pycuda") for r in core), core
    gpu = [r for r in reqs if re.search(r"extra\s*==\s*['\"]gpu['\"]", r)]
    assert any(r.lower().startswith("pycuda") for r in gpu), reqs


def test_wheel_ships_kernels_and_recorded_results(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("kernels/") and n.endswith(".cu") for n in names)
    assert "tuning_db/data/h200.json" in names
    assert any(n.startswith("tuning_db/data/kt_cache/") for n in names)
    for pkg in ("sssp", "tuner", "tuning_db", "kernels"):
        assert f"{pkg}/__init__.py" in names


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, dict[str, str], Path]:
    """A fresh venv with the wheel (and nothing else) installed; cwd and HOME outside the repo."""
    base = tmp_path_factory.mktemp("venv")
    venv = base / "v"
    sh(sys.executable, "-m", "venv", "--without-pip", venv)
    target = venv / "bin" / "python"
    sh(
        sys.executable,
        "-m",
        "pip",
        "--python",
        target,
        "install",
        "--no-deps",
        "--no-index",
        "-q",
        wheel,
    )
    purelib = Path(
        sh(target, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    )
    # The dependencies: this environment's site-packages, as a plain path entry.
    (purelib / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    home = base / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "SSSP_TUNING_DB", "XDG_DATA_HOME", "XDG_CACHE_HOME")
    }
    env.update(HOME=str(home), PYTHONNOUSERSITE="1")
    return venv, env, base


def test_packages_come_from_the_wheel(installed):
    venv, env, base = installed
    out = sh(
        venv / "bin" / "python",
        "-c",
        "import sssp, tuner, tuning_db, kernels; print(sssp.__file__, tuner.__file__)",
        env=env,
        cwd=base,
    )
    assert str(venv) in out and str(ROOT) not in out


def test_type_checkers_read_the_installed_annotations(installed):
    """py.typed at work (PEP 561): mypy, pointed at the installed wheel, reads the annotations of
    the package (without the marker it would take ``sssp`` for an untyped module, ``Any``, and
    report no error here)."""
    venv, env, base = installed
    user = base / "uses_sssp.py"
    user.write_text(
        "import sssp\n"
        "r = sssp.solve(sssp.Graph.from_edges(2, [0], [1], [3]), 0)\n"
        "wrong: str = r.dist\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--python-executable",
            str(venv / "bin" / "python"),
            "--cache-dir",
            str(base / "mypy-cache"),
            "--no-error-summary",
            str(user),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=base,
        timeout=300,
    )
    assert "py.typed" not in out.stdout, out.stdout
    assert out.returncode == 1 and "uses_sssp.py:3: error: Incompatible types" in out.stdout, (
        out.stdout + out.stderr
    )


def test_tune_report_from_the_shipped_results(installed):
    venv, env, base = installed
    out = sh(venv / "bin" / "tune", "report", env=env, cwd=base)
    assert "as in the paper's Table 1" in out and "NVIDIA H200" in out
    assert "results: recorded" in out


def test_html_report_with_its_figures(installed):
    venv, env, base = installed
    baselines = ROOT / "benchmarks" / "results" / "h200" / "sssp_vs_boost.csv"
    out = base / "report.html"
    sh(
        venv / "bin" / "tune",
        "report",
        "--format",
        "html",
        "--baselines",
        baselines,
        "-o",
        out,
        env=env,
        cwd=base,
    )
    assert out.read_text().count('<img src="data:image/svg+xml;base64,') == 2


def test_replay_works_without_a_gpu(installed):
    venv, env, base = installed
    out = sh(
        venv / "bin" / "tune",
        "--replay",
        "--graph-class",
        "deg2",
        "--size",
        "24k",
        "--db",
        f"sqlite:///{base / 'replay.sqlite'}",
        env=env,
        cwd=base,
    )
    assert "24k/deg2 [REPLAY of recorded measurements]" in out
    assert "Traceback" not in out


def test_notebook_reading_code(installed):
    venv, env, base = installed
    code = (
        "import importlib.resources as r\n"
        "from tuning_db import Store\n"
        "from tuner import report\n"
        "store = Store('sqlite://')\n"
        "store.import_json(r.files('tuning_db') / 'data' / 'h200.json')\n"
        "records = store.all_best()\n"
        "print(len(records))\n"
        "print(report.table1(records, fmt='md'))\n"
    )
    out = sh(venv / "bin" / "python", "-c", code, env=env, cwd=base)
    assert out.splitlines()[0] == "12" and "| 98k | relax |" in out


def test_sssp_cli_solves_on_the_cpu(installed):
    venv, env, base = installed
    g = base / "g.npz"
    sh(
        venv / "bin" / "sssp",
        "generate",
        "random",
        "--size",
        "1024",
        "--degree",
        "8",
        "-o",
        g,
        env=env,
        cwd=base,
    )
    out = sh(
        venv / "bin" / "sssp",
        "solve",
        g,
        "--backend",
        "cpu",
        "--algorithm",
        "dijkstra",
        env=env,
        cwd=base,
    )
    assert "reached" in out
