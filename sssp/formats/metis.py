"""METIS / DIMACS10 ``.graph`` reader.

Format: ``%`` comment lines anywhere (a ``%`` as the first byte of a line); the first other
non-blank line is the header ``n m [fmt [ncon]]``; then exactly ``n`` vertex lines (blank lines
count: a blank line is a vertex without neighbours), vertex ``i`` on the ``i``-th, listing its
1-based neighbours. Trailing blank lines after the ``n``-th vertex line are ignored.

``fmt`` has up to three digits ``abc`` (leading zeros optional): ``c = 1`` edge weights (the list
becomes ``v w v w ...``), ``b = 1`` ``ncon`` vertex weights (default 1) at the start of each line,
``a = 1`` one vertex size at the start of each line (before the weights). Vertex sizes and
weights are validated as integers and skipped. Edge weights must be non-negative integers.

The graph is undirected: every edge is listed from both ends, so ``m`` counts undirected edges
and the directed graph has one arc per neighbour entry. Self-loops: a self-loop ``{v, v}`` is
accepted when listed once in ``v``'s line (it is one edge and becomes one arc ``v -> v``), which
is the convention of DIMACS10's ``kron_g500`` graphs; listing it twice is accepted too (two arcs,
counted as one edge each half). So the header must satisfy ``2 m == entries + loops`` (once) or
``2 m == entries`` (twice), where ``entries`` is the number of neighbour entries and ``loops`` the
number of entries ``v`` in ``v``'s own line. As a cheap consistency check every vertex must
appear in as many lists as it has neighbours (in-degree == out-degree); a full pairwise symmetry
check (and equal weights on both directions) is not made.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._text import EdgeList, Text, check_node_count, first_bad

__all__ = ["parse"]

_COMMENT = ord("%")
_VALID_FMT = {0, 1, 10, 11, 100, 101, 110, 111}


def parse(data: bytes, path: str | Path | None = None) -> EdgeList:
    """Parse METIS text into arcs.

    Parameters
    ----------
    data : bytes
        The decompressed file content.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` nodes; int64 0-based ``src``/``dst`` with both directions of every edge, in file
        order (``src`` non-decreasing); int64 ``weights`` when ``fmt`` has ``c = 1``, else None;
        ``directed_from = "undirected"``; meta with ``fmt`` (3-digit string) and ``self_loops``.

    Raises
    ------
    GraphFormatError
        Empty file, bad header, non-integer token, too few or too many vertex lines, a line
        whose token count does not fit ``fmt``, neighbour id outside ``[1, n]``, negative edge
        weight, ``m`` disagreeing with the neighbour lists, or asymmetric degrees.
    """
    text = Text(data, path)
    comment = text.first_bytes() == _COMMENT
    text.blank_lines(comment)
    toks = text.tokenize()
    counts = toks.line_counts
    values = toks.values

    # -- header ---------------------------------------------------------------------------------
    h = first_bad(counts > 0)
    if h is None:
        raise text.error("empty file: no METIS header line 'n m [fmt [ncon]]'")
    k = int(counts[h])
    hline = h + 1
    if k < 2 or k > 4:
        raise text.error(
            f"header must be 'n m [fmt [ncon]]', got {k} field(s): {text.line_text(h)!r}", row=h
        )
    header = [int(v) for v in values[:k]]
    n, m = header[0], header[1]
    fmt = header[2] if k > 2 else 0
    if m < 0:
        raise text.error(f"edge count m = {m} is negative", row=h)
    check_node_count(n, len(data), path, line=hline)
    if fmt not in _VALID_FMT:
        raise text.error(f"invalid fmt {fmt}: expected up to three 0/1 digits 'abc'", row=h)
    has_size, has_vwgt, has_ewgt = fmt // 100, (fmt // 10) % 10, fmt % 10
    ncon = header[3] if k > 3 else 1
    if ncon < 1:
        raise text.error(f"ncon = {ncon} must be at least 1", row=h)
    skip = has_size + (ncon if has_vwgt else 0)

    # -- vertex lines ---------------------------------------------------------------------------
    body = np.flatnonzero(~comment[h + 1 :]) + (h + 1)
    if body.size < n:
        raise text.error(
            f"truncated: the header declares n = {n} vertex lines but only {body.size} follow",
            row=h,
        )
    extra = body[n:]
    bad = first_bad(counts[extra] > 0)
    if bad is not None:
        raise text.error(
            f"more vertex lines than the n = {n} declared in the header (line {hline})",
            row=int(extra[bad]),
        )
    vlines = body[:n]
    vcount = counts[vlines]
    body_values = values[k:]

    rem = vcount - skip
    bad = first_bad(rem < 0)
    if bad is not None:
        raise text.error(
            f"vertex {bad + 1} has {int(vcount[bad])} field(s) but fmt {fmt:03d} needs {skip} "
            f"leading vertex size/weight field(s)",
            row=int(vlines[bad]),
        )
    if has_ewgt:
        bad = first_bad(rem % 2 != 0)
        if bad is not None:
            raise text.error(
                f"vertex {bad + 1}: odd number ({int(rem[bad])}) of fields in its "
                f"'neighbour weight' list (fmt {fmt:03d})",
                row=int(vlines[bad]),
            )
    degree = rem // 2 if has_ewgt else rem
    src = np.repeat(np.arange(n, dtype=np.int64), degree)
    weights = None
    if skip == 0 and not has_ewgt:
        dst = body_values - 1
    else:
        pos = np.arange(body_values.size, dtype=np.int64) - np.repeat(np.cumsum(vcount) - vcount, vcount)
        q = pos - skip
        if has_ewgt:
            dst = body_values[(q >= 0) & (q % 2 == 0)] - 1
            weights = body_values[(q >= 0) & (q % 2 == 1)]
        else:
            dst = body_values[q >= 0] - 1
    bad = first_bad((dst < 0) | (dst >= n))
    if bad is not None:
        v = int(src[bad])
        raise text.error(
            f"neighbour id {int(dst[bad]) + 1} of vertex {v + 1} is out of range [1, {n}]",
            row=int(vlines[v]),
        )
    if weights is not None:
        bad = first_bad(weights < 0)
        if bad is not None:
            v = int(src[bad])
            raise text.error(
                f"negative edge weight {int(weights[bad])} on edge {v + 1} -- {int(dst[bad]) + 1}",
                row=int(vlines[v]),
            )

    # -- counts ---------------------------------------------------------------------------------
    entries = int(dst.size)
    loops = int(np.count_nonzero(src == dst))
    if 2 * m not in (entries + loops, entries):
        raise text.error(
            f"the header declares m = {m} edges but the vertex lines hold {entries} neighbour "
            f"entries with {loops} self-loop(s); expected 2m - loops = {2 * m - loops} entries",
            row=h,
        )
    indeg = np.bincount(dst, minlength=n) if n else np.zeros(0, dtype=np.int64)
    bad = first_bad(indeg != degree)
    if bad is not None:
        raise text.error(
            f"not undirected: vertex {bad + 1} lists {int(degree[bad])} neighbour(s) but appears "
            f"in {int(indeg[bad])} neighbour list(s)",
            row=int(vlines[bad]),
        )
    return EdgeList(
        n=n,
        src=src,
        dst=dst,
        weights=weights,
        directed_from="undirected",
        meta={"fmt": f"{fmt:03d}", "self_loops": loops, "undirected_edges": m},
    )
