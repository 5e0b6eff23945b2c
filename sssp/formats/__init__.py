"""Graph file readers: METIS ``.graph``, DIMACS9 ``.gr``, Matrix Market ``.mtx``, SNAP edge lists
and the project's own lossless ``.npz``.

:func:`load` picks the format from ``format=``, else from the file suffix (after a ``.gz``,
``.bz2`` or ``.xz`` suffix, which is decompressed transparently; compressed content without such
a suffix is recognised by its magic number), else by sniffing the content. When the content is
recognisably another format than the one requested (a Matrix Market banner, a DIMACS9 ``c``/``p``
line, a SNAP ``#`` comment, a zip archive), a :class:`~sssp.errors.GraphFormatError` says so.

Weights (``weights=``):

``"auto"`` (the default)
    Weights in the file are kept as written (integers stay int, real numbers give float64);
    unweighted files get unit weights, so distances are hop counts as in SciPy and NetworkX.
``"file"``
    The file must carry weights (METIS ``fmt`` ending in 1, DIMACS9, integer/real Matrix Market,
    three-column SNAP, ``.npz``); otherwise a ``GraphFormatError``.
``"random"``
    Uniform integers in ``[1, 100]`` (the paper's choice), even when the file has weights. The
    paper's experiments, and the benchmarks that repeat them, ask for this.
``"unit"``
    All ones.

Node ids: the graph's :attr:`~sssp.graph.Graph.labels` are the file's ids (1..n for DIMACS9,
METIS and Matrix Market; the ids that occur, sorted, for SNAP edge lists), so the command line
takes and reports them. Parallel edges are kept as separate arcs by every reader, as by the
:class:`~sssp.graph.Graph` constructors. Text files are read as a stream of blocks: memory grows
with the edges read, not with the file's bytes. Sizes a header declares are checked on its line
before anything is allocated for them (:func:`~sssp.formats._textio.check_declared`: nodes backed
by declared arcs, the whole within :func:`~sssp.formats._textio.memory_budget`), and each ``.npz``
member from its ``.npy`` header before it is decompressed (:mod:`sssp.formats.npz`).

Random weights are reproducible from ``seed``. For directed sources one weight per arc is drawn
with ``numpy.random.default_rng(seed).integers(1, 101)`` in file order. For undirected sources
(METIS, symmetric Matrix Market) both directions of an edge get the SAME weight, so the directed
graph stays symmetric: the weight of ``{u, v}`` is ``1 + h(u, v) mod 100`` where ``h`` is the
SplitMix64 finaliser of the unordered pair keyed with a 64-bit value drawn from
``default_rng(seed)``; it depends only on the pair and the seed (not on the order of the
adjacency lists), and parallel copies of an edge share it.

``Graph.meta`` records ``format``, ``path``, ``directed_from`` (``"undirected"``/``"directed"``)
and ``weights`` (``"file"``, ``"random[1,100] seed=S"`` or ``"unit"``), plus format-specific
entries (METIS ``fmt``/``self_loops``, Matrix Market ``field``/``symmetry``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import GraphFormatError, InvalidGraphError, InvalidTypeError
from ..graph import Graph, check_seed
from . import dimacs, metis, mtx, npz, snap
from ._textio import BOM, STREAM_ERRORS, EdgeList, base_name, open_stream, split_suffixes

__all__ = [
    "FORMATS",
    "WEIGHT_MODES",
    "detect_format",
    "load",
    "random_weights",
    "save",
    "sniff_format",
    "symmetric_random_weights",
]

log = logging.getLogger(__name__)

#: Canonical format names.
FORMATS: tuple[str, ...] = ("metis", "dimacs", "mtx", "snap", "npz")
WEIGHT_MODES: tuple[str, ...] = ("auto", "file", "random", "unit")
WEIGHT_LOW, WEIGHT_HIGH = 1, 100

_SUFFIXES: dict[str, str] = {
    ".graph": "metis",
    ".metis": "metis",
    ".gr": "dimacs",
    ".mtx": "mtx",
    ".txt": "snap",
    ".edges": "snap",
    ".el": "snap",
    ".snap": "snap",
    ".npz": "npz",
}
_ALIASES: dict[str, str] = {
    **{f: f for f in FORMATS},
    "graph": "metis",
    "dimacs10": "metis",
    "gr": "dimacs",
    "dimacs9": "dimacs",
    "mm": "mtx",
    "matrixmarket": "mtx",
    "matrix-market": "mtx",
    "txt": "snap",
    "edgelist": "snap",
    "edges": "snap",
    "el": "snap",
}
_DESCRIPTION: dict[str, str] = {
    "metis": "METIS .graph",
    "dimacs": "DIMACS9 .gr",
    "mtx": "Matrix Market",
    "snap": "SNAP edge list",
    "npz": ".npz graph archive",
}
_PARSERS: dict[str, Callable[[bytes | IO[bytes], str | Path | None], EdgeList]] = {
    "metis": metis.parse,
    "dimacs": dimacs.parse,
    "mtx": mtx.parse,
    "snap": snap.parse,
}
_SNIFF_BYTES = 1 << 16


# -- format detection ---------------------------------------------------------------------------
def _canonical(format: str, path: str | Path) -> str:
    fmt = _ALIASES.get(str(format).lower())
    if fmt is None:
        raise GraphFormatError(
            path, f"unknown format {format!r}; expected one of {', '.join(FORMATS)}"
        )
    return fmt


def _first_lines(data: bytes, count: int = 64) -> list[bytes]:
    head = data[:_SNIFF_BYTES]
    if b"\n" not in head:
        head = head.replace(b"\r", b"\n")  # bare-CR line ends
    lines = head.split(b"\n")
    if len(data) > _SNIFF_BYTES:
        lines = lines[:-1]  # the last one may be cut
    return [ln.rstrip(b"\r") for ln in lines[:count]]


def _sniff_strong(data: bytes) -> tuple[str, str] | None:
    """A format the content unmistakably belongs to, with the reason, or None."""
    if data.startswith(BOM):
        data = data[len(BOM) : _SNIFF_BYTES]
    if data.startswith(b"PK\x03\x04"):
        return "npz", "a zip archive"
    if data.startswith(mtx.BANNER):
        return "mtx", "a '%%MatrixMarket' banner"
    for line in _first_lines(data):
        stripped = line.strip()
        if not stripped:
            continue
        if line.startswith(b"p sp") or line.startswith(b"c ") or line == b"c":
            return "dimacs", f"a DIMACS9 line {line[:30].decode('ascii', 'replace')!r}"
        if line.startswith(b"#"):
            return "snap", "a '#' comment line"
        return None
    return None


def _sniff_weak(head: bytes, reopen: Callable[[], Any]) -> str | None:
    """METIS or SNAP for integer-only content (only used for unknown suffixes): the format whose
    reader accepts the whole content (``reopen()`` gives it again: bytes or a fresh stream),
    METIS first (its header and line count rarely fit by chance)."""
    for line in _first_lines(head):
        if line.strip() and not line.startswith(b"%"):
            if not all(t.isdigit() for t in line.split()):
                return None
            break
    for fmt in ("metis", "snap"):
        source = reopen()
        try:
            _PARSERS[fmt](source, None)
        except GraphFormatError:
            continue
        finally:
            if hasattr(source, "close"):
                source.close()
        return fmt
    return None


def _head(path: str | Path) -> bytes:
    """The first :data:`_SNIFF_BYTES` decompressed bytes of ``path``."""
    with open_stream(path) as fh:
        try:
            return fh.read(_SNIFF_BYTES)
        except STREAM_ERRORS as err:
            raise GraphFormatError(path, f"corrupt compressed stream: {err}") from err


def sniff_format(data: bytes) -> str | None:
    """Guess the format of decompressed file content.

    Parameters
    ----------
    data : bytes

    Returns
    -------
    str or None
        One of :data:`FORMATS`, or None when the content is not recognisable.
    """
    strong = _sniff_strong(data)
    return strong[0] if strong else _sniff_weak(data, lambda: data)


def _sniff_path(path: str | Path) -> str | None:
    head = _head(path)
    strong = _sniff_strong(head)
    return strong[0] if strong else _sniff_weak(head, lambda: open_stream(path))


def _unknown(path: str | Path) -> GraphFormatError:
    suffix, _ = split_suffixes(path)
    return GraphFormatError(
        path,
        f"unknown suffix {suffix!r} and unrecognisable content; pass format= (one of "
        f"{', '.join(FORMATS)})",
    )


def detect_format(path: str | Path) -> str:
    """The format :func:`load` would use for ``path`` without ``format=``.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    str
        One of :data:`FORMATS`: from the suffix (after stripping ``.gz``/``.bz2``/``.xz``),
        otherwise from the content.

    Raises
    ------
    GraphFormatError
        Unknown suffix and unrecognisable content, or an unreadable file.
    """
    suffix, _ = split_suffixes(path)
    fmt = _SUFFIXES.get(suffix) or _sniff_path(path)
    if fmt is None:
        raise _unknown(path)
    return fmt


# -- weights ------------------------------------------------------------------------------------
def random_weights(count: int, seed: int) -> np.ndarray:
    """``count`` independent uniform weights in ``[1, 100]`` from ``default_rng(seed)``.

    Returns
    -------
    ndarray, int32, shape (count,)
    """
    rng = np.random.default_rng(seed)
    return rng.integers(WEIGHT_LOW, WEIGHT_HIGH + 1, size=count, dtype=np.int32)


def symmetric_random_weights(src: np.ndarray, dst: np.ndarray, seed: int) -> np.ndarray:
    """Uniform weights in ``[1, 100]`` that depend only on the unordered pair ``{src, dst}``.

    Parameters
    ----------
    src, dst : ndarray, integer, shape (m,)
        Non-negative node ids below ``2**31``.
    seed : int
        Seeds ``default_rng``, which draws the 64-bit key of the SplitMix64 hash.

    Returns
    -------
    ndarray, int32, shape (m,)
        Arcs ``u -> v`` and ``v -> u`` get the same weight.
    """
    key = np.random.default_rng(seed).integers(0, np.iinfo(np.int64).max, dtype=np.int64)
    lo = np.minimum(src, dst).astype(np.uint64)
    hi = np.maximum(src, dst).astype(np.uint64)
    z = ((lo << np.uint64(32)) | hi) ^ np.uint64(key)
    z += np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    span = np.uint64(WEIGHT_HIGH - WEIGHT_LOW + 1)
    return (z % span).astype(np.int32) + np.int32(WEIGHT_LOW)


def _choose_weights(
    edges: EdgeList, mode: str, seed: int, path: str | Path
) -> tuple[np.ndarray, str]:
    if mode == "file" and edges.weights is None:
        raise GraphFormatError(path, "weights='file' but the file carries no edge weights")
    if mode in ("auto", "file") and edges.weights is not None:
        return edges.weights, "file"
    if mode in ("unit", "auto"):
        return np.ones(edges.src.size, dtype=np.int32), "unit"
    if edges.directed_from == "undirected":
        w = symmetric_random_weights(edges.src, edges.dst, seed)
    else:
        w = random_weights(edges.src.size, seed)
    return w, f"random[{WEIGHT_LOW},{WEIGHT_HIGH}] seed={seed}"


def _check_mode(weights: str) -> None:
    if weights not in WEIGHT_MODES:
        raise InvalidGraphError(
            f"weights must be one of {', '.join(WEIGHT_MODES)}, got {weights!r}"
        )


# -- load / save --------------------------------------------------------------------------------
def _mismatch(head: bytes, fmt: str, path: str | Path | None) -> None:
    strong = _sniff_strong(head)
    if strong is not None and strong[0] != fmt:
        raise GraphFormatError(
            path,
            f"expected a {_DESCRIPTION[fmt]} file, but the content looks like a "
            f"{_DESCRIPTION[strong[0]]} file ({strong[1]})",
        )


def _build(
    edges: EdgeList, fmt: str, path: str | Path | None, weights: str, seed: int, name: str | None
) -> Graph:
    where = path if path is not None else "<bytes>"
    w, how = _choose_weights(edges, weights, seed, where)
    meta: dict[str, Any] = {
        "format": fmt,
        "path": None if path is None else str(path),
        "directed_from": edges.directed_from,
        "weights": how,
        **edges.meta,
    }
    label = name if name is not None else (base_name(path) if path is not None else "graph")
    log.info("%s: %s graph, n=%d, %d arcs, weights=%s", where, fmt, edges.n, edges.src.size, how)
    try:
        return Graph.from_edges(
            edges.n, edges.src, edges.dst, w, name=label, meta=meta, labels=edges.labels
        )
    except InvalidGraphError as err:
        raise GraphFormatError(path, str(err)) from err


def parse_bytes(
    data: bytes,
    format: str,
    *,
    path: str | Path | None = None,
    weights: str = "auto",
    seed: int = 0,
    name: str | None = None,
) -> Graph:
    """Build a graph from decompressed file content of a known format (see :func:`load`)."""
    _check_mode(weights)
    seed = check_seed(seed)
    fmt = _canonical(format, path if path is not None else "<bytes>")
    _mismatch(data[:_SNIFF_BYTES], fmt, path)
    if fmt == "npz":
        return _from_npz(data, path, weights, seed, name)
    return _build(_PARSERS[fmt](data, path), fmt, path, weights, seed, name)


def _from_npz(
    source: bytes | str | Path, path: str | Path | None, weights: str, seed: int, name: str | None
) -> Graph:
    graph = npz.read(source, path)
    if weights in ("auto", "file"):
        return graph if name is None else _renamed(graph, name)
    src, dst, _ = graph.edges()
    if weights == "unit":
        w, how = np.ones(graph.m, dtype=np.int32), "unit"
    else:
        if graph.meta.get("directed_from") == "undirected":
            w = symmetric_random_weights(src, dst, seed)
        else:
            w = random_weights(graph.m, seed)
        how = f"random[{WEIGHT_LOW},{WEIGHT_HIGH}] seed={seed}"
    log.info("%s: npz graph, weights=%s", path, how)
    meta = {**graph.meta, "weights": how}
    return Graph(
        graph.indptr, graph.indices, w, name=name or graph.name, meta=meta, labels=graph.labels
    )


def _renamed(graph: Graph, name: str) -> Graph:
    return Graph(
        graph.indptr, graph.indices, graph.weights, name=name, meta=graph.meta, labels=graph.labels
    )


def load(
    path: str | Path,
    *,
    format: str | None = None,
    weights: str = "auto",
    seed: int = 0,
    name: str | None = None,
) -> Graph:
    """Read a graph file.

    Parameters
    ----------
    path : str or Path
        A ``.graph``/``.metis``, ``.gr``, ``.mtx``, ``.txt``/``.edges``/``.el``/``.snap`` or
        ``.npz`` file, optionally compressed (``.gz``, ``.bz2``, ``.xz``).
    format : str, optional
        ``"metis"``, ``"dimacs"``, ``"mtx"``, ``"snap"`` or ``"npz"`` (aliases such as
        ``"graph"``, ``"gr"``, ``"mm"``, ``"txt"`` accepted); default: from the suffix, then
        from the content.
    weights : {"auto", "file", "random", "unit"}
        See the module docstring.
    seed : int
        Seed of the random weights.
    name : str, optional
        ``Graph.name``; default: the file name without suffixes (the stored name for ``.npz``).

    Returns
    -------
    Graph
        int64 ``indptr``, int32 ``indices``, int32/int64 (or float64 for real weights)
        ``weights``; ``labels`` the file's node ids; ``meta`` as in the module docstring
        (``.npz`` files keep their stored meta unless weights are replaced).

    Raises
    ------
    GraphFormatError
        The file is unreadable, malformed, of another format than requested, or of an unknown
        suffix with unrecognisable content. The message names the file and, where meaningful,
        the 1-based line.
    InvalidGraphError
        ``weights`` is not one of the modes, or ``seed`` is not a non-negative integer.
    InvalidTypeError
        ``path`` is not a path (``None``, a number, bytes...).
    """
    if not isinstance(path, str | os.PathLike) or isinstance(os.fspath(path), bytes):
        raise InvalidTypeError(f"path must be a file path (str or os.PathLike), got {path!r}")
    _check_mode(weights)
    seed = check_seed(seed)
    if format is None:
        suffix, _ = split_suffixes(path)
        format = _SUFFIXES.get(suffix) or _sniff_path(path)
        if format is None:
            raise _unknown(path)
    else:
        format = _canonical(format, path)
    if format == "npz":
        return _from_npz(path, path, weights, seed, name)
    _mismatch(_head(path), format, path)
    with open_stream(path) as stream:
        edges = _PARSERS[format](stream, path)
    return _build(edges, format, path, weights, seed, name)


def save(graph: Graph, path: str | Path, *, compress: bool = True) -> None:
    """Write ``graph`` losslessly to an ``.npz`` file (arrays, name and meta).

    Parameters
    ----------
    graph : Graph
    path : str or Path
        Must end in ``.npz``.
    compress : bool
        Deflate the arrays.

    Raises
    ------
    GraphFormatError
        Wrong suffix, meta that cannot be stored, or the file cannot be written.
    """
    npz.write(graph, path, compress=compress)
