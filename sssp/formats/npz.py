"""Lossless ``.npz`` storage of a :class:`~sssp.graph.Graph`.

Layout (``np.savez_compressed``, read with ``allow_pickle=False``):

- ``indptr`` (int64), ``indices`` (int32), ``weights`` (int32 or int64): the CSR arrays;
- ``name``: 0-d unicode array;
- ``meta``: 0-d unicode array holding ``Graph.meta`` as a JSON object, except NumPy arrays;
- ``meta_arrays``: 0-d unicode array, a JSON list of the keys of ``meta`` that hold NumPy
  arrays; the ``i``-th is stored as ``meta_array_{i}`` (so e.g. SNAP ``node_ids`` round-trip
  with their dtype);
- ``labels`` (optional): the graph's node labels (:attr:`~sssp.graph.Graph.labels`), int64, or
  unicode for string labels; absent when the ids are 0..n-1;
- ``format_version``: 0-d int64, currently 1.

``meta`` values must be JSON-serialisable (str, int, float, bool, None, lists/dicts of those) or
top-level NumPy arrays; NumPy scalars are stored as Python numbers and tuples as lists.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphFormatError, InvalidGraphError
from ..graph import Graph
from ._text import format_bytes

__all__ = ["FORMAT_VERSION", "read", "write"]

FORMAT_VERSION = 1
_ZIP_MAGIC = b"PK\x03\x04"
_REQUIRED = ("indptr", "indices", "weights", "name", "meta")


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


def write(graph: Graph, path: str | Path, *, compress: bool = True) -> None:
    """Write ``graph`` to ``path`` (which must end in ``.npz``).

    Parameters
    ----------
    graph : Graph
    path : str or Path
    compress : bool
        Deflate the arrays (``np.savez_compressed``); False writes them stored.

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
                raise GraphFormatError(path, f"meta[{key!r}] has dtype {value.dtype}, which needs pickle")
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
                raise GraphFormatError(path, "node labels other than integers and strings cannot be saved")
            labels = np.array(labels.tolist(), dtype=np.str_)
        payload["labels"] = labels
    saver = np.savez_compressed if compress else np.savez
    try:
        with open(path, "wb") as fh:
            saver(fh, **payload)
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
                raise self.error(f"member {key!r} is a .npy file of version {version}, not 1.0 or 2.0")
            header_bytes = fh.tell()
        if dtype.hasobject:
            raise self.error(f"member {key!r} holds Python objects ({dtype}), which need pickle")
        nbytes = math.prod(shape) * dtype.itemsize
        data = info.file_size - header_bytes
        what = f"member {key!r} declares {'x'.join(map(str, shape)) or 'a scalar'} {dtype} ({format_bytes(nbytes)})"
        if nbytes != data:
            raise self.error(f"{what}, but the archive says {format_bytes(max(data, 0))} of data follow its header")
        if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > DEFLATE_MAX_RATIO * info.compress_size + 1024:
            raise self.error(f"{what} in {format_bytes(info.compress_size)} of compressed data: more "
                             f"than deflate can expand to ({DEFLATE_MAX_RATIO} to 1)")
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size < info.file_size:
            raise self.error(f"{what}, but only {format_bytes(info.compress_size)} are stored")
        self.planned += nbytes
        if self.planned > self.budget:
            raise self.error(f"{what}: the archive's arrays need more than the "
                             f"{format_bytes(self.budget)} this process may use")
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
    from ._text import STREAM_ERRORS, memory_budget, open_stream, sniff_compression, split_suffixes

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
                    raise GraphFormatError(path, f"the archive decompresses to more than the "
                                           f"{format_bytes(limit)} this process may use")
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
    from ._text import memory_budget

    fh, _ = _open_archive(source, path)
    try:
        with fh:
            if fh.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
                raise GraphFormatError(path, "not an .npz file: missing zip signature")
            fh.seek(0)
            with zipfile.ZipFile(fh) as zf:
                npz = _Members(zf, path, memory_budget())
                missing = [k for k in _REQUIRED if k not in npz.files]
                if missing:
                    raise GraphFormatError(path, f"not an sssp graph archive: missing member(s) {missing}")
                version = int(npz.array("format_version")) if "format_version" in npz.files else FORMAT_VERSION
                if version != FORMAT_VERSION:
                    raise GraphFormatError(path, f"unsupported graph archive version {version}")
                indptr = npz.array("indptr")
                if indptr.ndim != 1 or indptr.size == 0:
                    raise GraphFormatError(path, f"member 'indptr' must hold n + 1 >= 1 entries, got shape {indptr.shape}")
                n = indptr.size - 1
                m = _last(indptr)
                # The edge arrays' headers against indptr before their data is decompressed.
                indices = npz.array("indices", None if m is None else (m,))
                weights = npz.array("weights", None if m is None else (m,))
                name = str(npz.array("name", ())[()])
                meta = json.loads(str(npz.array("meta", ())[()]))
                keys = json.loads(str(npz.array("meta_arrays", ())[()])) if "meta_arrays" in npz.files else []
                if not isinstance(meta, dict) or not isinstance(keys, list):
                    raise GraphFormatError(path, "meta must be a JSON object and meta_arrays a JSON list")
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
    except (ValueError, KeyError, OSError, EOFError, TypeError, IndexError, zipfile.BadZipFile,
            json.JSONDecodeError, NotImplementedError, RuntimeError, OverflowError) as err:
        raise GraphFormatError(path, f"corrupt .npz graph archive: {err}") from err
    try:
        return Graph(indptr, indices, weights, name=name, meta=meta, labels=labels)
    except InvalidGraphError as err:
        raise GraphFormatError(path, f"stored arrays are not a valid graph: {err}") from err


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
