"""Where the real test graphs are, and what their absence means.

The folder is ``$SSSP_GRAPHS_DIR``, else ``../shared/graphs`` beside the checkout. CI
(``.ci/run``) checks the folder and sets the variable: a folder named that way must exist, and
the tests that read it fail without it. A checkout without the variable and without the
default folder (a fresh clone) skips those tests, with :data:`MISSING` as the reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

EXPLICIT = bool(os.environ.get("SSSP_GRAPHS_DIR"))
GRAPHS_DIR = Path(
    os.environ.get("SSSP_GRAPHS_DIR") or Path(__file__).resolve().parents[2] / "shared" / "graphs"
)
SOURCES = GRAPHS_DIR / "SOURCES.tsv"
MISSING = (
    f"real-graph folder {GRAPHS_DIR} (or its SOURCES.tsv) is missing: put the shared/graphs "
    "folder beside the checkout or set SSSP_GRAPHS_DIR (CI requires it)"
)


def present() -> bool:
    return GRAPHS_DIR.is_dir() and SOURCES.is_file()


def required() -> bool:
    """Whether a missing folder is a failure (SSSP_GRAPHS_DIR names it) rather than a skip."""
    return EXPLICIT


def skip_unless_present() -> None:
    """At a test module's top: skip the module without the folder, unless it is required."""
    if not present() and not required():
        pytest.skip(MISSING, allow_module_level=True)


def graph_files() -> list:
    """Every graph file of the folder, as parameters for ``pytest.mark.parametrize``. Without
    the folder: one skipped parameter with the reason, or, when the folder is required, an
    error at collection."""
    files = (
        sorted(
            p
            for p in GRAPHS_DIR.rglob("*")
            if p.is_file() and p.name not in ("README.md", "SOURCES.tsv")
        )
        if GRAPHS_DIR.is_dir()
        else []
    )
    if files:
        return files
    if required():
        raise AssertionError(f"no graphs found under {GRAPHS_DIR} (SSSP_GRAPHS_DIR)")
    return [pytest.param(None, id="no-real-graphs", marks=pytest.mark.skip(reason=MISSING))]
