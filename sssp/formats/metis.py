"""METIS / DIMACS10 ``.graph`` reader.

Format: ``%`` comment lines anywhere (a ``%`` as the first byte of a line); the first other
non-blank line is the header ``n m [fmt [ncon]]``; then exactly ``n`` vertex lines (blank lines
count: a blank line is a vertex without neighbours), vertex ``i`` on the ``i``-th, listing its
1-based neighbours. Trailing blank lines after the ``n``-th vertex line are ignored.

``fmt`` has up to three digits ``abc`` (leading zeros optional): ``c = 1`` edge weights (the list
becomes ``v w v w ...``), ``b = 1`` ``ncon`` vertex weights (default 1) at the start of each line,
``a = 1`` one vertex size at the start of each line (before the weights). Vertex sizes and
weights are validated as integers and skipped. Edge weights must be non-negative: integers, or
real numbers (``0.5``; a file that writes any gives a graph with float64 weights). The graph's
labels are the file's ids 1..n. The file is read in blocks
(:func:`~sssp.formats._textio.iter_texts`).

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

from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from ..errors import GraphFormatError
from ._textio import (
    EdgeList,
    HeaviestWeight,
    Text,
    Tokens,
    check_declared,
    compact_ids,
    first_bad,
    iter_texts,
    join,
    join_weights,
    one_based,
)

__all__ = ["parse"]

_COMMENT = ord("%")
_VALID_FMT = {0, 1, 10, 11, 100, 101, 110, 111}


@dataclass
class _Header:
    n: int
    m: int
    fmt: int
    ncon: int
    line: int

    @property
    def has_ewgt(self) -> bool:
        return self.fmt % 10 == 1

    @property
    def skip(self) -> int:
        """Leading fields of a vertex line before its neighbours: size, then ncon weights."""
        return self.fmt // 100 + (self.ncon if (self.fmt // 10) % 10 else 0)


def _header(text: Text, toks: Tokens, h: int) -> _Header:
    k = int(toks.line_counts[h])
    if k < 2 or k > 4:
        raise text.error(
            f"header must be 'n m [fmt [ncon]]', got {k} field(s): {text.line_text(h)!r}", row=h
        )
    values = toks.check_integral(text, np.arange(k), "header field")
    header = [int(v) for v in values]
    n, m = header[0], header[1]
    fmt = header[2] if k > 2 else 0
    line = text.line_base + h + 1
    if m < 0:
        raise text.error(f"edge count m = {m} is negative", row=h)
    check_declared(n, m, text.path, line=line, arcs_word="edges", stored_arcs=2 * m)
    if fmt not in _VALID_FMT:
        raise text.error(f"invalid fmt {fmt}: expected up to three 0/1 digits 'abc'", row=h)
    ncon = header[3] if k > 3 else 1
    if ncon < 1:
        raise text.error(f"ncon = {ncon} must be at least 1", row=h)
    return _Header(n, m, fmt, ncon, line)


def parse(source: bytes | IO[bytes], path: str | Path | None = None) -> EdgeList:
    """Parse METIS text into arcs.

    Parameters
    ----------
    source : bytes or binary file
        The decompressed file content, or a stream of it.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` nodes; int32 0-based ``src``/``dst`` with both directions of every edge, in file
        order (``src`` non-decreasing); int64 (or float64) ``weights`` when ``fmt`` has
        ``c = 1``, else None; ``directed_from = "undirected"``; meta with ``fmt`` (3-digit
        string), ``self_loops`` and ``undirected_edges``; ``labels`` 1..n.

    Raises
    ------
    GraphFormatError
        Empty file, bad header, a token that is not a number, a real number where an integer
        belongs, too few or too many vertex lines, a line whose token count does not fit
        ``fmt``, neighbour id outside ``[1, n]``, negative edge weight, ``m`` disagreeing with
        the neighbour lists, or asymmetric degrees.
    """
    hd: _Header | None = None
    seen = 0  # vertex lines read so far
    # Per block: the vertices with neighbours and their degrees (a vertex line without any, a
    # blank line, costs nothing until the whole file has backed the header), and where its
    # vertex lines are (for messages).
    vtx_parts: list[np.ndarray] = []
    deg_parts: list[np.ndarray] = []
    dst_parts: list[np.ndarray] = []
    w_parts: list[np.ndarray] = []
    places: list[_Lines] = []
    loops = 0
    heaviest = HeaviestWeight()
    for text in iter_texts(source, path):
        comment = text.first_bytes() == _COMMENT
        text.blank_lines(comment)
        toks = text.tokenize(allow_float=True)
        counts = toks.line_counts
        first_row = first_tok = 0
        if hd is None:
            h = first_bad(counts > 0)
            if h is None:
                continue
            hd = _header(text, toks, h)
            first_row, first_tok = h + 1, int(counts[h])
        body = np.flatnonzero(~comment[first_row:]) + first_row
        take = min(body.size, hd.n - seen)
        vlines, extra = body[:take], body[take:]
        bad = first_bad(counts[extra] > 0)
        if bad is not None:
            raise text.error(
                f"more vertex lines than the n = {hd.n} declared in the header (line {hd.line})",
                row=int(extra[bad]),
            )
        if take == 0:
            continue
        degree, dst, weights, wrows = _vertex_lines(text, toks, hd, vlines, first_tok, seen)
        nz = np.flatnonzero(degree)
        vtx = nz.astype(np.int64) + seen
        loops += int(np.count_nonzero(np.repeat(vtx, degree[nz]) == dst))
        vtx_parts.append(compact_ids(vtx))
        deg_parts.append(degree[nz])
        dst_parts.append(dst)
        places.append(_Lines.of(seen, vlines + text.line_base + 1))
        seen += take
        if weights is not None:
            w_parts.append(weights)
            heaviest.update(text, weights, wrows)
    if hd is None:
        raise GraphFormatError(path, "empty file: no METIS header line 'n m [fmt [ncon]]'")
    if seen < hd.n:
        raise GraphFormatError(
            path,
            f"truncated: the header declares n = {hd.n} vertex lines but only {seen} follow",
            line=hd.line,
        )
    dst = join(dst_parts)
    entries = int(dst.size)
    if 2 * hd.m not in (entries + loops, entries):
        raise GraphFormatError(
            path,
            f"the header declares m = {hd.m} edges but the vertex lines hold {entries} neighbour "
            f"entries with {loops} self-loop(s); expected 2m - loops = {2 * hd.m - loops} entries",
            line=hd.line,
        )
    heaviest.check(hd.n, path)
    # Only now, the file having backed the header, the arrays of n entries.
    n = hd.n
    degree = np.zeros(n, dtype=np.int64)
    if vtx_parts:
        degree[join(vtx_parts)] = join(deg_parts, np.int64)
    src = np.repeat(np.arange(n, dtype=np.int32), degree)
    indeg = np.bincount(dst, minlength=n) if n else np.zeros(0, dtype=np.int64)
    bad = first_bad(indeg != degree)
    if bad is not None:
        raise GraphFormatError(
            path,
            f"not undirected: vertex {bad + 1} lists {int(degree[bad])} neighbour(s) but appears "
            f"in {int(indeg[bad])} neighbour list(s)",
            line=_Lines.find(places, bad),
        )
    return EdgeList(
        n=n,
        src=src,
        dst=dst,
        weights=join_weights(w_parts) if hd.has_ewgt else None,
        directed_from="undirected",
        meta={"fmt": f"{hd.fmt:03d}", "self_loops": loops, "undirected_edges": hd.m},
        labels=one_based(n),
    )


@dataclass
class _Lines:
    """The file lines of one block's vertex lines: vertices ``first``, ``first + 1``, ... on
    consecutive lines from ``start`` (no comment between them, the usual case: nothing per
    vertex is kept), or on the lines ``rows``."""

    first: int
    count: int
    start: int
    rows: np.ndarray | None

    @classmethod
    def of(cls, first: int, lines: np.ndarray) -> _Lines:
        start = int(lines[0])
        contiguous = int(lines[-1]) - start == lines.size - 1
        return cls(first, int(lines.size), start, None if contiguous else lines.astype(np.int64))

    @staticmethod
    def find(places: list[_Lines], vertex: int) -> int | None:
        """The 1-based file line of 0-based ``vertex``."""
        for p in places:
            if p.first <= vertex < p.first + p.count:
                i = vertex - p.first
                return p.start + i if p.rows is None else int(p.rows[i])
        return None


def _vertex_lines(
    text: Text, toks: Tokens, hd: _Header, vlines: np.ndarray, first_tok: int, seen: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """Degrees (int64), 0-based neighbours (int32), weights (or None) and the block row of
    each weight, for the vertex lines ``vlines`` of one block (vertices ``seen``, ``seen + 1``,
    ...); their tokens start at ``first_tok``."""
    vcount = toks.line_counts[vlines]
    skip, n = hd.skip, hd.n
    ntok = int(vcount.sum())
    idx = np.arange(first_tok, first_tok + ntok, dtype=np.int64)
    rem = vcount - skip
    bad = first_bad(rem < 0)
    if bad is not None:
        raise text.error(
            f"vertex {seen + bad + 1} has {int(vcount[bad])} field(s) but fmt {hd.fmt:03d} needs "
            f"{skip} leading vertex size/weight field(s)",
            row=int(vlines[bad]),
        )
    if hd.has_ewgt:
        bad = first_bad(rem % 2 != 0)
        if bad is not None:
            raise text.error(
                f"vertex {seen + bad + 1}: odd number ({int(rem[bad])}) of fields in its "
                f"'neighbour weight' list (fmt {hd.fmt:03d})",
                row=int(vlines[bad]),
            )
    degree = rem // 2 if hd.has_ewgt else rem
    weights = None
    if skip == 0 and not hd.has_ewgt:
        nbr = idx
    else:
        pos = np.arange(ntok, dtype=np.int64) - np.repeat(np.cumsum(vcount) - vcount, vcount)
        q = pos - skip
        if skip:
            toks.check_integral(text, idx[q < 0], "vertex size/weight")
        if hd.has_ewgt:
            nbr = idx[(q >= 0) & (q % 2 == 0)]
            weights = np.ascontiguousarray(toks.values[idx[(q >= 0) & (q % 2 == 1)]])
        else:
            nbr = idx[q >= 0]
    dst = toks.check_integral(text, nbr, "neighbour id") - 1
    local_src = np.repeat(np.arange(vlines.size, dtype=np.int64), degree)
    bad = first_bad((dst < 0) | (dst >= n))
    if bad is not None:
        v = int(local_src[bad])
        raise text.error(
            f"neighbour id {int(dst[bad]) + 1} of vertex {seen + v + 1} is out of range [1, {n}]",
            row=int(vlines[v]),
        )
    if weights is not None:
        bad = first_bad(weights < 0)
        if bad is not None:
            v = int(local_src[bad])
            raise text.error(
                f"negative edge weight {weights[bad].item()} on edge {seen + v + 1} -- {int(dst[bad]) + 1}",
                row=int(vlines[v]),
            )
    wrows = vlines[local_src] if weights is not None else vlines[:0]
    return degree.astype(np.int64), compact_ids(dst), weights, wrows
