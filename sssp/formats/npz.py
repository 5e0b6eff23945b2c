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
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphFormatError, InvalidGraphError
from ..graph import Graph

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
            missing = [k for k in _REQUIRED if k not in npz.files]
            if missing:
                raise GraphFormatError(path, f"not an sssp graph archive: missing member(s) {missing}")
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
