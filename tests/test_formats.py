"""Graph file readers (``sssp.formats``): hand-written files of every format, checked edge by edge,
compressed variants, weights modes, errors (with file and line), npz round trips, fuzzing."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sssp
from sssp.errors import GraphFormatError, InvalidGraphError, SSSPError
from sssp.formats import (
    detect_format,
    load,
    save,
    sniff_format,
    symmetric_random_weights,
)
from sssp.formats._textio import Text
from sssp.graph import Graph


def arcs(g: Graph) -> list[tuple[int, int, int]]:
    src, dst, w = g.edges()
    return sorted(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True))


def pairs(g: Graph) -> list[tuple[int, int]]:
    return sorted((u, v) for u, v, _ in arcs(g))


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


METIS = """% a comment
% another
4 5
2 3
1 3 4
1 2 4
2 3
"""
METIS_ARCS = [(0, 1), (0, 2), (1, 0), (1, 2), (1, 3), (2, 0), (2, 1), (2, 3), (3, 1), (3, 2)]

METIS_W = """3 2 1
2 7 3 5
1 7
1 5
"""
GR = """c tiny road net
c second comment
p sp 4 5
a 1 2 7
a 2 3 1
a 3 4 0
a 4 1 12
a 1 2 3
"""
MTX_GENERAL = """%%MatrixMarket matrix coordinate integer general
% comment
3 3 3
1 2 4
2 3 5
3 1 6
"""
MTX_SYM = """%%MatrixMarket matrix coordinate pattern symmetric
3 3 3
2 1
3 2
3 3
"""
SNAP = """# Directed graph
# FromNodeId\tToNodeId
10\t200
200\t10
10\t7
7\t7
"""


# -- well-formed files, edge by edge ----------------------------------------------------------------
def test_metis_edges(tmp_path):
    g = load(write(tmp_path, "t.graph", METIS))
    assert g.n == 4 and g.m == 10
    assert pairs(g) == METIS_ARCS
    assert g.meta["format"] == "metis" and g.meta["directed_from"] == "undirected"
    assert g.meta["weights"] == "unit" and set(g.weights.tolist()) == {1}
    assert g.labels.tolist() == [1, 2, 3, 4] and g.index_of(4) == 3 and g.label_of(0) == 1
    assert g.name == "t"


def test_metis_edge_weights(tmp_path):
    g = load(write(tmp_path, "w.graph", METIS_W))
    assert arcs(g) == [(0, 1, 7), (0, 2, 5), (1, 0, 7), (2, 0, 5)]
    assert g.meta["weights"] == "file" and g.meta["fmt"] == "001"


def test_metis_vertex_weights_and_sizes(tmp_path):
    # fmt 111, ncon 2: size, 2 vertex weights, then "v w" pairs
    text = "3 2 111 2\n9 1 1 2 7 3 5\n9 1 1 1 7\n9 1 1 1 5\n"
    g = load(write(tmp_path, "vw.graph", text))
    assert arcs(g) == [(0, 1, 7), (0, 2, 5), (1, 0, 7), (2, 0, 5)]
    # fmt 010 (vertex weights, ncon default 1), leading zeros optional
    g = load(write(tmp_path, "v.graph", "2 1 010\n5 2\n6 1\n"), weights="unit")
    assert arcs(g) == [(0, 1, 1), (1, 0, 1)]
    g = load(write(tmp_path, "s.graph", "2 1 100\n5 2\n6 1\n"), weights="unit")
    assert arcs(g) == [(0, 1, 1), (1, 0, 1)]


def test_metis_isolated_vertices_and_trailing_blank(tmp_path):
    g = load(write(tmp_path, "i.graph", "4 1\n\n3\n2\n\n\n\n"), weights="unit")
    assert g.n == 4 and pairs(g) == [(1, 2), (2, 1)]
    assert g.out_degree().tolist() == [0, 1, 1, 0]


def test_metis_self_loop_listed_once(tmp_path):
    # edges {1,2} and loop {2,2}: m = 2, entries = 3 (1 listed in 2, 2 in 1, 2 in 2)
    g = load(write(tmp_path, "l.graph", "2 2\n2\n1 2\n"), weights="unit")
    assert pairs(g) == [(0, 1), (1, 0), (1, 1)]
    assert g.meta["self_loops"] == 1


def test_metis_crlf(tmp_path):
    g = load(write(tmp_path, "c.graph", METIS.replace("\n", "\r\n")))
    assert pairs(g) == METIS_ARCS


def test_dimacs_edges(tmp_path):
    g = load(write(tmp_path, "r.gr", GR))
    assert arcs(g) == [(0, 1, 3), (0, 1, 7), (1, 2, 1), (2, 3, 0), (3, 0, 12)]
    assert g.meta["weights"] == "file" and g.meta["directed_from"] == "directed"


def test_mtx_general(tmp_path):
    g = load(write(tmp_path, "g.mtx", MTX_GENERAL))
    assert arcs(g) == [(0, 1, 4), (1, 2, 5), (2, 0, 6)]
    assert g.meta["directed_from"] == "directed" and g.meta["weights"] == "file"


def test_mtx_symmetric_pattern(tmp_path):
    g = load(write(tmp_path, "s.mtx", MTX_SYM), weights="unit")
    assert pairs(g) == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 2)]
    assert g.meta["directed_from"] == "undirected"
    r = load(write(tmp_path, "s2.mtx", MTX_SYM), weights="random", seed=3)
    w = {(u, v): x for u, v, x in arcs(r)}
    assert w[(0, 1)] == w[(1, 0)] and w[(1, 2)] == w[(2, 1)]


def test_mtx_real_field_gives_float_weights(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 3.0\n2 1 0\n1 1 2.5e-1\n"
    g = load(write(tmp_path, "r.mtx", text))
    assert g.is_float and g.weights.dtype == np.float64
    assert arcs(g) == [(0, 0, 0.25), (0, 1, 3.0), (1, 0, 0.0)]


def test_snap_remap(tmp_path):
    g = load(write(tmp_path, "s.txt", SNAP), weights="unit")
    assert g.n == 3
    assert g.labels.tolist() == [7, 10, 200]
    ids = g.labels
    assert sorted((int(ids[u]), int(ids[v])) for u, v in pairs(g)) == sorted(
        [(10, 200), (200, 10), (10, 7), (7, 7)]
    )
    assert g.meta["directed_from"] == "directed"


def test_snap_weighted_and_percent_comments(tmp_path):
    g = load(write(tmp_path, "w.edges", "% c\n0 1 5\n1 2 0\n"))
    assert arcs(g) == [(0, 1, 5), (1, 2, 0)]
    assert g.meta["weights"] == "file"


# -- compression ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "suffix, opener",
    [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)],
)
@pytest.mark.parametrize(
    "name, text", [("a.graph", METIS), ("a.gr", GR), ("a.mtx", MTX_GENERAL), ("a.txt", SNAP)]
)
def test_compressed(tmp_path, suffix, opener, name, text):
    plain = load(write(tmp_path, name, text))
    packed = load(write(tmp_path, name + suffix, opener(text.encode())))
    assert packed == plain
    assert packed.name == "a"
    skip = {"path"}
    assert {k: v for k, v in packed.meta.items() if k not in skip} == {
        k: v for k, v in plain.meta.items() if k not in skip
    }


def test_compressed_without_suffix_is_detected(tmp_path):
    g = load(write(tmp_path, "a.graph", gzip.compress(METIS.encode())))
    assert pairs(g) == METIS_ARCS


def test_bad_compressed_stream(tmp_path):
    with pytest.raises(GraphFormatError, match="gzip"):
        load(write(tmp_path, "a.graph.gz", METIS))
    with pytest.raises(GraphFormatError, match="xz"):
        load(write(tmp_path, "a.graph.xz", b"\xfd7zXZ\x00garbage"))


# -- weights modes --------------------------------------------------------------------------------
def test_weight_modes_unweighted(tmp_path):
    p = write(tmp_path, "t.graph", METIS)
    rand = load(p, weights="random", seed=5)
    again = load(p, weights="random", seed=5)
    other = load(p, weights="random", seed=6)
    assert rand == again and rand != other
    w = {(u, v): x for u, v, x in arcs(rand)}
    assert all(w[(u, v)] == w[(v, u)] for u, v in w)  # symmetric
    assert all(1 <= x <= 100 for x in w.values())
    assert rand.meta["weights"] == "random[1,100] seed=5"
    unit = load(p, weights="unit")
    assert set(unit.weights.tolist()) == {1} and unit.meta["weights"] == "unit"
    assert load(p, seed=5) == unit  # unweighted files get hop counts unless asked otherwise
    with pytest.raises(GraphFormatError, match="no edge weights"):
        load(p, weights="file")


def test_weight_modes_weighted(tmp_path):
    p = write(tmp_path, "r.gr", GR)
    assert load(p, weights="file") == load(p)
    r = load(p, weights="random", seed=1)
    assert r.meta["weights"] == "random[1,100] seed=1"
    expected = np.random.default_rng(1).integers(1, 101, size=5)
    assert sorted(r.weights.tolist()) == sorted(expected.tolist())
    assert load(p, weights="unit").weights.tolist() == [1] * 5
    with pytest.raises(InvalidGraphError, match="weights"):
        load(p, weights="heavy")


def test_symmetric_weights_uniformish():
    rng = np.random.default_rng(0)
    u = rng.integers(0, 10**6, 200_000)
    v = rng.integers(0, 10**6, 200_000)
    w = symmetric_random_weights(u, v, 7)
    assert np.array_equal(w, symmetric_random_weights(v, u, 7))
    assert w.min() == 1 and w.max() == 100
    counts = np.bincount(w, minlength=101)[1:]
    assert counts.min() > 1700 and counts.max() < 2300


def test_random_weights_do_not_depend_on_adjacency_order(tmp_path):
    a = load(write(tmp_path, "a.graph", "3 2\n2 3\n1\n1\n"))
    b = load(write(tmp_path, "b.graph", "3 2\n3 2\n1\n1\n"))
    assert arcs(a) == arcs(b)


def test_logging(tmp_path, caplog):
    with caplog.at_level("INFO", logger="sssp.formats"):
        load(write(tmp_path, "t.graph", METIS), weights="random")
    assert "random[1,100] seed=0" in caplog.text


# -- npz ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, text", [("a.graph", METIS), ("a.gr", GR), ("a.txt", SNAP)])
def test_npz_round_trip(tmp_path, name, text):
    g = load(write(tmp_path, name, text), name="orig")
    out = tmp_path / "g.npz"
    save(g, out)
    back = load(out)
    assert back == g and back.name == "orig"
    assert back.indices.dtype == g.indices.dtype and back.weights.dtype == g.weights.dtype
    assert set(back.meta) == set(g.meta)
    for key, value in g.meta.items():
        if isinstance(value, np.ndarray):
            assert back.meta[key].dtype == value.dtype
            np.testing.assert_array_equal(back.meta[key], value)
        else:
            assert back.meta[key] == value
    assert detect_format(out) == "npz"
    assert load(out, name="x").name == "x"
    unit = load(out, weights="unit")
    assert unit.meta["weights"] == "unit" and set(unit.weights.tolist()) == {1}


def test_npz_meta_and_int64_weights(tmp_path):
    g = Graph.from_edges(2, [0], [1], [2**40], name="big", meta={"a": [1, 2], "b": {"c": None}})
    save(g, tmp_path / "b.npz", compress=False)
    back = load(tmp_path / "b.npz")
    assert back == g and back.weights.dtype == np.int64
    assert dict(back.meta) == {"a": [1, 2], "b": {"c": None}}


def test_npz_errors(tmp_path):
    g = load(write(tmp_path, "a.graph", METIS))
    with pytest.raises(GraphFormatError, match="npz"):
        save(g, tmp_path / "a.graph")
    with pytest.raises(GraphFormatError, match="zip"):
        load(write(tmp_path, "x.npz", METIS))
    np.savez(tmp_path / "y.npz", indptr=np.array([0]))
    with pytest.raises(GraphFormatError, match="missing member"):
        load(tmp_path / "y.npz")
    bad = Graph.from_edges(2, [0], [1], [3], meta={"x": object()})
    with pytest.raises(GraphFormatError, match="JSON"):
        save(bad, tmp_path / "z.npz")


# -- detection ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, fmt",
    [
        (METIS, "metis"),
        (METIS_W, "metis"),
        (GR, "dimacs"),
        (MTX_GENERAL, "mtx"),
        (SNAP, "snap"),
        ("1 2\n2 3\n3 1\n5 6\n", "snap"),
    ],
)
def test_detect_unknown_suffix(tmp_path, text, fmt):
    p = write(tmp_path, "graph.data", text)
    assert detect_format(p) == fmt
    assert sniff_format(text.encode()) == fmt
    load(p)


def test_detect_by_suffix(tmp_path):
    for name, fmt in [
        ("a.graph", "metis"),
        ("a.metis.bz2", "metis"),
        ("a.gr.gz", "dimacs"),
        ("a.mtx.xz", "mtx"),
        ("a.el", "snap"),
        ("a.snap", "snap"),
        ("a.npz", "npz"),
    ]:
        assert detect_format(tmp_path / name) == fmt  # no read needed


def test_unknown_suffix_unrecognisable(tmp_path):
    p = write(tmp_path, "g.data", "hello world\n")
    with pytest.raises(GraphFormatError, match="unrecognisable") as info:
        load(p)
    assert str(p) in str(info.value)


def test_explicit_format_and_aliases(tmp_path):
    p = write(tmp_path, "g.data", GR)
    assert load(p, format="gr") == load(p, format="dimacs9") == load(p)
    with pytest.raises(GraphFormatError, match="unknown format"):
        load(p, format="csv")


# -- errors ---------------------------------------------------------------------------------------
def err(tmp_path: Path, name: str, text: str | bytes, **kw) -> GraphFormatError:
    p = write(tmp_path, name, text)
    with pytest.raises(GraphFormatError) as info:
        load(p, **kw)
    e = info.value
    assert isinstance(e, SSSPError)
    assert e.path == str(p) and str(p) in str(e)
    return e


@pytest.mark.parametrize(
    "text, line, pattern",
    [
        ("", None, "empty"),
        ("% only a comment\n\n", None, "empty"),
        ("3 2\n2\n1 3\n", 1, "truncated"),  # truncated body
        ("2 1\n2\n1\n2\n", 4, "more vertex lines"),
        ("3 3\n2\n1 3\n2\n", 1, "m = 3"),  # header count disagrees with body
        ("3 2\n2\n1 4\n2\n", 3, "neighbour id 4"),
        ("3 2\n2\n1 0\n2\n", 3, "neighbour id 0"),
        ("3 2\n2\n1 x3\n2\n", 3, "'x3'"),
        ("3 2\n2\n1 3.5\n2\n", 3, "'3.5'"),
        ("2 1 1\n2 -4\n1 -4\n", 2, "negative edge weight -4"),
        ("2 1 1\n2 4 1\n1 4\n", 2, "odd number"),
        ("2 1 2\n2\n1\n", 1, "invalid fmt"),
        ("2 1 10 2\n2\n1\n", 2, "leading vertex"),
        ("2\n2\n1\n", 1, "header"),
        ("3 1\n2\n3\n\n", 2, "not undirected"),
        ("-1 0\n", 1, "negative"),
        ("2 1\n2\n1 99999999999999999999\n", 3, "too large"),
        ("2 1\n2\x00\n1\n", 2, "control character"),
        ("3 2\n2\n1 3\n2 -\n", 4, "'-'"),
    ],
)
def test_metis_errors(tmp_path, text, line, pattern):
    e = err(tmp_path, "bad.graph", text)
    assert e.line == line
    assert pattern in e.reason


@pytest.mark.parametrize(
    "text, line, pattern",
    [
        ("", None, "empty"),
        ("c nothing\n", None, "empty"),
        ("p sp 2 1\na 1 2\n", 2, "'a u v w'"),
        ("p sp 2 2\na 1 2 3\n", 1, "m = 2"),
        ("p sp 2 1\na 1 3 3\n", 2, "node id 3"),
        ("p sp 2 1\na 0 1 3\n", 2, "node id 0"),
        ("p sp 2 1\na 1 2 -3\n", 2, "negative arc weight -3"),
        ("p sp 2 1\na 1 2 x\n", 2, "'x'"),
        ("a 1 2 3\np sp 2 1\n", 1, "before the problem line"),
        ("p sp 2 1\np sp 2 1\na 1 2 3\n", 2, "second problem line"),
        ("p max 2 1\na 1 2 3\n", 1, "p sp n m"),
        ("p sp 2 1\n1 2 3\n", 2, "expected a 'c'"),
        ("p sp 2 1\n 1 2 3\n", 2, "without an 'a' tag"),
    ],
)
def test_dimacs_errors(tmp_path, text, line, pattern):
    e = err(tmp_path, "bad.gr", text)
    assert e.line == line
    assert pattern in e.reason


@pytest.mark.parametrize(
    "text, line, pattern",
    [
        ("", None, "banner"),
        ("%%MatrixMarket matrix coordinate integer general\n3 3 4\n1 2 5\n", 2, "truncated"),
        ("%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 2 5\n2 3 1\n", 2, "truncated"),
        ("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 4 5\n", 3, "out of range"),
        (
            "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 x 5\n",
            3,
            "expected a number, got 'x'",
        ),
        (
            "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 -5\n",
            3,
            "negative weight -5",
        ),
        (
            "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 2.5\n",
            3,
            "must be an integer, got '2.5'",
        ),
        ("%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 2 5\n", 2, "square"),
        ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "dense"),
        ("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 0\n", 1, "complex"),
        ("%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n", 1, "skew"),
    ],
)
def test_mtx_errors(tmp_path, text, line, pattern):
    e = err(tmp_path, "bad.mtx", text)
    assert e.line == line
    assert pattern.lower() in e.reason.lower()
    if e.__cause__ is not None:
        assert not isinstance(e.__cause__, SSSPError)


@pytest.mark.parametrize(
    "text, line, pattern",
    [
        ("", None, "empty"),
        ("# just comments\n", None, "empty"),
        ("1 2\n3\n", 2, "1 field"),
        ("1 2\n3 4 5\n", 2, "3 field"),
        ("1 2 3 4\n", 1, "'u v'"),
        ("1 -2\n", 1, "node id -2"),
        ("1 2 -7\n", 1, "negative edge weight -7"),
        ("1 2\nfoo bar\n", 2, "'foo'"),
    ],
)
def test_snap_errors(tmp_path, text, line, pattern):
    e = err(tmp_path, "bad.txt", text)
    assert e.line == line
    assert pattern in e.reason


@pytest.mark.parametrize(
    "name, text, pattern",
    [
        ("x.graph", GR, "DIMACS9"),  # a .gr file loaded as metis
        ("x.graph", MTX_GENERAL, "Matrix Market"),
        ("x.gr", MTX_SYM, "Matrix Market"),
        ("x.mtx", METIS, "banner"),
        ("x.txt", GR, "DIMACS9"),
        ("x.gr", SNAP, "SNAP"),
        ("x.mtx", SNAP, "SNAP"),
        ("x.txt", METIS, "field"),  # METIS as SNAP: ragged lines
        ("x.gr", METIS, "expected a 'c'"),
    ],
)
def test_wrong_format(tmp_path, name, text, pattern):
    e = err(tmp_path, name, text)
    assert pattern in e.reason


def test_wrong_explicit_format(tmp_path):
    e = err(tmp_path, "x.data", GR, format="metis")
    assert "DIMACS9" in e.reason


def test_missing_file(tmp_path):
    with pytest.raises(GraphFormatError, match="cannot read"):
        load(tmp_path / "nope.graph")


# -- the tokenizer --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"1",
        b" 1 22\n333\n\n-4 +5\t6\r\n",
        b"0 00 007 9007199254740991\n",
        b"1 2\n\n\n3",
    ],
)
def test_tokenizer_paths_agree(data):
    fast = Text(data, None)
    slow = Text(data, None)
    a, b = fast.tokenize(fast=True), slow.tokenize(fast=False)
    assert a.values.tolist() == b.values.tolist() == [int(t) for t in data.split()]
    assert a.line_counts.tolist() == b.line_counts.tolist()
    assert a.line_counts.size == fast.n_lines == len(data.splitlines())


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.integers(-(2**53) + 1, 2**53 - 1), max_size=6), max_size=30),
    st.sampled_from([" ", "\t", "  "]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_tokenizer_matches_python(rows, sep, eol):
    data = "".join(sep.join(str(v) for v in row) + eol for row in rows).encode()
    for fast in (True, False):
        toks = Text(data, None).tokenize(fast=fast)
        assert toks.values.tolist() == [v for row in rows for v in row]
        assert toks.line_counts.tolist() == [len(r) for r in rows]


def test_blank_lines_keeps_numbering():
    text = Text(b"% c\n1 2\n%d\n3\n%e", None)
    text.blank_lines(text.first_bytes() == ord("%"))
    toks = text.tokenize()
    assert toks.values.tolist() == [1, 2, 3]
    assert toks.line_counts.tolist() == [0, 2, 0, 1, 0]


# -- fuzzing: never anything but SSSPError --------------------------------------------------------
SUFFIXES = [".graph", ".gr", ".mtx", ".txt", ".npz", ".graph.gz", ".gr.bz2", ".txt.xz", ".weird"]


def _load_or_error(path: Path) -> None:
    try:
        g = load(path)
    except SSSPError:
        return
    assert isinstance(g, Graph)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=300), suffix=st.sampled_from(SUFFIXES))
def test_fuzz_bytes(tmp_path, data, suffix):
    p = tmp_path / f"f{suffix}"
    p.write_bytes(data)
    _load_or_error(p)


_ALPHABET = st.sampled_from(
    list("0123456789 \n\n\n\t%#-+.acpsx")
    + ["p sp ", "a ", "%%MatrixMarket matrix coordinate integer general\n"]
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.lists(_ALPHABET, max_size=80).map("".join) | st.text(max_size=120),
    suffix=st.sampled_from(SUFFIXES),
)
def test_fuzz_text(tmp_path, text, suffix):
    raw = text.encode("utf-8", "surrogatepass")
    if suffix.endswith(".gz"):
        raw = gzip.compress(raw)
    elif suffix.endswith(".bz2"):
        raw = bz2.compress(raw)
    elif suffix.endswith(".xz"):
        raw = lzma.compress(raw)
    p = tmp_path / f"f{suffix}"
    p.write_bytes(raw)
    _load_or_error(p)


# -- real weights, the file's ids, seeds, blocks --------------------------------------------------
@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("r.txt", "5 6 0.5\n6 7 2e-1\n", [(0, 1, 0.5), (1, 2, 0.2)]),
        ("r.gr", "p sp 2 2\na 1 2 1.25\na 2 1 3\n", [(0, 1, 1.25), (1, 0, 3.0)]),
        ("r.graph", "2 1 1\n2 .5\n1 .5\n", [(0, 1, 0.5), (1, 0, 0.5)]),
    ],
)
def test_real_weights_in_every_text_format(tmp_path, name, text, expected):
    g = load(write(tmp_path, name, text))
    assert g.is_float and g.weights.dtype == np.float64 and g.meta["weights"] == "file"
    assert arcs(g) == expected


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("r.txt", "5.5 6\n", "node id must be an integer, got '5.5'"),
        ("r.gr", "p sp 2 1\na 1 2.0 3\n", "node id must be an integer, got '2.0'"),
        ("r.graph", "2 1\n2.0\n1\n", "neighbour id must be an integer"),
        ("r.graph", "2.0 1\n2\n1\n", "header field must be an integer"),
        ("r.txt", "1 2 nan\n", "expected a number, got 'nan'"),
    ],
)
def test_real_numbers_where_integers_belong_are_refused(tmp_path, name, text, message):
    with pytest.raises(GraphFormatError, match=re.escape(message)):
        load(write(tmp_path, name, text))


def test_files_keep_their_node_ids(tmp_path):
    g = load(write(tmp_path, "4.txt", "# ids 7, 13, 20\n7 13 1\n13 20 2\n20 7 4\n"))
    assert g.labels.tolist() == [7, 13, 20]
    r = sssp.solve(g, g.index_of(13), backend="cpu")
    assert {g.label_of(i): int(d) for i, d in enumerate(r.dist)} == {13: 0, 20: 2, 7: 6}
    dense = load(write(tmp_path, "d.txt", "0 1\n1 2\n"))
    assert dense.labels is None
    gr = load(write(tmp_path, "g.gr", GR))
    assert gr.labels.tolist() == list(range(1, gr.n + 1))


def test_cli_source_is_the_files_id(tmp_path, capsys):
    from sssp.cli import main

    path = write(tmp_path, "4.wel.txt", "7 13 1.5\n13 20 2\n20 7 0.25\n")
    assert main(["solve", str(path), "--source", "13", "--backend", "cpu", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][0]["source"] == 13 and out["runs"][0]["max_dist"] == 2.25
    assert main(["solve", str(path), "--source", "14", "--backend", "cpu"]) == 1
    assert "node id 14 is not in the graph" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_bad_seed_is_one_clear_error(tmp_path, seed):
    with pytest.raises(InvalidGraphError, match="seed must be a non-negative integer"):
        load(write(tmp_path, "t.graph", METIS), weights="random", seed=seed)


def test_streamed_compressed_file_over_several_blocks(tmp_path):
    from sssp.formats import _textio, parse_bytes

    rng = np.random.default_rng(3)
    rows = rng.integers(0, 5000, size=(200_000, 2))
    text = "".join(
        f"{u} {v} {w}\n"
        for (u, v), w in zip(rows.tolist(), rng.random(len(rows)).round(3).tolist(), strict=True)
    )
    data = text.encode()
    assert len(data) > 2 * _textio.CHUNK_BYTES
    path = tmp_path / "big.txt.gz"
    path.write_bytes(gzip.compress(data, compresslevel=1))
    g = load(path)
    assert g == parse_bytes(data, "snap", path=path)
    src, dst, w = g.edges()
    assert g.m == len(rows) and np.isclose(
        w.sum(), sum(float(x.split()[2]) for x in text.splitlines())
    )


def test_parsing_memory_stays_below_four_times_the_csr(tmp_path):
    """The bound bench_parse.py measures on 64 MB, here on a 20 MB edge list in random order
    (smaller files are dominated by one block's fixed working set, ~20 MB)."""
    import tracemalloc

    rng = np.random.default_rng(9)
    m = 1_500_000
    rows = rng.integers(0, m // 8, size=(m, 2)).tolist()
    path = tmp_path / "e.txt"
    path.write_text("".join(f"{u}\t{v}\n" for u, v in rows))
    del rows
    tracemalloc.start()
    try:
        g = load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    csr = g.indptr.nbytes + g.indices.nbytes + g.weights.nbytes
    assert g.m == m and peak < 4 * csr, (peak, csr)


def test_an_interrupt_inside_zipfile_reaches_the_caller_as_itself(tmp_path, monkeypatch):
    """A Ctrl-C (or a signal's exception) that lands inside zipfile while it opens a member
    leaves that member's writing handle open; the archive's close would then raise a ValueError
    in its place (and again when it is collected), which made ``sssp generate`` stopped by
    SIGTERM exit 1 with a traceback instead of 143. The interrupt itself must come out, alone."""
    import gc
    import sys
    import zipfile

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    unraisable = []
    monkeypatch.setattr(zipfile._ZipWriteFile, "__init__", interrupted)
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    g = sssp.generate("random", size=64, degree=4, seed=0)
    with pytest.raises(KeyboardInterrupt) as exc:
        sssp.save(g, tmp_path / "g.npz")
    assert exc.value.__context__ is None  # nothing raised while handling it either
    del exc
    gc.collect()
    assert unraisable == []
