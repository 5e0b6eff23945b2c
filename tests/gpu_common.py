"""What the GPU test modules share: skip without a usable device, and the real graphs."""

from __future__ import annotations

import pytest

try:
    from tests.graph_folder import graph_files
except ImportError:  # pragma: no cover
    from graph_folder import graph_files


@pytest.fixture(scope="module", autouse=True)
def need_gpu():
    """Skip the module without a usable CUDA device (imported by each GPU test module)."""
    from sssp.gpu import is_available

    if not is_available():
        pytest.skip("no usable CUDA device (pycuda missing or no GPU)")


def shared_graph_files() -> list:
    """Every graph file under $SSSP_GRAPHS_DIR (default ``../shared/graphs``), as parameters;
    without the folder, one skipped parameter with the reason (``tests/graph_folder.py``)."""
    return graph_files()
