"""Shared helpers of the graph readers: streamed (compressed) file input and a vectorised tokenizer.

Files are read as a stream of blocks of about :data:`CHUNK_BYTES` that end at a line break
(:func:`iter_texts`), so a reader holds one block of text at a time: its memory grows with the
edges it has read, not with the bytes of the file (blank lines, comments and compressed padding
cost nothing once a block is parsed). A UTF-8 byte-order mark is skipped and files that end
their lines with a bare CR (classic Mac) are read as if they used LF.

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
import os
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import numpy.typing as npt

from ..errors import GraphFormatError

#: Compression suffixes handled transparently, mapped to the codec name.
COMPRESSION_SUFFIXES: dict[str, str] = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".lzma": "xz"}
_MAGIC: tuple[tuple[str, bytes], ...] = (
    ("gzip", b"\x1f\x8b"),
    ("bz2", b"BZh"),
    ("xz", b"\xfd7zXZ\x00"),
)
#: Integers whose magnitude reaches this bound are rejected: below it they are exact in int64 and
#: in float64 alike, so a file reads the same whether or not it also holds real numbers.
MAX_ABS_INT = 2**53
#: Up to this many nodes a header is taken at its word; above it, the nodes must be backed by
#: the edges the header declares (at most :data:`NODES_PER_ARC` nodes per arc), so that a header
#: and some padding cannot make a reader allocate what the file does not hold.
FREE_NODE_LIMIT = 1 << 20
#: Above :data:`FREE_NODE_LIMIT`, a graph of more than this many nodes per arc (three in four
#: nodes isolated) is taken for a corrupt or hostile header.
NODES_PER_ARC = 4
#: Peak bytes that each node and each arc cost between a file and its :class:`~sssp.graph.Graph`
#: (arrays being built and their sorted copies), for the memory budget.
NODE_BYTES = 40
ARC_BYTES = 40
#: Blocks of text are cut at the first line break after this many bytes.
CHUNK_BYTES = 1 << 20
BOM = b"\xef\xbb\xbf"

_NL = 10
_SPACE = 32
_MAX_NUMBER_CHARS = 400

# The decimal-number automaton of Text._check_reals. Character classes: 0 digit, 1 sign, 2 '.',
# 3 'e'/'E', 4 anything else. States: 0 start, 1 sign, 2 integer digits, 3 '.' after digits,
# 4 '.' first, 5 fraction digits, 6 'e', 7 exponent sign, 8 exponent digits, 9 rejected.
_REAL_CLASS = np.full(256, 4, dtype=np.uint8)
_REAL_CLASS[48:58] = 0
_REAL_CLASS[[43, 45]] = 1
_REAL_CLASS[46] = 2
_REAL_CLASS[[69, 101]] = 3
_REAL_NEXT = np.array(
    [
        [2, 1, 4, 9, 9],
        [2, 9, 4, 9, 9],
        [2, 9, 3, 6, 9],
        [5, 9, 9, 6, 9],
        [5, 9, 9, 9, 9],
        [5, 9, 9, 6, 9],
        [8, 7, 9, 9, 9],
        [8, 9, 9, 9, 9],
        [8, 9, 9, 9, 9],
        [9, 9, 9, 9, 9],
    ],
    dtype=np.uint8,
)
_REAL_ACCEPT = np.zeros(10, dtype=bool)
_REAL_ACCEPT[[2, 3, 5, 8]] = True
_REAL_INT = 2


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
        raise GraphFormatError(
            path,
            f"the {Path(path).suffix!r} suffix promises {codec} data, "
            f"but the file does not start with the {codec} magic number",
        )
    return raw if codec is None else decompress(raw, codec, path)


def open_stream(path: str | Path) -> IO[bytes]:
    """Open ``path`` for reading, decompressing on the fly when its suffix or magic number says so.

    Raises
    ------
    GraphFormatError
        The file cannot be opened, or its suffix promises a codec its content does not start with.
    """
    # The decompressing files are binary streams (io.BufferedIOBase) that typeshed does not
    # class as IO[bytes]: hence the cast where one is returned.
    opener: dict[str | None, Callable[[str | Path, str], object]] = {
        "gzip": gzip.open,
        "bz2": bz2.open,
        "xz": lzma.open,
        None: open,
    }
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
        _, codec = split_suffixes(path)
        found = sniff_compression(head)
        if codec is not None and found != codec:
            raise GraphFormatError(
                path,
                f"the {Path(path).suffix!r} suffix promises {codec} data, "
                f"but the file does not start with the {codec} magic number",
            )
        return cast(IO[bytes], opener[codec or found](path, "rb"))  # the caller closes it
    except OSError as err:
        raise GraphFormatError(path, f"cannot read file: {err.strerror or err}") from err


#: What reading a damaged compressed stream raises.
STREAM_ERRORS = (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError)


def _read_block(fh: IO[bytes], size: int, path: str | Path | None) -> bytes:
    try:
        return fh.read(size)
    except STREAM_ERRORS as err:
        raise GraphFormatError(path, f"corrupt compressed stream: {err}") from err


def iter_blocks(source: bytes | IO[bytes], path: str | Path | None, chunk: int) -> Iterator[bytes]:
    """Raw blocks of ``source`` (bytes, or a binary file read ``chunk`` bytes at a time)."""
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source) if not isinstance(source, bytes) else source
        for start in range(0, len(data), chunk):
            yield data[start : start + chunk]
        return
    while True:
        block = _read_block(source, chunk, path)
        if not block:
            return
        yield block


def iter_texts(
    source: bytes | IO[bytes],
    path: str | Path | None,
    *,
    chunk: int | None = None,
    max_line: int | None = None,
) -> Iterator[Text]:
    """The content of ``source`` as :class:`Text` blocks that end at line breaks.

    Parameters
    ----------
    source : bytes or binary file
        Decompressed content, or a stream (e.g. from :func:`open_stream`).
    path : str or Path or None
        Named in error messages.
    chunk : int, optional
        Block size (default :data:`CHUNK_BYTES`).
    max_line : int, optional
        Longest unfinished line kept across blocks (bytes): a line still open after more than
        this many bytes raises instead of growing the buffer (formats whose lines are short).

    Yields
    ------
    Text
        With ``line_base`` = number of lines before it, so its errors name the file's lines.
        A leading UTF-8 BOM is dropped; bare-CR line ends become LF.
    """
    size = CHUNK_BYTES if chunk is None else chunk
    carry = b""
    line_base = 0
    first = True
    cr_only = False
    for block in iter_blocks(source, path, size):
        if first:
            first = False
            if block.startswith(BOM):
                block = block[len(BOM) :]
            cr_only = b"\r" in block and b"\n" not in block
        if cr_only:
            if b"\n" in block:
                raise GraphFormatError(
                    path,
                    "mixed line endings: bare CR lines followed by LF lines",
                    line=line_base + carry.count(b"\r") + 1,
                )
            block = block.replace(b"\r", b"\n")
        buf = carry + block if carry else block
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            if max_line is not None and len(buf) > max_line:
                raise GraphFormatError(
                    path, f"line longer than {max_line} bytes", line=line_base + 1
                )
            carry = buf
            continue
        carry = buf[cut:]
        text = Text(buf[:cut], path, line_base=line_base)
        line_base += text.n_lines
        yield text
    if carry:
        yield Text(carry, path, line_base=line_base)


def memory_budget() -> int:
    """Bytes a reader may plan to allocate: this machine's physical memory, or less when this
    process is limited (``RLIMIT_AS``, ``RLIMIT_DATA``), so that a size a file declares is
    refused with a clean error before any allocation it could not survive."""
    limits: list[int] = []
    try:
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        import resource

        for which in ("RLIMIT_AS", "RLIMIT_DATA"):
            soft, _ = resource.getrlimit(getattr(resource, which))
            if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
                limits.append(int(soft))
    except (ImportError, AttributeError, ValueError, OSError):
        pass
    return min(limits) if limits else 1 << 40


def format_bytes(n: float) -> str:
    """``n`` bytes for messages: ``"1.5 GiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def check_node_count(n: int, path: str | Path | None, *, line: int | None) -> None:
    """Reject node counts that cannot be loaded: negative or beyond int32 node ids."""
    if n < 0:
        raise GraphFormatError(path, f"node count {n} is negative", line=line)
    if n > np.iinfo(np.int32).max:
        raise GraphFormatError(path, f"node count {n} exceeds the int32 node-id range", line=line)


_SINGULAR = {"arcs": "arc", "edges": "edge", "entries": "entry"}


def check_declared(
    n: int,
    arcs: int,
    path: str | Path | None,
    *,
    line: int | None,
    arcs_word: str = "arcs",
    stored_arcs: int | None = None,
    budget: int | None = None,
) -> None:
    """Check the sizes a header declares before anything is read or allocated for them.

    Parameters
    ----------
    n : int
        Declared nodes.
    arcs : int
        Declared arcs (edges, entries: ``arcs_word`` names them as the format does), which the
        reader then counts as it reads them and must find exactly.
    stored_arcs : int, optional
        The arcs the graph will hold, when they are more than ``arcs`` (a symmetric Matrix
        Market file's entries give up to two each); default ``arcs``.
    budget : int, optional
        Bytes the reader may allocate (default :func:`memory_budget`).

    Raises
    ------
    GraphFormatError
        ``n`` is negative or beyond int32 ids; above :data:`FREE_NODE_LIMIT` nodes, more than
        :data:`NODES_PER_ARC` nodes per declared arc; or the graph would need more memory than
        the budget.
    """
    check_node_count(n, path, line=line)
    if n > FREE_NODE_LIMIT and n > NODES_PER_ARC * arcs:
        raise GraphFormatError(
            path,
            f"{n} nodes but {arcs} {arcs_word} declared: beyond {FREE_NODE_LIMIT} nodes a file may "
            f"declare at most {NODES_PER_ARC} nodes per {_SINGULAR.get(arcs_word, arcs_word)} (a "
            "graph of mostly isolated nodes this large is taken for a corrupt header)",
            line=line,
        )
    need = NODE_BYTES * n + ARC_BYTES * (arcs if stored_arcs is None else stored_arcs)
    budget = memory_budget() if budget is None else budget
    if need > budget:
        raise GraphFormatError(
            path,
            f"{n} nodes and {arcs} {arcs_word} declared: loading them needs about "
            f"{format_bytes(need)}, more than the {format_bytes(budget)} this process may use",
            line=line,
        )


@dataclass
class EdgeList:
    """What a text reader hands to :func:`sssp.formats.load`: 0-based arcs plus provenance.

    Attributes
    ----------
    n : int
    src, dst : ndarray, int32 or int64, shape (m,)
        Arc ``src[i] -> dst[i]``, 0-based; undirected formats already list both directions.
    weights : ndarray, int64 or float64, shape (m,), or None
        Weights read from the file (float64 when it writes real numbers), or None when the file
        carries none.
    directed_from : str
        ``"undirected"`` (symmetric; random weights are drawn per unordered pair) or ``"directed"``.
    meta : dict
        Format-specific provenance merged into ``Graph.meta``.
    labels : ndarray, int64, shape (n,), or None
        The file's id of each node (see :attr:`sssp.graph.Graph.labels`).
    """

    n: int
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None
    directed_from: str
    meta: dict[str, Any] = field(default_factory=dict)
    labels: np.ndarray | None = None


def one_based(n: int) -> np.ndarray:
    """Labels of a format that numbers its nodes 1..n (DIMACS, METIS, Matrix Market)."""
    return np.arange(1, n + 1, dtype=np.int64)


def compact_ids(a: np.ndarray) -> np.ndarray:
    """``a`` (non-negative ids) as int32 when every value fits, so a reader keeps 4 bytes per id."""
    if a.size == 0 or int(a.max()) <= np.iinfo(np.int32).max:
        return a.astype(np.int32)
    return a


def join_weights(parts: list[np.ndarray]) -> np.ndarray:
    """Concatenate per-block weights: int64 when every block held integers, else float64 (exact:
    file integers stay below :data:`MAX_ABS_INT`)."""
    if not parts:
        return np.zeros(0, dtype=np.int64)
    if any(p.dtype.kind == "f" for p in parts):
        return np.concatenate([p.astype(np.float64, copy=False) for p in parts])
    return np.concatenate(parts)


class HeaviestWeight:
    """The largest weight a reader has seen and its line, so that a graph whose distances
    cannot be represented is refused with the file, line and value (the check
    :class:`~sssp.graph.Graph` makes again without knowing the line)."""

    def __init__(self) -> None:
        self.value: int | float | None = None
        self.line = 0
        self.real = False

    def update(self, text: Text, weights: np.ndarray, rows: np.ndarray) -> None:
        """Note ``weights`` read on the 0-based block rows ``rows`` (same length)."""
        self.real = self.real or weights.dtype.kind == "f"
        if weights.size:
            i = int(np.argmax(weights))
            value = weights[i].item()
            if self.value is None or value > self.value:
                self.value, self.line = value, text.line_base + int(rows[i]) + 1

    def check(self, n: int, path: str | Path | None) -> None:
        """Raise unless every distance of an ``n``-node graph fits: ``(n + 1) * max_weight``
        below ``2**63`` (integers) or finite (reals)."""
        if self.value is None:
            return
        if self.real:
            fits = bool(np.isfinite(float(n + 1) * float(self.value)))
        else:
            fits = (n + 1) * int(self.value) < 2**63
        if not fits:
            kind = "float64" if self.real else "int64"
            raise GraphFormatError(
                path,
                f"weight {self.value!r} is too large for a graph of n = {n} nodes: distances up "
                f"to (n + 1) * max_weight would overflow {kind}",
                line=self.line,
            )


def join(parts: list[np.ndarray], dtype: Any = np.int32) -> np.ndarray:
    """Concatenate per-block arrays (an empty ``dtype`` array when there are none)."""
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


@dataclass(frozen=True)
class Tokens:
    """Integer tokens of a buffer, in order.

    Attributes
    ----------
    values : ndarray, int64 (float64 when a real number occurs), shape (T,)
    starts : ndarray, int64, shape (T,)
        Byte offset of each token.
    line_counts : ndarray, int64, shape (L,)
        Tokens on each physical line (``L`` = :attr:`Text.n_lines`).
    integral : ndarray, bool, shape (T,), or None
        For float64 ``values``: the tokens written as integers. None when all are integers.
    """

    values: np.ndarray
    starts: np.ndarray
    line_counts: np.ndarray
    integral: np.ndarray | None = None

    def check_integral(self, text: Text, index: np.ndarray, what: str) -> np.ndarray:
        """``values[index]`` as int64, raising when one of those tokens is not an integer.

        Parameters
        ----------
        text : Text
            The block the tokens come from (for the message).
        index : ndarray, int
            Token indices that must be integers (e.g. the node-id columns).
        what : str
            Names them in the message (``"node id"``).
        """
        vals = self.values[index]
        if self.integral is not None:
            ok = self.integral[index]
            if not ok.all():
                pos = int(
                    self.starts[np.asarray(index).reshape(-1)[int(np.argmin(ok.reshape(-1)))]]
                )
                raise text.error(
                    f"{what} must be an integer, got {text.token_text(pos)!r}", pos=pos
                )
            big = np.abs(vals) >= MAX_ABS_INT  # read as reals (exact_integers=False)
            if big.any():
                pos = int(
                    self.starts[np.asarray(index).reshape(-1)[int(np.argmax(big.reshape(-1)))]]
                )
                raise text.error(f"{what} {text.token_text(pos)} is too large", pos=pos)
            vals = vals.astype(np.int64)
        return vals

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

    line_base : int
        Lines before this block in the file (blocks from :func:`iter_texts`); errors add it.

    Lines are ``\\n``-terminated (``\\r`` is whitespace, so CRLF files work); a final newline ends
    the last line rather than starting an empty one. Line numbers in errors are 1-based and count
    every physical line, comments included.
    """

    def __init__(self, data: bytes, path: str | Path | None, *, line_base: int = 0):
        self.data = data
        self.path = path
        self.line_base = line_base
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

    def line_bytes(self, row: int) -> bytes:
        """The raw bytes of 0-based line ``row`` (without its newline)."""
        start = int(self.line_starts[row])
        return self.data[start : int(self.line_ends(np.array([row]))[0])]

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

    def overwrite(self, positions: np.ndarray, value: int) -> None:
        """Set the bytes at ``positions`` to ``value`` (on a private copy of the buffer)."""
        if not self._blanked:
            self.arr = self.arr.copy()
            self._blanked = True
        self.arr[positions] = value

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
    def error(
        self, message: str, *, pos: int | None = None, row: int | None = None
    ) -> GraphFormatError:
        """A :class:`GraphFormatError` for this file at byte ``pos`` or 0-based line ``row``."""
        line = self.line_of(pos) if pos is not None else (None if row is None else int(row) + 1)
        return GraphFormatError(
            self.path, message, line=None if line is None else line + self.line_base
        )

    def tokenize(
        self, *, fast: bool = True, allow_float: bool = False, exact_integers: bool = True
    ) -> Tokens:
        """Split the buffer into whitespace-separated numbers.

        Parameters
        ----------
        fast : bool
            Convert with ``np.fromstring`` (C) after validation; False forces the pure NumPy
            conversion (used by the tests to check both paths agree).
        allow_float : bool
            Also accept decimal real numbers (``1.5``, ``.5``, ``2.``, ``1e-3``; no ``inf``,
            ``nan`` or hex). When one occurs, every value is float64 and ``Tokens.integral``
            marks the tokens written as integers.
        exact_integers : bool
            Refuse integers whose magnitude reaches :data:`MAX_ABS_INT` (the default: a file
            reads the same whether or not it also holds real numbers). False, for a column the
            format declares real (Matrix Market's ``real`` field): such a block is read as
            float64, so ``1000000000000000000`` reads as ``1e18`` does.

        Returns
        -------
        Tokens

        Raises
        ------
        GraphFormatError
            A token is not a number of the accepted kind, a control character occurs, or an
            integer's magnitude reaches :data:`MAX_ABS_INT` (``2**53``); the message quotes the
            token and its line.
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
        del ctrl
        digit = arr - np.uint8(48)
        bad = (digit > 9) & tok
        head = tok[1:] & ~tok[:-1]
        starts = np.flatnonzero(head) + 1
        del head
        if tok[0]:
            starts = np.concatenate(([0], starts))
        signed = False
        if bad.any():
            if allow_float:
                integral = self._check_reals(starts, tok)
                if not integral.all():
                    return self._reals(starts, integral, exact_integers)
            else:
                self._check_signs(np.flatnonzero(bad), tok, digit)
            signed = True
        del bad
        ntok = starts.size
        values = np.zeros(0, dtype=np.int64) if ntok == 0 else None
        if values is None and fast and hasattr(np, "fromstring"):
            values = self._fromstring(ntok)
        if values is None:
            values = self._convert(
                starts, tok, digit, signed, exact=exact_integers or not allow_float
            )
        if values is None:  # _convert gives up on integers only where reals are allowed
            return self._reals(starts, self._check_reals(starts, tok), exact_integers)
        big = (values >= MAX_ABS_INT) | (values <= -MAX_ABS_INT)
        if big.any():
            if not exact_integers and allow_float:
                return self._reals(starts, self._check_reals(starts, tok), exact_integers)
            pos = int(starts[int(np.argmax(big))])
            raise self.error(f"integer {self.token_text(pos)} is too large", pos=pos)
        return Tokens(values, starts.astype(np.int64, copy=False), self._line_counts(starts))

    def _line_counts(self, starts: np.ndarray) -> np.ndarray:
        before = np.searchsorted(starts, self.newlines, side="left")
        counts = np.diff(np.concatenate(([0], before, [starts.size])))[: self.n_lines]
        return counts.astype(np.int64, copy=False)

    def _token_ends(self, starts: np.ndarray, tok: np.ndarray) -> np.ndarray:
        tail = tok[:-1] & ~tok[1:]
        ends = np.flatnonzero(tail) + 1
        if tok[-1]:
            ends = np.concatenate((ends, [tok.size]))
        return ends

    def _check_reals(self, starts: np.ndarray, tok: np.ndarray) -> np.ndarray:
        """Run every token through the decimal-number automaton, one character position at a
        time for all tokens at once; raise on the first token it rejects. Returns the mask of
        tokens written as integers."""
        lengths = self._token_ends(starts, tok) - starts
        too_long = lengths > _MAX_NUMBER_CHARS
        if too_long.any():
            pos = int(starts[int(np.argmax(too_long))])
            raise self.error(f"number {self.token_text(pos)!r} is too long", pos=pos)
        state = np.zeros(starts.size, dtype=np.uint8)
        for k in range(int(lengths.max()) if lengths.size else 0):
            live = np.flatnonzero(lengths > k)
            state[live] = _REAL_NEXT[state[live], _REAL_CLASS[self.arr[starts[live] + k]]]
        rejected = ~_REAL_ACCEPT[state]
        if rejected.any():
            pos = int(starts[int(np.argmax(rejected))])
            raise self.error(f"expected a number, got {self.token_text(pos)!r}", pos=pos)
        return state == _REAL_INT

    def _reals(
        self, starts: np.ndarray, integral: np.ndarray, exact_integers: bool = True
    ) -> Tokens:
        buf = self.arr.tobytes() if self._blanked else self.data
        values = None
        if hasattr(np, "fromstring"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    values = np.fromstring(buf, dtype=np.float64, sep=" ")
            except (ValueError, DeprecationWarning):
                values = None
        if values is None or values.size != starts.size:
            values = np.array(buf.split(), dtype=np.bytes_).astype(np.float64)
        bad = ~np.isfinite(values)
        if exact_integers:
            bad |= integral & (np.abs(values) >= MAX_ABS_INT)
        if bad.any():
            pos = int(starts[int(np.argmax(bad))])
            raise self.error(f"number {self.token_text(pos)} is too large", pos=pos)
        return Tokens(
            values, starts.astype(np.int64, copy=False), self._line_counts(starts), integral
        )

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

    def _convert(
        self,
        starts: np.ndarray,
        tok: np.ndarray,
        digit: np.ndarray,
        signed: bool,
        exact: bool = True,
    ) -> np.ndarray | None:
        """Pure NumPy conversion: add digit * 10**k for the k-th digit from the right of every
        token still that long (one pass per decimal place). A token beyond int64: an error, or
        None when not ``exact`` (the caller reads the block as reals)."""
        ends = self._token_ends(starts, tok)
        sign = np.zeros(starts.size, dtype=bool)
        neg = np.zeros(starts.size, dtype=bool)
        if signed:
            first = self.arr[starts]
            sign = (first == 43) | (first == 45)
            neg = first == 45
        ndig = ends - starts - sign
        too_long = ndig > 18
        if too_long.any():
            if not exact:
                return None
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


def first_bad(mask: npt.ArrayLike) -> int | None:
    """Index of the first True in ``mask`` (a boolean vector), or None."""
    mask = np.asarray(mask, dtype=bool)
    if mask.size and mask.any():
        return int(np.argmax(mask))
    return None
