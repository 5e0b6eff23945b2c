"""Shared helpers of the graph readers: (compressed) file input and a vectorised integer tokenizer.

The tokenizer works on the whole decompressed byte buffer with NumPy array operations: bytes are
classified (digit / whitespace / sign / other), token starts are found where a whitespace run
ends, tokens are counted per physical line with one ``searchsorted`` of the newline positions,
and the values are converted in C by ``np.fromstring`` (text mode) once the buffer has been
validated, with a pure NumPy fallback (digit gathers accumulated per decimal place). No Python
code runs per token or per line; Python only runs on the error path, to quote the bad token.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphFormatError

#: Compression suffixes handled transparently, mapped to the codec name.
COMPRESSION_SUFFIXES: dict[str, str] = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".lzma": "xz"}
_MAGIC: tuple[tuple[str, bytes], ...] = (
    ("gzip", b"\x1f\x8b"),
    ("bz2", b"BZh"),
    ("xz", b"\xfd7zXZ\x00"),
)
#: Integers whose magnitude reaches this bound are rejected (they cannot be node ids or weights
#: and would not survive int64 arithmetic).
MAX_ABS_INT = 10**18
#: Up to this many nodes a header is taken at its word; above it, n must be plausible for the
#: file size (at most 16 nodes per byte), so a corrupt header cannot trigger a huge allocation.
FREE_NODE_LIMIT = 1 << 26

_NL = 10
_SPACE = 32


def split_suffixes(path: str | Path) -> tuple[str, str | None]:
    """The format suffix and the compression of a file name.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    (str, str or None)
        Lower-case format suffix (``".graph"``; ``""`` if none) and the codec (``"gzip"``,
        ``"bz2"``, ``"xz"``) or None. ``"a.graph.gz"`` gives ``(".graph", "gzip")``.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    compression = COMPRESSION_SUFFIXES.get(suffix)
    if compression is not None:
        p = p.with_suffix("")
        suffix = p.suffix.lower()
    return suffix, compression


def base_name(path: str | Path) -> str:
    """File name without compression and format suffixes (``"x/3elt.graph.gz"`` -> ``"3elt"``)."""
    p = Path(path)
    if p.suffix.lower() in COMPRESSION_SUFFIXES:
        p = p.with_suffix("")
    return p.stem if p.suffix else p.name


def sniff_compression(raw: bytes) -> str | None:
    """The codec whose magic number starts ``raw``, or None."""
    for codec, magic in _MAGIC:
        if raw.startswith(magic):
            return codec
    return None


def decompress(raw: bytes, codec: str, path: str | Path | None) -> bytes:
    """Decompress ``raw`` with ``codec`` (``"gzip"``, ``"bz2"`` or ``"xz"``).

    Raises
    ------
    GraphFormatError
        The data is not a valid stream of that codec (the message names the codec).
    """
    try:
        if codec == "gzip":
            return gzip.decompress(raw)
        if codec == "bz2":
            return bz2.decompress(raw)
        if codec == "xz":
            return lzma.decompress(raw)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as err:
        raise GraphFormatError(path, f"not a valid {codec} stream: {err}") from err
    raise GraphFormatError(path, f"unknown compression {codec!r}")


def read_bytes(path: str | Path) -> bytes:
    """Read a file, decompressing it when its suffix or its magic number says so.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    bytes
        The decompressed content.

    Raises
    ------
    GraphFormatError
        The file cannot be read, or its compressed stream is corrupt.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise GraphFormatError(path, f"cannot read file: {err.strerror or err}") from err
    _, codec = split_suffixes(path)
    if codec is None:
        codec = sniff_compression(raw)
    elif sniff_compression(raw) != codec:
        raise GraphFormatError(path, f"the {Path(path).suffix!r} suffix promises {codec} data, "
                               f"but the file does not start with the {codec} magic number")
    return raw if codec is None else decompress(raw, codec, path)


def check_node_count(n: int, nbytes: int, path: str | Path | None, *, line: int | None) -> None:
    """Reject node counts that cannot be loaded (negative, beyond int32, or implausibly large
    for a file of ``nbytes`` bytes; see :data:`FREE_NODE_LIMIT`)."""
    if n < 0:
        raise GraphFormatError(path, f"node count {n} is negative", line=line)
    if n > np.iinfo(np.int32).max:
        raise GraphFormatError(path, f"node count {n} exceeds the int32 node-id range", line=line)
    if n > FREE_NODE_LIMIT and n > 16 * nbytes:
        raise GraphFormatError(
            path, f"node count {n} is implausibly large for a {nbytes}-byte file", line=line
        )


@dataclass
class EdgeList:
    """What a text reader hands to :func:`sssp.formats.load`: 0-based arcs plus provenance.

    Attributes
    ----------
    n : int
    src, dst : ndarray, int64, shape (m,)
        Arc ``src[i] -> dst[i]``, 0-based; undirected formats already list both directions.
    weights : ndarray, int64, shape (m,), or None
        Weights read from the file, or None when the file carries none.
    directed_from : str
        ``"undirected"`` (symmetric; random weights are drawn per unordered pair) or ``"directed"``.
    meta : dict
        Format-specific provenance merged into ``Graph.meta``.
    """

    n: int
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None
    directed_from: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tokens:
    """Integer tokens of a buffer, in order.

    Attributes
    ----------
    values : ndarray, int64, shape (T,)
    starts : ndarray, int64, shape (T,)
        Byte offset of each token.
    line_counts : ndarray, int64, shape (L,)
        Tokens on each physical line (``L`` = :attr:`Text.n_lines`).
    """

    values: np.ndarray
    starts: np.ndarray
    line_counts: np.ndarray

    def line_first(self) -> np.ndarray:
        """Index of the first token of each line (int64, shape (L,))."""
        return np.cumsum(self.line_counts) - self.line_counts

    def token_lines(self) -> np.ndarray:
        """0-based physical line of each token (int64, shape (T,))."""
        return np.repeat(np.arange(self.line_counts.size, dtype=np.int64), self.line_counts)


class Text:
    """A decompressed text buffer with its line table, for vectorised parsing.

    Parameters
    ----------
    data : bytes
    path : str or Path or None
        Only used in error messages.

    Lines are ``\\n``-terminated (``\\r`` is whitespace, so CRLF files work); a final newline ends
    the last line rather than starting an empty one. Line numbers in errors are 1-based and count
    every physical line, comments included.
    """

    def __init__(self, data: bytes, path: str | Path | None):
        self.data = data
        self.path = path
        self.arr = np.frombuffer(data, dtype=np.uint8)
        self._blanked = False
        self.newlines = np.flatnonzero(self.arr == _NL)
        size = self.arr.size
        self.n_lines = int(self.newlines.size + (1 if size and data[-1] != _NL else 0))
        self.line_starts = np.concatenate(([0], self.newlines + 1))[: self.n_lines]

    # -- line table -------------------------------------------------------------------------------
    def first_bytes(self) -> np.ndarray:
        """First byte of each line (uint8, shape (L,)); ``\\n`` for an empty line."""
        return self.arr[self.line_starts] if self.n_lines else np.zeros(0, dtype=np.uint8)

    def line_ends(self, rows: np.ndarray) -> np.ndarray:
        """Offset of the newline ending each line in ``rows`` (or the buffer size)."""
        rows = np.asarray(rows, dtype=np.int64)
        ends = np.full(rows.size, self.arr.size, dtype=np.int64)
        inside = rows < self.newlines.size
        ends[inside] = self.newlines[rows[inside]]
        return ends

    def line_of(self, pos: int) -> int:
        """1-based line of byte offset ``pos``."""
        return int(np.searchsorted(self.newlines, pos, side="left")) + 1

    def line_text(self, row: int, limit: int = 60) -> str:
        """The text of 0-based line ``row`` (shortened), for messages."""
        start = int(self.line_starts[row])
        end = int(self.line_ends(np.array([row]))[0])
        text = self.data[start:end].decode("utf-8", "replace").rstrip("\r")
        return text if len(text) <= limit else text[:limit] + "..."

    def token_text(self, pos: int, limit: int = 40) -> str:
        """The whitespace-delimited token around byte ``pos`` (error path only)."""
        data = self.data
        lo = pos
        while lo > 0 and pos - lo < limit and data[lo - 1] > _SPACE:
            lo -= 1
        hi = pos
        while hi < len(data) and hi - pos < limit and data[hi] > _SPACE:
            hi += 1
        return data[lo:hi].decode("utf-8", "replace")

    def blank_lines(self, rows_mask: np.ndarray) -> None:
        """Overwrite the lines selected by ``rows_mask`` (bool, shape (L,)) with spaces, keeping
        their newlines, so they hold no tokens but keep the line numbering."""
        rows = np.flatnonzero(rows_mask)
        if rows.size == 0:
            return
        starts = self.line_starts[rows]
        ends = self.line_ends(rows)
        if not self._blanked:
            self.arr = self.arr.copy()
            self._blanked = True
        # Contiguous leading block of lines (the usual header comments): one slice.
        if rows[-1] == rows.size - 1:
            block = self.arr[: ends[-1]]
            block[block != _NL] = _SPACE
            return
        lo, hi = int(starts[0]), int(ends[-1])
        delta = np.zeros(hi - lo + 1, dtype=np.int8)
        delta[starts - lo] += 1
        delta[ends - lo] -= 1
        inside = np.cumsum(delta[:-1], dtype=np.int8).view(bool)
        self.arr[lo:hi][inside] = _SPACE

    # -- tokenizer --------------------------------------------------------------------------------
    def error(self, message: str, *, pos: int | None = None, row: int | None = None) -> GraphFormatError:
        """A :class:`GraphFormatError` for this file at byte ``pos`` or 0-based line ``row``."""
        line = self.line_of(pos) if pos is not None else (None if row is None else int(row) + 1)
        return GraphFormatError(self.path, message, line=line)

    def tokenize(self, *, fast: bool = True) -> Tokens:
        """Split the buffer into whitespace-separated integers.

        Parameters
        ----------
        fast : bool
            Convert with ``np.fromstring`` (C) after validation; False forces the pure NumPy
            conversion (used by the tests to check both paths agree).

        Returns
        -------
        Tokens

        Raises
        ------
        GraphFormatError
            A token is not an optionally signed decimal integer, a control character occurs, or
            an integer's magnitude reaches ``10**18``; the message quotes the token and its line.
        """
        arr = self.arr
        if arr.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return Tokens(empty, empty, np.zeros(self.n_lines, dtype=np.int64))
        tok = arr > _SPACE
        # Control bytes other than \t \n \v \f \r are never valid.
        ctrl = (arr < 9) | ((arr - np.uint8(14)) < 18)
        if ctrl.any():
            pos = int(np.argmax(ctrl))
            raise self.error(f"unexpected control character 0x{int(arr[pos]):02x}", pos=pos)
        digit = arr - np.uint8(48)
        bad = (digit > 9) & tok
        signed = False
        if bad.any():
            self._check_signs(np.flatnonzero(bad), tok, digit)
            signed = True
        head = tok[1:] & ~tok[:-1]
        starts = np.flatnonzero(head) + 1
        if tok[0]:
            starts = np.concatenate(([0], starts))
        ntok = starts.size
        values = np.zeros(0, dtype=np.int64) if ntok == 0 else None
        if values is None and fast and hasattr(np, "fromstring"):
            values = self._fromstring(ntok)
        if values is None:
            values = self._convert(starts, tok, digit, signed)
        big = (values >= MAX_ABS_INT) | (values <= -MAX_ABS_INT)
        if big.any():
            pos = int(starts[int(np.argmax(big))])
            raise self.error(f"integer {self.token_text(pos)} is too large", pos=pos)
        before = np.searchsorted(starts, self.newlines, side="left")
        counts = np.diff(np.concatenate(([0], before, [ntok])))[: self.n_lines]
        return Tokens(values, starts.astype(np.int64, copy=False), counts.astype(np.int64, copy=False))

    def _check_signs(self, bad_pos: np.ndarray, tok: np.ndarray, digit: np.ndarray) -> None:
        arr = self.arr
        ch = arr[bad_pos]
        is_sign = (ch == 43) | (ch == 45)
        prev_tok = np.zeros(bad_pos.size, dtype=bool)
        nz = bad_pos > 0
        prev_tok[nz] = tok[bad_pos[nz] - 1]
        nxt = bad_pos + 1
        has_next = nxt < arr.size
        next_digit = np.zeros(bad_pos.size, dtype=bool)
        next_digit[has_next] = digit[nxt[has_next]] <= 9
        ok = is_sign & ~prev_tok & next_digit
        if not ok.all():
            pos = int(bad_pos[int(np.argmin(ok))])
            raise self.error(f"expected an integer, got {self.token_text(pos)!r}", pos=pos)

    def _fromstring(self, ntok: int) -> np.ndarray | None:
        buf = self.arr.tobytes() if self._blanked else self.data
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                values = np.fromstring(buf, dtype=np.int64, sep=" ")
        except (ValueError, DeprecationWarning):
            return None
        return values if values.size == ntok else None

    def _convert(self, starts: np.ndarray, tok: np.ndarray, digit: np.ndarray, signed: bool) -> np.ndarray:
        """Pure NumPy conversion: add digit * 10**k for the k-th digit from the right of every
        token still that long (one pass per decimal place)."""
        tail = tok[:-1] & ~tok[1:]
        ends = np.flatnonzero(tail) + 1
        if tok[-1]:
            ends = np.concatenate((ends, [tok.size]))
        sign = np.zeros(starts.size, dtype=bool)
        neg = np.zeros(starts.size, dtype=bool)
        if signed:
            first = self.arr[starts]
            sign = (first == 43) | (first == 45)
            neg = first == 45
        ndig = ends - starts - sign
        too_long = ndig > 18
        if too_long.any():
            pos = int(starts[int(np.argmax(too_long))])
            raise self.error(f"integer {self.token_text(pos)} is too large", pos=pos)
        last = ends - 1
        values = digit[last].astype(np.int64)
        for k in range(1, int(ndig.max())):
            idx = np.flatnonzero(ndig > k)
            values[idx] += digit[last[idx] - k].astype(np.int64) * (10**k)
        if signed:
            values[neg] = -values[neg]
        return values


def first_bad(mask: np.ndarray) -> int | None:
    """Index of the first True in ``mask``, or None."""
    if mask.size and mask.any():
        return int(np.argmax(mask))
    return None
