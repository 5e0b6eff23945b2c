"""What the GPU test modules share: skip without a usable device, and the real graphs."""

from __future__ import annotations

import numpy as np
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


def scipy_rows(graph, sources) -> np.ndarray:
    """SciPy's distance rows from ``sources`` (float64, inf where unreached)."""
    from scipy.sparse.csgraph import dijkstra

    from sssp.cpu.reference import min_weight_csr

    return dijkstra(min_weight_csr(graph), directed=True, indices=np.asarray(sources))


def as_dtype(ref: np.ndarray, dtype) -> np.ndarray:
    """SciPy's rows in a table dtype: inf stays inf in floats, the largest value in integers."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return ref.astype(dtype)
    out = np.where(np.isfinite(ref), ref, 0).astype(dtype)
    out[~np.isfinite(ref)] = np.iinfo(dtype).max
    return out
