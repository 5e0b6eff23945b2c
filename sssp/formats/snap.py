"""SNAP edge-list reader (``.txt``, ``.edges``, ``.el``, ``.snap``).

Format: ``#`` (or ``%``) comment lines, then one arc per line, ``u v`` or ``u v w`` separated by
whitespace; every arc line must have the same number of fields (2 or 3). Node ids are arbitrary
non-negative integers; they are remapped densely in increasing id order (dense node ``i`` is the
``i``-th smallest id that occurs) and the original ids are kept in ``meta["node_ids"]``. The
optional third column is a non-negative integer weight. Arcs are directed as given: a file that
lists each undirected pair once stays one-directional (SNAP's own convention for its "directed"
files); files that list both directions give both arcs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._text import EdgeList, Text, first_bad

__all__ = ["parse", "remap_ids"]

_COMMENTS = np.array([ord("#"), ord("%")], dtype=np.uint8)


def remap_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense renumbering of non-negative ids in increasing id order.

    Parameters
    ----------
    ids : ndarray, int64

    Returns
    -------
    (ndarray, ndarray)
        ``node_ids`` (int64, sorted distinct ids, shape (n,)) and ``dense`` (int64, same shape as
        ``ids``) with ``node_ids[dense] == ids``.
    """
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    top = int(ids.max())
    if top < max(1 << 20, 8 * ids.size):  # small id space: presence table, O(ids + top)
        present = np.zeros(top + 1, dtype=bool)
        present[ids] = True
        node_ids = np.flatnonzero(present).astype(np.int64)
        rank = np.cumsum(present, dtype=np.int64) - 1
        return node_ids, rank[ids]
    node_ids, dense = np.unique(ids, return_inverse=True)
    return node_ids.astype(np.int64), dense.reshape(ids.shape).astype(np.int64)


def parse(data: bytes, path: str | Path | None = None) -> EdgeList:
    """Parse a SNAP edge list into arcs.

    Parameters
    ----------
    data : bytes
        The decompressed file content.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` = number of distinct ids; int64 dense ``src``/``dst`` in file order; int64
        ``weights`` if a third column exists, else None; ``directed_from = "directed"``;
        meta ``node_ids`` (read-only int64 array, the original id of each dense node).

    Raises
    ------
    GraphFormatError
        No arc lines, a non-integer token, a line with a field count other than that of the
        first arc line (2 or 3), a negative id or a negative weight.
    """
    text = Text(data, path)
    text.blank_lines(np.isin(text.first_bytes(), _COMMENTS))
    toks = text.tokenize()
    counts = toks.line_counts
    rows = np.flatnonzero(counts)
    if rows.size == 0:
        raise text.error("empty file: no edge lines 'u v [w]'")
    width = int(counts[rows[0]])
    if width not in (2, 3):
        raise text.error(
            f"edge line must be 'u v' or 'u v w', got {text.line_text(int(rows[0]))!r}",
            row=int(rows[0]),
        )
    bad = first_bad(counts[rows] != width)
    if bad is not None:
        r = int(rows[bad])
        raise text.error(
            f"edge line has {int(counts[r])} field(s), but the first edge line "
            f"(line {int(rows[0]) + 1}) has {width}: {text.line_text(r)!r}",
            row=r,
        )
    table = toks.values.reshape(-1, width)
    ends = table[:, :2]
    neg = ends < 0
    bad = first_bad(neg.any(axis=1))
    if bad is not None:
        raise text.error(f"node id {int(ends[bad][neg[bad]][0])} is negative", row=int(rows[bad]))
    weights = None
    if width == 3:
        weights = np.ascontiguousarray(table[:, 2])
        bad = first_bad(weights < 0)
        if bad is not None:
            raise text.error(f"negative edge weight {int(weights[bad])}", row=int(rows[bad]))
    node_ids, dense = remap_ids(ends.reshape(-1))
    dense = dense.reshape(-1, 2)
    node_ids.flags.writeable = False
    return EdgeList(
        n=int(node_ids.size),
        src=np.ascontiguousarray(dense[:, 0]),
        dst=np.ascontiguousarray(dense[:, 1]),
        weights=weights,
        directed_from="directed",
        meta={"node_ids": node_ids},
    )
