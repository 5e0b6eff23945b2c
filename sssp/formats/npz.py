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
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphFormatError, InvalidGraphError
from ..graph import Graph

__all__ = ["FORMAT_VERSION", "read", "write"]

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
            piece = view[start:start + _PIECE]
            self._member.write(piece)
            self._done(len(piece))
        return len(view)


def _savez(fh: Any, arrays: dict[str, np.ndarray], compress: bool,
           progress: Callable[[int, int], None] | None) -> None:
    """``np.savez``'s archive (members ``NAME.npy`` in NumPy's own format, zip64), written
    here for the Deflate level and the progress callback ``np.savez`` has no parameter for."""
    total = sum(a.nbytes for a in arrays.values())
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done = min(done + n, total)
        if progress is not None:
            progress(done, total)

    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(fh, "w", compression=method, allowZip64=True,
                         compresslevel=COMPRESSLEVEL if compress else None) as zf:
        for name, array in arrays.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(_Counted(member, advance), np.asanyarray(array),
                                          allow_pickle=False)


def write(graph: Graph, path: str | Path, *, compress: bool = True,
          progress: Callable[[int, int], None] | None = None) -> None:
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
    try:
        with open(path, "wb") as fh:
            _savez(fh, payload, compress, progress)
    except OSError as err:
        raise GraphFormatError(path, f"cannot write file: {err.strerror or err}") from err


def read(data: bytes, path: str | Path | None = None) -> Graph:
    """Read a graph written by :func:`write` from the (decompressed) file content.

    Parameters
    ----------
    data : bytes
    path : str or Path, optional
        Named in error messages.

    Returns
    -------
    Graph
        Exactly the saved graph: arrays, name and meta.

    Raises
    ------
    GraphFormatError
        Not a zip archive, a missing or malformed member, an unsupported format version, or
        arrays that do not form a valid graph.
    """
    if not data.startswith(_ZIP_MAGIC):
        raise GraphFormatError(path, "not an .npz file: missing zip signature")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            if _SCIPY_MEMBERS <= set(npz.files) and "meta" not in npz.files:
                return _read_scipy(data, path)
            missing = [k for k in _REQUIRED if k not in npz.files]
            if missing:
                raise GraphFormatError(
                    path, f"not an sssp graph archive: missing member(s) {missing} (sssp.load reads "
                          "the archives of sssp.save and of scipy.sparse.save_npz)")
            version = int(npz["format_version"]) if "format_version" in npz.files else FORMAT_VERSION
            if version != FORMAT_VERSION:
                raise GraphFormatError(path, f"unsupported graph archive version {version}")
            indptr, indices, weights = npz["indptr"], npz["indices"], npz["weights"]
            name = str(npz["name"][()])
            meta = json.loads(str(npz["meta"][()]))
            keys = json.loads(str(npz["meta_arrays"][()])) if "meta_arrays" in npz.files else []
            if not isinstance(meta, dict) or not isinstance(keys, list):
                raise GraphFormatError(path, "meta must be a JSON object and meta_arrays a JSON list")
            for i, key in enumerate(keys):
                arr = npz[f"meta_array_{i}"]
                arr.flags.writeable = False
                meta[str(key)] = arr
            labels = npz["labels"] if "labels" in npz.files else None
            if labels is not None and labels.dtype.kind == "U":
                labels = labels.astype(object)
            elif labels is not None and labels.dtype.kind not in "iu":
                raise GraphFormatError(path, f"labels of dtype {labels.dtype} are not node ids")
    except GraphFormatError:
        raise
    except (ValueError, KeyError, OSError, EOFError, TypeError, IndexError, zipfile.BadZipFile,
            json.JSONDecodeError, NotImplementedError, RuntimeError) as err:
        raise GraphFormatError(path, f"corrupt .npz graph archive: {err}") from err
    try:
        return Graph(indptr, indices, weights, name=name, meta=meta, labels=labels)
    except InvalidGraphError as err:
        raise GraphFormatError(path, f"stored arrays are not a valid graph: {err}") from err


def _read_scipy(data: bytes, path: str | Path | None) -> Graph:
    """A sparse adjacency matrix written by ``scipy.sparse.save_npz`` (any of its formats: csr,
    csc, coo, bsr, dia), read as :meth:`Graph.from_scipy` reads the matrix: entry (i, j) is an
    edge i -> j with that weight, explicit zeros included."""
    import scipy.sparse as sp

    try:
        matrix = sp.load_npz(io.BytesIO(data))
    except (ValueError, KeyError, OSError, EOFError, TypeError, IndexError, zipfile.BadZipFile,
            NotImplementedError) as err:
        raise GraphFormatError(path, f"corrupt scipy.sparse.save_npz archive: {err}") from err
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        shape = " x ".join(str(d) for d in matrix.shape)
        raise GraphFormatError(path, f"a scipy.sparse matrix of shape {shape} is not an adjacency "
                                     "matrix: a graph needs a square one")
    name = Path(path).name.split(".")[0] if path is not None else "graph"
    meta = {"format": "scipy-npz", "scipy_format": matrix.format}
    try:
        return Graph.from_scipy(matrix, name=name, meta=meta)
    except InvalidGraphError as err:
        raise GraphFormatError(path, f"scipy.sparse matrix is not a valid graph: {err}") from err
