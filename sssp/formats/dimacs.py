"""DIMACS9 shortest-path ``.gr`` reader.

Format: ``c`` comment lines, one problem line ``p sp n m``, then ``m`` arc lines ``a u v w``
(1-based ids, directed arcs, non-negative integer weight ``w``). Blank lines are ignored; any
other line is an error. Arcs are kept as given (parallel arcs and self-loops included).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._text import EdgeList, Text, check_node_count, first_bad

__all__ = ["parse"]

_C, _P, _A = ord("c"), ord("p"), ord("a")
_WS = np.array([9, 10, 11, 12, 13, 32], dtype=np.uint8)


def parse(data: bytes, path: str | Path | None = None) -> EdgeList:
    """Parse DIMACS9 ``.gr`` text into arcs.

    Parameters
    ----------
    data : bytes
        The decompressed file content.
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    EdgeList
        ``n`` nodes; int64 0-based ``src``/``dst`` and int64 ``weights`` in file order;
        ``directed_from = "directed"``.

    Raises
    ------
    GraphFormatError
        Empty file, missing/duplicate/malformed problem line, arc before the problem line, a
        line that is not ``c``/``p``/``a``, an arc line without exactly three integers, an id
        outside ``[1, n]``, a negative weight, or an arc count different from ``m``.
    """
    text = Text(data, path)
    first = text.first_bytes()
    # A line type is its first byte, which must be followed by whitespace (or end the line).
    second = np.full(text.n_lines, 10, dtype=np.uint8)
    has2 = text.line_starts + 1 < text.arr.size
    second[has2] = text.arr[text.line_starts[has2] + 1]
    sep_ok = np.isin(second, _WS)
    is_c = first == _C
    is_p = (first == _P) & sep_ok
    is_a = (first == _A) & sep_ok
    blank_first = np.isin(first, _WS)
    bad = first_bad(~(is_c | is_p | is_a | blank_first))
    if bad is not None:
        raise text.error(
            f"expected a 'c', 'p sp' or 'a' line, got {text.line_text(bad)!r}", row=bad
        )
    p_rows = np.flatnonzero(is_p)
    if p_rows.size == 0:
        if not is_a.any():
            raise text.error("empty file: no problem line 'p sp n m' (only comments or blanks)")
        raise text.error("no problem line 'p sp n m' before the arcs", row=int(np.argmax(is_a)))
    if p_rows.size > 1:
        raise text.error("second problem line (one 'p sp n m' allowed)", row=int(p_rows[1]))
    prow = int(p_rows[0])
    fields = text.line_text(prow, limit=1000).split()
    if len(fields) != 4 or fields[1] != "sp":
        raise text.error(f"problem line must be 'p sp n m', got {text.line_text(prow)!r}", row=prow)
    if not all(f.isascii() and f.isdigit() for f in fields[2:]):
        raise text.error(
            f"problem line must be 'p sp n m' with integers, got {text.line_text(prow)!r}", row=prow
        )
    n, m = int(fields[2]), int(fields[3])
    check_node_count(n, len(data), path, line=prow + 1)
    bad = first_bad(is_a[:prow])
    if bad is not None:
        raise text.error("arc line before the problem line", row=bad)

    text.blank_lines(is_c | is_p)
    a_rows = np.flatnonzero(is_a)
    if a_rows.size:
        text.arr[text.line_starts[a_rows]] = 32  # drop the 'a' tag (arr is a copy after blanking)
    toks = text.tokenize()
    counts = toks.line_counts
    wrong = np.where(is_a, counts != 3, counts != 0)
    bad = first_bad(wrong)
    if bad is not None:
        what = "arc line must be 'a u v w'" if is_a[bad] else "line without an 'a' tag"
        raise text.error(f"{what}, got {text.line_text(bad)!r}", row=bad)
    arcs = toks.values.reshape(-1, 3)
    if arcs.shape[0] != m:
        raise text.error(
            f"the problem line declares m = {m} arcs but the file has {arcs.shape[0]}", row=prow
        )
    ids = arcs[:, :2]
    out = (ids < 1) | (ids > n)
    bad = first_bad(out.any(axis=1))
    if bad is not None:
        val = int(ids[bad][out[bad]][0])
        raise text.error(f"node id {val} is out of range [1, {n}]", row=int(a_rows[bad]))
    bad = first_bad(arcs[:, 2] < 0)
    if bad is not None:
        raise text.error(f"negative arc weight {int(arcs[bad, 2])}", row=int(a_rows[bad]))
    return EdgeList(
        n=n,
        src=arcs[:, 0] - 1,
        dst=arcs[:, 1] - 1,
        weights=np.ascontiguousarray(arcs[:, 2]),
        directed_from="directed",
        meta={},
    )
