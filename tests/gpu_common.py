"""What the GPU test modules share: skip without a usable device, and the real graphs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module", autouse=True)
def need_gpu():
    """Skip the module without a usable CUDA device (imported by each GPU test module)."""
    from sssp.gpu import is_available

    if not is_available():
        pytest.skip("no usable CUDA device (pycuda missing or no GPU)")


def shared_graph_files() -> list[Path]:
    """Every graph file under $SSSP_GRAPHS_DIR (default ``../shared/graphs``)."""
    root = Path(os.environ.get("SSSP_GRAPHS_DIR", Path(__file__).resolve().parents[2] / "shared" / "graphs"))
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name not in ("README.md", "SOURCES.tsv"))
    assert files, f"no graphs found under {root}"
    return files
