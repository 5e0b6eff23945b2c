"""SNAP edge-list reader (``.txt``, ``.edges``, ``.el``, ``.snap``).

Format: ``#`` (or ``%``) comment lines, then one arc per line, ``u v`` or ``u v w`` separated by
whitespace; every arc line must have the same number of fields (2 or 3). Node ids are arbitrary
non-negative integers. Nodes are numbered densely in increasing id order (node ``i`` is the
``i``-th smallest id that occurs) and the file's ids are kept as the graph's labels
(:attr:`sssp.graph.Graph.labels`; None when the ids are exactly 0..n-1), so the command line and
the results speak in the file's ids. The optional third column is a non-negative weight, integer
or real (``1.5``, ``2e-3``): a file that writes any real weight gives a graph with float64
weights. Arcs are directed as given: a file that lists each undirected pair once stays
one-directional (SNAP's own convention for its "directed" files); files that list both
directions give both arcs. The file is read in blocks (:func:`~sssp.formats._textio.iter_texts`).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import numpy as np

from ..errors import GraphFormatError
from ._textio import (
    EdgeList,
    HeaviestWeight,
    compact_ids,
    first_bad,
    iter_texts,
    join,
    join_weights,
)

__all__ = ["parse", "remap_ids"]

_COMMENTS = np.array([ord("#"), ord("%")], dtype=np.uint8)
#: An edge line is "u v [w]": no well-formed one comes near this length.
MAX_LINE = 1 << 16


def remap_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense renumbering of non-negative ids in increasing id order.

    Parameters
    ----------
    ids : ndarray, integer

    Returns
    -------
    (ndarray, ndarray)
        ``node_ids`` (int64, sorted distinct ids, shape (n,)) and ``dense`` (int32 when it fits,
        same shape as ``ids``) with ``node_ids[dense] == ids``.
    """
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    top = int(ids.max())
    if top < max(1 << 20, 8 * ids.size):  # small id space: presence table, O(ids + top)
        present = np.zeros(top + 1, dtype=bool)
        present[ids] = True
        node_ids = np.flatnonzero(present).astype(np.int64)
        # int32 ranks when they fit: rank[ids] is the largest array of the reader (one per id)
        rank: np.ndarray = np.cumsum(
            present, dtype=np.int32 if node_ids.size <= np.iinfo(np.int32).max else np.int64
        )
        rank -= 1
        del present
        return node_ids, rank[ids]
    node_ids, dense = np.unique(ids, return_inverse=True)
    return node_ids.astype(np.int64), compact_ids(dense.reshape(ids.shape))


def parse(source: bytes | IO[bytes], path: str | Path | None = None) -> EdgeList:
    """Parse a SNAP edge list into arcs.

    Parameters
    ----------
    source : bytes or binary file
        The decompressed file content, or a stream of it.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` = number of distinct ids; int32 dense ``src``/``dst`` in file order; int64 (or
        float64) ``weights`` if a third column exists, else None; ``directed_from =
        "directed"``; ``labels`` the file's ids (int64, sorted), None when they are 0..n-1.

    Raises
    ------
    GraphFormatError
        No arc lines, a token that is not a number, a real-valued id, a line with a field count
        other than that of the first arc line (2 or 3), a negative id or a negative weight.
    """
    width: int | None = None
    first_line = 0
    id_parts: list[np.ndarray] = []
    w_parts: list[np.ndarray] = []
    heaviest = HeaviestWeight()
    for text in iter_texts(source, path, max_line=MAX_LINE):
        text.blank_lines(np.isin(text.first_bytes(), _COMMENTS))
        toks = text.tokenize(allow_float=True)
        counts = toks.line_counts
        rows = np.flatnonzero(counts)
        if rows.size == 0:
            continue
        if width is None:
            width = int(counts[rows[0]])
            first_line = text.line_base + int(rows[0]) + 1
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
                f"(line {first_line}) has {width}: {text.line_text(r)!r}",
                row=r,
            )
        index = np.arange(toks.values.size, dtype=np.int64).reshape(-1, width)
        ends = toks.check_integral(text, index[:, :2], "node id")
        neg = ends < 0
        bad = first_bad(neg.any(axis=1))
        if bad is not None:
            raise text.error(
                f"node id {int(ends[bad][neg[bad]][0])} is negative", row=int(rows[bad])
            )
        id_parts.append(compact_ids(ends.reshape(-1)))
        del ends, index
        if width == 3:
            weights = np.ascontiguousarray(toks.values[2::3])
            bad = first_bad(weights < 0)
            if bad is not None:
                raise text.error(f"negative edge weight {weights[bad].item()}", row=int(rows[bad]))
            w_parts.append(weights)
            heaviest.update(text, weights, rows)
    if width is None:
        raise GraphFormatError(path, "empty file: no edge lines 'u v [w]'")
    ids = join(id_parts)
    del id_parts
    node_ids, dense = remap_ids(ids)
    del ids
    dense = dense.reshape(-1, 2)
    src, dst = np.ascontiguousarray(dense[:, 0]), np.ascontiguousarray(dense[:, 1])
    del dense
    heaviest.check(int(node_ids.size), path)
    identity = node_ids.size == 0 or int(node_ids[-1]) == node_ids.size - 1
    return EdgeList(
        n=int(node_ids.size),
        src=src,
        dst=dst,
        weights=join_weights(w_parts) if width == 3 else None,
        directed_from="directed",
        meta={},
        labels=None if identity else node_ids,
    )
