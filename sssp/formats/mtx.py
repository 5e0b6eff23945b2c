"""Matrix Market ``.mtx`` reader, validated strictly and parsed here (not by ``scipy.io.mmread``,
which crashes the process on some malformed files and reads ``12abc`` as 12).

Accepted: the banner ``%%MatrixMarket matrix coordinate <field> <symmetry>`` (words
case-insensitive), ``%`` comment lines and blank lines, the size line ``rows cols entries``
(integers, square), then exactly ``entries`` entry lines ``i j`` (field ``pattern``) or ``i j v``
(fields ``integer``, ``real``/``double``), with 1-based integer indices in ``[1, rows]`` and a
value that is a number of the declared field (an integer for ``integer``; any decimal number for
``real``), non-negative. Nothing but comments and blank lines may follow the last entry.
Symmetry ``general``: entry ``(i, j)`` is the arc ``i -> j``; ``symmetric``: both arcs (a
diagonal entry gives one self-loop). Explicit zeros are zero-weight arcs. Fields: ``pattern``
gives an unweighted graph, ``integer`` int64 weights, ``real`` float64 weights. ``array`` (dense)
matrices, ``complex`` values and ``skew-symmetric``/``hermitian`` matrices are rejected. The
graph's labels are the file's indices 1..n.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import numpy as np

from ..errors import GraphFormatError
from ._textio import (
    EdgeList,
    HeaviestWeight,
    Text,
    check_declared,
    compact_ids,
    first_bad,
    iter_texts,
    join,
    join_weights,
    one_based,
)

__all__ = ["BANNER", "parse"]

BANNER = b"%%MatrixMarket"
_COMMENT = ord("%")
_FIELDS = {"pattern": "pattern", "integer": "integer", "real": "real", "double": "real"}
#: An entry line is "i j [v]": no well-formed one comes near this length.
MAX_LINE = 1 << 16


def _banner(text: Text, path: str | Path | None) -> tuple[str, str]:
    line = text.line_text(0, limit=200)
    try:  # ASCII whitespace only, as the tokenizer splits
        words = [w.decode("ascii") for w in text.line_bytes(0).split()]
    except UnicodeDecodeError:
        raise GraphFormatError(path, f"banner must be ASCII, got {line!r}", line=1) from None
    if not text.data.startswith(BANNER) or not words or words[0] != BANNER.decode():
        raise GraphFormatError(
            path, "not a Matrix Market file: missing '%%MatrixMarket' banner", line=1
        )
    if len(words) != 5:
        raise GraphFormatError(
            path,
            f"banner must be '%%MatrixMarket matrix coordinate <field> <symmetry>', got {line!r}",
            line=1,
        )
    obj, layout, field, symmetry = (w.lower() for w in words[1:])
    if obj != "matrix":
        raise GraphFormatError(
            path, f"object '{words[1]}' is not supported; expected 'matrix'", line=1
        )
    if layout != "coordinate":
        raise GraphFormatError(
            path, f"'{words[2]}' (dense) matrices are not graphs; expected 'coordinate'", line=1
        )
    if field not in _FIELDS:
        raise GraphFormatError(
            path,
            f"field '{words[3]}' cannot hold edge weights; expected pattern, integer or real",
            line=1,
        )
    if symmetry not in ("general", "symmetric"):
        raise GraphFormatError(
            path, f"symmetry '{words[4]}' is not supported; expected general or symmetric", line=1
        )
    return _FIELDS[field], symmetry


def parse(source: bytes | IO[bytes], path: str | Path | None = None) -> EdgeList:
    """Parse Matrix Market text into arcs.

    Parameters
    ----------
    source : bytes or binary file
        The decompressed file content, or a stream of it.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` = matrix order; int32 0-based ``src``/``dst`` (rows/columns; a symmetric file's
        mirrored arcs follow the stored ones); int64 (``integer``) or float64 (``real``)
        ``weights``, None for ``pattern``; ``directed_from`` is ``"undirected"`` for
        symmetric, ``"directed"`` for general matrices; meta ``field`` and ``symmetry``;
        ``labels`` 1..n.

    Raises
    ------
    GraphFormatError
        Missing or malformed banner, a matrix kind that cannot be a graph, a malformed size
        line, a token that is not a number of the declared field, an entry line with the wrong
        number of fields, an index out of range, a negative value, or an entry count other than
        the declared one. Messages name the file and line.
    """
    field = symmetry = ""
    width = 0
    rows = entries = -1
    size_line = 0
    count = 0
    src_parts: list[np.ndarray] = []
    dst_parts: list[np.ndarray] = []
    w_parts: list[np.ndarray] = []
    heaviest = HeaviestWeight()
    first = True
    for text in iter_texts(source, path, max_line=MAX_LINE):
        if first:
            first = False
            field, symmetry = _banner(text, path)
            width = 2 if field == "pattern" else 3
        text.blank_lines(text.first_bytes() == _COMMENT)
        # Values of a real field are reals however they are written (1000000000000000000 as 1e18).
        toks = text.tokenize(allow_float=True, exact_integers=field != "real")
        counts = toks.line_counts
        lines = np.flatnonzero(counts)
        tok0 = 0
        if rows < 0:
            if lines.size == 0:
                continue
            s = int(lines[0])
            if counts[s] != 3:
                raise text.error(
                    f"size line must be 'rows cols entries', got {text.line_text(s)!r}", row=s
                )
            rows, cols, entries = (
                int(v) for v in toks.check_integral(text, np.arange(3), "matrix size")
            )
            size_line = text.line_base + s + 1
            if rows != cols:
                raise text.error(f"adjacency matrix must be square, got {rows} x {cols}", row=s)
            if entries < 0:
                raise text.error(f"entry count {entries} is negative", row=s)
            check_declared(
                rows,
                entries,
                path,
                line=size_line,
                arcs_word="entries",
                stored_arcs=2 * entries if symmetry == "symmetric" else entries,
            )
            lines, tok0 = lines[1:], 3
        if lines.size == 0:
            continue
        bad = first_bad(counts[lines] != width)
        if bad is not None:
            r = int(lines[bad])
            raise text.error(
                f"entry line must hold {width} numbers ('i j{'' if width == 2 else ' v'}') for field "
                f"'{field}', got {text.line_text(r)!r}",
                row=r,
            )
        if count + lines.size > entries:
            r = int(lines[entries - count])
            raise text.error(
                f"more entries than the {entries} declared on the size line (line {size_line}); "
                "nothing may follow the last entry",
                row=r,
            )
        count += lines.size
        index = np.arange(tok0, tok0 + width * lines.size, dtype=np.int64).reshape(-1, width)
        ij = toks.check_integral(text, index[:, :2], "row/column index")
        out = (ij < 1) | (ij > rows)
        bad = first_bad(out.any(axis=1))
        if bad is not None:
            raise text.error(
                f"index {int(ij[bad][out[bad]][0])} is out of range [1, {rows}]",
                row=int(lines[bad]),
            )
        if width == 3:
            if field == "integer":
                vals = toks.check_integral(text, index[:, 2], "integer value")
            else:
                vals = np.ascontiguousarray(toks.values[index[:, 2]], dtype=np.float64)
            bad = first_bad(vals < 0)
            if bad is not None:
                raise text.error(f"negative weight {vals[bad].item()}", row=int(lines[bad]))
            w_parts.append(vals)
            heaviest.update(text, vals, lines)
        src_parts.append(compact_ids(ij[:, 0] - 1))
        dst_parts.append(compact_ids(ij[:, 1] - 1))
    if first:
        raise GraphFormatError(
            path, "empty file: not a Matrix Market file (no '%%MatrixMarket' banner)"
        )
    if rows < 0:
        raise GraphFormatError(path, "truncated: no size line 'rows cols entries' after the banner")
    if count != entries:
        raise GraphFormatError(
            path,
            f"truncated: the size line declares {entries} entries but the file has {count}",
            line=size_line,
        )
    heaviest.check(rows, path)
    src, dst = join(src_parts), join(dst_parts)
    weights = None
    if width == 3:
        weights = join_weights(w_parts)
        if field == "real":
            weights = weights.astype(np.float64, copy=False)
    if symmetry == "symmetric":
        off = src != dst
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
        if weights is not None:
            weights = np.concatenate([weights, weights[off]])
    return EdgeList(
        n=rows,
        src=src,
        dst=dst,
        weights=weights,
        directed_from="undirected" if symmetry == "symmetric" else "directed",
        meta={"field": field, "symmetry": symmetry},
        labels=one_based(rows),
    )
