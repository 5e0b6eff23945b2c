"""Matrix Market ``.mtx`` reader (through :func:`scipy.io.mmread`).

Accepted: ``coordinate`` matrices, square, field ``pattern`` (unweighted), ``integer`` or
``real`` with integral non-negative values (weighted), symmetry ``general`` (entry ``(i, j)`` is
the arc ``i -> j``) or ``symmetric`` (both arcs; a diagonal entry gives one self-loop). Explicit
zeros are kept as zero-weight arcs. ``array`` (dense) matrices, ``complex`` values and
``skew-symmetric``/``hermitian`` matrices are rejected. SciPy's errors are re-raised as
:class:`~sssp.errors.GraphFormatError` with the line SciPy reports.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError
from ._text import EdgeList, check_node_count

__all__ = ["BANNER", "parse"]

BANNER = b"%%MatrixMarket"
_SCIPY_LINE = re.compile(r"^\s*Line (\d+):\s*(.*)$", re.DOTALL)


def _wrap(path: str | Path | None, what: str, err: Exception) -> GraphFormatError:
    msg = str(err).strip() or type(err).__name__
    found = _SCIPY_LINE.match(msg)
    if found:
        return GraphFormatError(path, f"{what}: {found.group(2)}", line=int(found.group(1)))
    return GraphFormatError(path, f"{what}: {msg}")


def parse(data: bytes, path: str | Path | None = None) -> EdgeList:
    """Parse Matrix Market text into arcs.

    Parameters
    ----------
    data : bytes
        The decompressed file content.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` = matrix order; int64 0-based ``src``/``dst`` (rows/columns); int64 ``weights``
        for ``integer``/``real`` fields, None for ``pattern``; ``directed_from`` is
        ``"undirected"`` for symmetric, ``"directed"`` for general matrices; meta ``field`` and
        ``symmetry``.

    Raises
    ------
    GraphFormatError
        Missing banner, a matrix kind that cannot be a graph (array, complex, skew-symmetric,
        hermitian, non-square), non-integral or negative values, or any error SciPy reports
        (with its line).
    """
    import scipy.io
    import scipy.sparse as sp

    if not data.startswith(BANNER):
        raise GraphFormatError(path, "not a Matrix Market file: missing '%%MatrixMarket' banner", line=1)
    try:
        rows, cols, entries, layout, field, symmetry = scipy.io.mminfo(io.BytesIO(data))
    except Exception as err:  # SciPy/fast_matrix_market raise assorted types on bad headers
        raise _wrap(path, "bad Matrix Market header", err) from err
    if layout != "coordinate":
        raise GraphFormatError(path, f"'{layout}' (dense) matrices are not graphs; expected 'coordinate'")
    if rows != cols:
        raise GraphFormatError(path, f"adjacency matrix must be square, got {rows} x {cols}")
    if field not in ("pattern", "integer", "real"):
        raise GraphFormatError(path, f"field '{field}' cannot hold edge weights; expected pattern, integer or real")
    if symmetry not in ("general", "symmetric"):
        raise GraphFormatError(path, f"symmetry '{symmetry}' is not supported; expected general or symmetric")
    check_node_count(int(rows), len(data), path, line=None)
    if entries < 0 or entries * 4 > len(data):  # every entry line needs at least "i j\n"
        raise GraphFormatError(
            path, f"truncated: the size line declares {entries} entries, too many for {len(data)} bytes"
        )
    try:
        matrix = scipy.io.mmread(io.BytesIO(data))
    except Exception as err:  # ValueError, OverflowError, ... from the C++ reader
        raise _wrap(path, "malformed Matrix Market data", err) from err
    if not sp.issparse(matrix):
        raise GraphFormatError(path, "expected a sparse coordinate matrix from scipy.io.mmread")
    coo = sp.coo_matrix(matrix)
    src = coo.row.astype(np.int64)
    dst = coo.col.astype(np.int64)
    weights = None
    if field != "pattern":
        vals = np.asarray(coo.data)
        if vals.dtype.kind == "f":
            bad = ~np.isfinite(vals) | (vals != np.round(vals))
            if bad.any():
                i = int(np.argmax(bad))
                raise GraphFormatError(
                    path, f"non-integral weight {vals[i]!r} at entry ({src[i] + 1}, {dst[i] + 1})"
                )
            if vals.size and np.abs(vals).max() >= 2.0**62:
                i = int(np.argmax(np.abs(vals)))
                raise GraphFormatError(path, f"weight {vals[i]!r} at entry ({src[i] + 1}, {dst[i] + 1}) is too large")
        weights = vals.astype(np.int64)
        neg = weights < 0
        if neg.any():
            i = int(np.argmax(neg))
            raise GraphFormatError(
                path, f"negative weight {weights[i]} at entry ({src[i] + 1}, {dst[i] + 1})"
            )
    return EdgeList(
        n=int(rows),
        src=src,
        dst=dst,
        weights=weights,
        directed_from="undirected" if symmetry == "symmetric" else "directed",
        meta={"field": field, "symmetry": symmetry},
    )
