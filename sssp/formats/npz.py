"""Lossless ``.npz`` storage of a :class:`~sssp.graph.Graph`.

Layout (an ``np.savez`` archive, Deflate-compressed at level 1, read with ``allow_pickle=False``):

- ``indptr`` (int64), ``indices`` (int32), ``weights`` (int32 or int64): the CSR arrays;
- ``name``: 0-d unicode array;
- ``meta``: 0-d unicode array holding ``Graph.meta`` as a JSON object, except NumPy arrays;
- ``meta_arrays``: 0-d unicode array, a JSON list of the keys of ``meta`` that hold NumPy
  arrays; the ``i``-th is stored as ``meta_array_{i}`` (so e.g. SNAP ``node_ids`` round-trip
  with their dtype);
- ``labels`` (optional): the graph's node labels (:attr:`~sssp.graph.Graph.labels`), int64, or
  unicode for string labels; absent when the ids are 0..n-1;
- ``format_version``: 0-d int64, currently 1.

:func:`read` also reads the archives of ``scipy.sparse.save_npz`` (members ``format``,
``shape``, ``data`` and the format's index arrays) as adjacency matrices.

``meta`` values must be JSON-serialisable (str, int, float, bool, None, lists/dicts of those) or
top-level NumPy arrays; NumPy scalars are stored as Python numbers and tuples as lists.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphFormatError, InvalidGraphError
from ..graph import Graph
from ._textio import format_bytes

__all__ = ["FORMAT_VERSION", "read", "save_arrays", "write"]

FORMAT_VERSION = 1
COMPRESSLEVEL = 1
"""Deflate level of :func:`write`. ``np.savez_compressed`` uses zlib's default, 6: on the arrays
of the paper's 49k x 200 graph (10M edges, 79 MB) level 1 writes in 1.7-1.9 s, not 14.9 s, a
file 2.4% larger (36.6 MB against 35.7 MB); ``np.load`` reads both alike."""
_ZIP_MAGIC = b"PK\x03\x04"
_PIECE = 1 << 20  # bytes handed to the compressor at a time: the progress callback's grain
_REQUIRED = ("indptr", "indices", "weights", "name", "meta")
# What every scipy.sparse.save_npz archive holds (with indices/indptr, row/col or offsets).
_SCIPY_MEMBERS = {"format", "shape", "data"}


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


class _Counted:
    """A zip member's writer for ``np.lib.format.write_array`` that reports the array's bytes
    as they pass, in pieces of :data:`_PIECE` (numpy hands over up to 16 MiB at once). The first
    write is the ``.npy`` header, which is not counted: the total is the arrays' ``nbytes``."""

    def __init__(self, member: Any, done: Callable[[int], None]) -> None:
        self._member = member
        self._done = done
        self._header = True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        if self._header:
            self._header = False
            return self._member.write(view)
        for start in range(0, len(view), _PIECE):
            piece = view[start : start + _PIECE]
            self._member.write(piece)
            self._done(len(piece))
        return len(view)


def save_arrays(
    fh: Any,
    arrays: dict[str, np.ndarray],
    compress: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """``np.savez``'s archive (members ``NAME.npy`` in NumPy's own format, zip64, no pickles)
    written to the open binary file ``fh``: here for the Deflate level (``compress``: level
    :data:`COMPRESSLEVEL`) and the progress callback ``np.savez`` has no parameter for, and so
    that an interrupt during the write comes out as itself (see below); ``np.load`` reads it."""
    total = sum(a.nbytes for a in arrays.values())
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done = min(done + n, total)
        if progress is not None:
            progress(done, total)

    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    zf = zipfile.ZipFile(
        fh,
        "w",
        compression=method,
        allowZip64=True,
        compresslevel=COMPRESSLEVEL if compress else None,
    )
    try:
        for name, array in arrays.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(
                    _Counted(member, advance), np.asanyarray(array), allow_pickle=False
                )
    except BaseException:
        # An error raised inside zipfile's own calls (a signal's exception, say, while it opens
        # a member) can leave a member's writing handle open; closing the archive then raises a
        # ValueError that would replace the error. The caller discards the half-written file:
        # the archive is dropped unclosed (``fp = None`` makes its close, at collection, a no-op).
        zf.fp = None
        raise
    zf.close()


def write(
    graph: Graph,
    path: str | Path,
    *,
    compress: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write ``graph`` to ``path`` (which must end in ``.npz``).

    Parameters
    ----------
    graph : Graph
    path : str or Path
    compress : bool
        Deflate the arrays (level :data:`COMPRESSLEVEL`); False stores them uncompressed.
    progress : callable, optional
        Called as ``progress(bytes_done, bytes_total)`` as the arrays' bytes are written (about
        every MiB), for a progress bar.

    Raises
    ------
    GraphFormatError
        The path does not end in ``.npz``, a meta value cannot be stored, or the file cannot be
        written.
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        raise GraphFormatError(path, f"save writes .npz files only, got suffix {path.suffix!r}")
    plain: dict[str, Any] = {}
    arrays: dict[str, np.ndarray] = {}
    for key, value in graph.meta.items():
        if not isinstance(key, str):
            raise GraphFormatError(path, f"meta key {key!r} is not a string")
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufU":
                raise GraphFormatError(
                    path, f"meta[{key!r}] has dtype {value.dtype}, which needs pickle"
                )
            arrays[key] = value
        else:
            plain[key] = value
    try:
        meta_json = json.dumps(plain, default=_json_default, allow_nan=True)
    except (TypeError, ValueError) as err:
        raise GraphFormatError(path, f"meta cannot be stored as JSON: {err}") from err
    payload: dict[str, np.ndarray] = {
        "indptr": np.asarray(graph.indptr),
        "indices": np.asarray(graph.indices),
        "weights": np.asarray(graph.weights),
        "name": np.array(graph.name),
        "meta": np.array(meta_json),
        "meta_arrays": np.array(json.dumps(list(arrays))),
        "format_version": np.array(FORMAT_VERSION, dtype=np.int64),
    }
    for i, value in enumerate(arrays.values()):
        payload[f"meta_array_{i}"] = np.asarray(value)
    if graph.labels is not None:
        labels = graph.labels
        if labels.dtype == object:
            if not all(isinstance(v, str) for v in labels.tolist()):
                raise GraphFormatError(
                    path, "node labels other than integers and strings cannot be saved"
                )
            labels = np.array(labels.tolist(), dtype=np.str_)
        payload["labels"] = labels
    try:
        with open(path, "wb") as fh:
            save_arrays(fh, payload, compress, progress)
    except OSError as err:
        raise GraphFormatError(path, f"cannot write file: {err.strerror or err}") from err


#: The most a deflate stream can expand (its longest match per bit of output): a member that
#: declares more data than this many times its compressed size cannot be what it says.
DEFLATE_MAX_RATIO = 1032


class _Members:
    """The members of an ``.npz`` archive, each checked from its ``.npy`` header (dtype, shape)
    before a byte of its data is decompressed: against the archive's own sizes (the data a
    member's header declares must be what the archive says follows it, and what its compressed
    bytes can expand to) and against the memory budget of the whole read."""

    def __init__(self, zf: zipfile.ZipFile, path: str | Path | None, budget: int) -> None:
        self.zf, self.path, self.budget = zf, path, budget
        self.infos = {i.filename[:-4]: i for i in zf.infolist() if i.filename.endswith(".npy")}
        self.planned = 0

    @property
    def files(self) -> list[str]:
        return list(self.infos)

    def error(self, message: str) -> GraphFormatError:
        return GraphFormatError(self.path, message)

    def header(self, key: str) -> tuple[tuple[int, ...], np.dtype]:
        """(shape, dtype) of member ``key``, checked; its data is planned into the budget."""
        info = self.infos[key]
        with self.zf.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise self.error(
                    f"member {key!r} is a .npy file of version {version}, not 1.0 or 2.0"
                )
            header_bytes = fh.tell()
        if dtype.hasobject:
            raise self.error(f"member {key!r} holds Python objects ({dtype}), which need pickle")
        nbytes = math.prod(shape) * dtype.itemsize
        data = info.file_size - header_bytes
        what = f"member {key!r} declares {'x'.join(map(str, shape)) or 'a scalar'} {dtype} ({format_bytes(nbytes)})"
        if nbytes != data:
            raise self.error(
                f"{what}, but the archive says {format_bytes(max(data, 0))} of data follow its header"
            )
        if (
            info.compress_type == zipfile.ZIP_DEFLATED
            and info.file_size > DEFLATE_MAX_RATIO * info.compress_size + 1024
        ):
            raise self.error(
                f"{what} in {format_bytes(info.compress_size)} of compressed data: more "
                f"than deflate can expand to ({DEFLATE_MAX_RATIO} to 1)"
            )
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size < info.file_size:
            raise self.error(f"{what}, but only {format_bytes(info.compress_size)} are stored")
        self.planned += nbytes
        if self.planned > self.budget:
            raise self.error(
                f"{what}: the archive's arrays need more than the "
                f"{format_bytes(self.budget)} this process may use"
            )
        return tuple(int(d) for d in shape), dtype

    def array(self, key: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
        """Member ``key``, read after its header was checked (and its shape is ``shape``)."""
        got, _ = self.header(key)
        if shape is not None and got != shape:
            raise self.error(f"member {key!r} has shape {got}, expected {shape}")
        with self.zf.open(self.infos[key]) as fh:
            return np.lib.format.read_array(fh, allow_pickle=False)


def _open_archive(source: bytes | str | Path, path: str | Path | None) -> tuple[Any, bool]:
    """A binary file of the archive: ``source`` itself when it is bytes or an uncompressed
    file, else its decompressed content in a temporary file (``.npz.gz``); whether the caller
    must close it."""
    if isinstance(source, bytes | bytearray | memoryview):
        return io.BytesIO(source), True
    from ._textio import (
        STREAM_ERRORS,
        memory_budget,
        open_stream,
        sniff_compression,
        split_suffixes,
    )

    try:
        with open(source, "rb") as fh:
            head = fh.read(8)
    except OSError as err:
        raise GraphFormatError(path, f"cannot read file: {err.strerror or err}") from err
    if split_suffixes(source)[1] is None and sniff_compression(head) is None:
        return open(source, "rb"), True  # noqa: SIM115 - closed by the caller
    # Zip needs random access: the decompressed archive goes to a temporary file (spilled to
    # disk beyond 64 MiB), at most the memory budget, which its arrays must fit in anyway.
    limit = memory_budget()
    out = tempfile.SpooledTemporaryFile(max_size=64 << 20)  # noqa: SIM115 - closed by the caller
    try:
        with open_stream(source) as stream:
            first = stream.read(len(_ZIP_MAGIC))
            if first != _ZIP_MAGIC:
                raise GraphFormatError(path, "not an .npz file: missing zip signature")
            out.write(first)
            total = len(first)
            while block := stream.read(1 << 20):
                total += len(block)
                if total > limit:
                    raise GraphFormatError(
                        path,
                        f"the archive decompresses to more than the "
                        f"{format_bytes(limit)} this process may use",
                    )
                out.write(block)
    except STREAM_ERRORS as err:
        out.close()
        raise GraphFormatError(path, f"corrupt compressed stream: {err}") from err
    except BaseException:
        out.close()
        raise
    out.seek(0)
    return out, True


def read(source: bytes | str | Path, path: str | Path | None = None) -> Graph:
    """Read a graph written by :func:`write`.

    Parameters
    ----------
    source : bytes or str or Path
        The (decompressed) file content, or the path of the file (``.npz``, or compressed as
        ``.npz.gz``/``.bz2``/``.xz``), which is then read member by member.
    path : str or Path, optional
        Named in error messages (default: ``source`` when it is a path).

    Returns
    -------
    Graph
        Exactly the saved graph: arrays, name and meta.

    Raises
    ------
    GraphFormatError
        Not a zip archive, a missing or malformed member, an unsupported format version, a
        member whose header declares more data than the archive holds, than its compressed
        bytes can expand to, or than this process may allocate (each checked before the
        member is decompressed), or arrays that do not form a valid graph.
    """
    if path is None and not isinstance(source, bytes | bytearray | memoryview):
        path = source
    if isinstance(source, bytes | bytearray | memoryview) and not bytes(source[:4]) == _ZIP_MAGIC:
        raise GraphFormatError(path, "not an .npz file: missing zip signature")
    from ._textio import memory_budget

    fh, _ = _open_archive(source, path)
    try:
        with fh:
            if fh.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
                raise GraphFormatError(path, "not an .npz file: missing zip signature")
            fh.seek(0)
            with zipfile.ZipFile(fh) as zf:
                npz = _Members(zf, path, memory_budget())
                if _SCIPY_MEMBERS <= set(npz.files) and "meta" not in npz.files:
                    return _read_scipy(npz, path)
                missing = [k for k in _REQUIRED if k not in npz.files]
                if missing:
                    raise GraphFormatError(
                        path,
                        f"not an sssp graph archive: missing member(s) {missing} (sssp.load reads "
                        "the archives of sssp.save and of scipy.sparse.save_npz)",
                    )
                version = (
                    int(npz.array("format_version"))
                    if "format_version" in npz.files
                    else FORMAT_VERSION
                )
                if version != FORMAT_VERSION:
                    raise GraphFormatError(path, f"unsupported graph archive version {version}")
                indptr = npz.array("indptr")
                if indptr.ndim != 1 or indptr.size == 0:
                    raise GraphFormatError(
                        path,
                        f"member 'indptr' must hold n + 1 >= 1 entries, got shape {indptr.shape}",
                    )
                n = indptr.size - 1
                m = _last(indptr)
                # The edge arrays' headers against indptr before their data is decompressed.
                indices = npz.array("indices", None if m is None else (m,))
                weights = npz.array("weights", None if m is None else (m,))
                name = str(npz.array("name", ())[()])
                meta = json.loads(str(npz.array("meta", ())[()]))
                keys = (
                    json.loads(str(npz.array("meta_arrays", ())[()]))
                    if "meta_arrays" in npz.files
                    else []
                )
                if not isinstance(meta, dict) or not isinstance(keys, list):
                    raise GraphFormatError(
                        path, "meta must be a JSON object and meta_arrays a JSON list"
                    )
                for i, key in enumerate(keys):
                    arr = npz.array(f"meta_array_{i}")
                    arr.flags.writeable = False
                    meta[str(key)] = arr
                labels = npz.array("labels", (n,)) if "labels" in npz.files else None
                if labels is not None and labels.dtype.kind == "U":
                    labels = labels.astype(object)
                elif labels is not None and labels.dtype.kind not in "iu":
                    raise GraphFormatError(path, f"labels of dtype {labels.dtype} are not node ids")
    except GraphFormatError:
        raise
    except (
        ValueError,
        KeyError,
        OSError,
        EOFError,
        TypeError,
        IndexError,
        zipfile.BadZipFile,
        json.JSONDecodeError,
        NotImplementedError,
        RuntimeError,
        OverflowError,
    ) as err:
        raise GraphFormatError(path, f"corrupt .npz graph archive: {err}") from err
    try:
        return Graph(indptr, indices, weights, name=name, meta=meta, labels=labels)
    except InvalidGraphError as err:
        raise GraphFormatError(path, f"stored arrays are not a valid graph: {err}") from err


def _read_scipy(npz: _Members, path: str | Path | None) -> Graph:
    """A sparse adjacency matrix written by ``scipy.sparse.save_npz`` (any of its formats: csr,
    csc, coo, bsr, dia), read as :meth:`Graph.from_scipy` reads the matrix: entry (i, j) is an
    edge i -> j with that weight, explicit zeros included. Each member is checked from its
    header before it is decompressed, as for the project's own archives."""
    import scipy.sparse as sp

    raw = npz.array("format", ())[()]
    fmt = raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(raw)
    members = {
        "csr": ("data", "indices", "indptr"),
        "csc": ("data", "indices", "indptr"),
        "bsr": ("data", "indices", "indptr"),
        "coo": ("data", "row", "col"),
        "dia": ("data", "offsets"),
    }
    if fmt not in members:
        raise GraphFormatError(path, f"scipy.sparse.save_npz archive of unknown format {fmt!r}")
    missing = [k for k in members[fmt] if k not in npz.files]
    if missing:
        raise GraphFormatError(
            path, f"corrupt scipy.sparse.save_npz archive: missing member(s) {missing}"
        )
    shape = tuple(int(d) for d in npz.array("shape"))
    if len(shape) != 2 or shape[0] != shape[1]:
        raise GraphFormatError(
            path,
            f"a scipy.sparse matrix of shape {' x '.join(map(str, shape))} is not an "
            "adjacency matrix: a graph needs a square one",
        )
    a = {k: npz.array(k) for k in members[fmt]}
    try:
        if fmt == "coo":
            matrix = sp.coo_matrix((a["data"], (a["row"], a["col"])), shape=shape)
        elif fmt == "dia":
            matrix = sp.dia_matrix((a["data"], a["offsets"]), shape=shape)
        else:
            cls = {"csr": sp.csr_matrix, "csc": sp.csc_matrix, "bsr": sp.bsr_matrix}[fmt]
            matrix = cls((a["data"], a["indices"], a["indptr"]), shape=shape)
    except (ValueError, TypeError, IndexError) as err:
        raise GraphFormatError(path, f"corrupt scipy.sparse.save_npz archive: {err}") from err
    name = Path(path).name.split(".")[0] if path is not None else "graph"
    meta = {"format": "scipy-npz", "scipy_format": fmt}
    try:
        return Graph.from_scipy(matrix, name=name, meta=meta)
    except InvalidGraphError as err:
        raise GraphFormatError(path, f"scipy.sparse matrix is not a valid graph: {err}") from err


def _last(indptr: np.ndarray) -> int | None:
    """``indptr[-1]`` as the edge count, or None when it is not one (Graph names the problem)."""
    last = indptr[-1]
    if indptr.dtype.kind in "iub":
        value = int(last)
    elif indptr.dtype.kind == "f" and np.isfinite(last) and float(last).is_integer():
        value = int(last)
    else:
        return None
    return value if 0 <= value < 2**63 else None
