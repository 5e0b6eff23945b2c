"""DIMACS9 shortest-path ``.gr`` reader.

Format: ``c`` comment lines, one problem line ``p sp n m``, then ``m`` arc lines ``a u v w``
(1-based ids, directed arcs, non-negative weight ``w``: an integer, or a real number such as
``2.5``, which gives the graph float64 weights). Blank lines are ignored; any other line is an
error. Arcs are kept as given (parallel arcs and self-loops included). The graph's labels are
the file's ids 1..n. The file is read in blocks (:func:`~sssp.formats._textio.iter_texts`).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import numpy as np

from ..errors import GraphFormatError
from ._textio import (
    EdgeList,
    HeaviestWeight,
    check_declared,
    compact_ids,
    first_bad,
    iter_texts,
    join,
    join_weights,
    one_based,
)

__all__ = ["parse"]

_C, _P, _A = ord("c"), ord("p"), ord("a")
_WS = np.array([9, 10, 11, 12, 13, 32], dtype=np.uint8)
#: An arc line is "a u v w": no well-formed one comes near this length.
MAX_LINE = 1 << 16


def parse(source: bytes | IO[bytes], path: str | Path | None = None) -> EdgeList:
    """Parse DIMACS9 ``.gr`` text into arcs.

    Parameters
    ----------
    source : bytes or binary file
        The decompressed file content, or a stream of it.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` nodes; int32 0-based ``src``/``dst`` and int64 (or float64) ``weights`` in file
        order; ``directed_from = "directed"``; ``labels`` 1..n.

    Raises
    ------
    GraphFormatError
        Empty file, missing/duplicate/malformed problem line, arc before the problem line, a
        line that is not ``c``/``p``/``a``, an arc line without exactly three numbers, a
        real-valued id, an id outside ``[1, n]``, a negative weight, an arc count different
        from ``m``, or sizes that ``m`` cannot back or memory cannot hold
        (:func:`~sssp.formats._textio.check_declared`, checked on the problem line).
    """
    n = m = -1
    p_line = 0
    count = 0
    src_parts: list[np.ndarray] = []
    dst_parts: list[np.ndarray] = []
    w_parts: list[np.ndarray] = []
    heaviest = HeaviestWeight()
    for text in iter_texts(source, path, max_line=MAX_LINE):
        first = text.first_bytes()
        # A line type is its first byte, which must be followed by whitespace (or end the line).
        second = np.full(text.n_lines, 10, dtype=np.uint8)
        has2 = text.line_starts + 1 < text.arr.size
        second[has2] = text.arr[text.line_starts[has2] + 1]
        sep_ok = np.isin(second, _WS)
        is_c = first == _C
        is_p = (first == _P) & sep_ok
        is_a = (first == _A) & sep_ok
        bad = first_bad(~(is_c | is_p | is_a | np.isin(first, _WS)))
        if bad is not None:
            raise text.error(
                f"expected a 'c', 'p sp' or 'a' line, got {text.line_text(bad)!r}", row=bad
            )
        p_rows = np.flatnonzero(is_p)
        if p_rows.size and (n >= 0 or p_rows.size > 1):
            row = int(p_rows[0] if n >= 0 else p_rows[1])
            raise text.error("second problem line (one 'p sp n m' allowed)", row=row)
        if p_rows.size:
            prow = int(p_rows[0])
            n, m = _problem_line(text, prow)
            p_line = text.line_base + prow + 1
            bad = first_bad(is_a[:prow])
        else:
            bad = first_bad(is_a) if n < 0 else None
        if bad is not None:
            raise text.error("arc line before the problem line 'p sp n m'", row=bad)
        text.blank_lines(is_c | is_p)
        a_rows = np.flatnonzero(is_a)
        if a_rows.size == 0 and not np.any(~(is_c | is_p) & (first != 10)):
            continue  # only comments, the problem line and empty lines
        text.overwrite(text.line_starts[a_rows], 32)  # drop the 'a' tags
        toks = text.tokenize(allow_float=True)
        wrong = np.where(is_a, toks.line_counts != 3, toks.line_counts != 0)
        bad = first_bad(wrong)
        if bad is not None:
            what = "arc line must be 'a u v w'" if is_a[bad] else "line without an 'a' tag"
            raise text.error(f"{what}, got {text.line_text(bad)!r}", row=bad)
        if a_rows.size == 0:
            continue
        index = np.arange(toks.values.size, dtype=np.int64).reshape(-1, 3)
        ids = toks.check_integral(text, index[:, :2], "node id")
        out = (ids < 1) | (ids > n)
        bad = first_bad(out.any(axis=1))
        if bad is not None:
            val = int(ids[bad][out[bad]][0])
            raise text.error(f"node id {val} is out of range [1, {n}]", row=int(a_rows[bad]))
        weights = np.ascontiguousarray(toks.values[2::3])
        bad = first_bad(weights < 0)
        if bad is not None:
            raise text.error(f"negative arc weight {weights[bad].item()}", row=int(a_rows[bad]))
        count += a_rows.size
        if count > m:
            raise text.error(
                f"more arcs than the m = {m} declared on the problem line (line {p_line})",
                row=int(a_rows[a_rows.size - (count - m)]),
            )
        src_parts.append(compact_ids(ids[:, 0] - 1))
        dst_parts.append(compact_ids(ids[:, 1] - 1))
        w_parts.append(weights)
        heaviest.update(text, weights, a_rows)
    if n < 0:
        raise GraphFormatError(
            path, "empty file: no problem line 'p sp n m' (only comments or blanks)"
        )
    if count != m:
        raise GraphFormatError(
            path, f"the problem line declares m = {m} arcs but the file has {count}", line=p_line
        )
    heaviest.check(n, path)
    return EdgeList(
        n=n,
        src=join(src_parts),
        dst=join(dst_parts),
        weights=join_weights(w_parts),
        directed_from="directed",
        meta={},
        labels=one_based(n),
    )


def _problem_line(text, row: int) -> tuple[int, int]:
    fields = text.line_bytes(row).split()  # ASCII whitespace, as the tokenizer splits
    if len(fields) != 4 or fields[1] != b"sp":
        raise text.error(f"problem line must be 'p sp n m', got {text.line_text(row)!r}", row=row)
    if not all(f.isdigit() and len(f) < 19 for f in fields[2:]):
        raise text.error(
            f"problem line must be 'p sp n m' with integers, got {text.line_text(row)!r}", row=row
        )
    n, m = int(fields[2]), int(fields[3])
    check_declared(n, m, text.path, line=text.line_base + row + 1)
    return n, m
