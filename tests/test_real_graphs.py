"""Every real graph in ``shared/graphs`` loads, with the node and edge counts of SOURCES.tsv.

The folder is ``<repo>/../shared/graphs`` (override with ``SSSP_GRAPHS_DIR``). These files are
the project's ground truth for the readers: CI sets ``SSSP_GRAPHS_DIR``, and then the folder's
absence is a failure. A checkout without the variable and without the folder (a fresh clone)
skips this module with the reason (``tests/graph_folder.py``).

Arc counts: SNAP and DIMACS9 files are directed, so ``Graph.m == edges``. METIS and Matrix Market
(symmetric) files are undirected and SOURCES.tsv counts undirected edges (the METIS header ``m``,
the Matrix Market entry count), so ``Graph.m == 2 * edges - self_loops`` (a self-loop is one arc).
None of the current files has a self-loop in its METIS/Matrix Market form (the SNAP files do, and
keep them as arcs).
"""

from __future__ import annotations

import csv
import gzip
from functools import cache

import numpy as np
import pytest

from sssp.formats import load
from sssp.graph import Graph

try:
    from tests.graph_folder import GRAPHS_DIR, MISSING, SOURCES, skip_unless_present
except ImportError:  # pragma: no cover
    from graph_folder import GRAPHS_DIR, MISSING, SOURCES, skip_unless_present

skip_unless_present()
UNDIRECTED = ("METIS", "MM matrix coordinate pattern symmetric")


def _rows() -> dict[str, dict[str, str]]:
    if not SOURCES.is_file():
        return {}
    with SOURCES.open(newline="") as fh:
        return {row["file"]: row for row in csv.DictReader(fh, delimiter="\t")}


ROWS = _rows()
FILES = sorted(ROWS) or [MISSING]


@cache
def _load(rel: str) -> Graph:
    return load(GRAPHS_DIR / rel)


def test_folder_present_and_complete():
    assert GRAPHS_DIR.is_dir() and SOURCES.is_file(), MISSING
    on_disk = {
        p.relative_to(GRAPHS_DIR).as_posix()
        for p in GRAPHS_DIR.rglob("*")
        if p.is_file() and p.name not in ("README.md", "SOURCES.tsv")
    }
    assert on_disk == set(ROWS), f"files and SOURCES.tsv rows differ: {on_disk ^ set(ROWS)}"


@pytest.mark.parametrize("rel", FILES)
def test_real_graph_counts(rel):
    assert rel != MISSING, MISSING
    row = ROWS[rel]
    g = _load(rel)
    nodes, edges = int(row["nodes"]), int(row["edges"])
    assert g.n == nodes
    src, dst, w = g.edges()
    loops = int(np.count_nonzero(src == dst))
    if row["format"].startswith(UNDIRECTED):
        assert g.meta["directed_from"] == "undirected"
        assert g.m == 2 * edges - loops
        assert loops == 0
    else:
        assert g.meta["directed_from"] == "directed"
        assert g.m == edges
    assert w.min() >= 0
    if "weights" in row["format"]:
        assert g.meta["weights"] == "file"
    else:
        assert g.meta["weights"] == "unit"
        assert w.min() == w.max() == 1


def _pair_set(g: Graph) -> set[tuple[int, int]]:
    src, dst, _ = g.edges()
    return set(zip(src.tolist(), dst.tolist(), strict=True))


@pytest.mark.parametrize(
    "metis_file, mtx_file",
    [
        ("walshaw/data.graph.gz", "mtx/data.mtx.gz"),
        ("walshaw/uk.graph.gz", "mtx/uk.mtx.gz"),
        ("clustering/chesapeake.graph.gz", "mtx/chesapeake.mtx.gz"),
    ],
)
def test_same_graph_in_two_formats(metis_file, mtx_file):
    assert GRAPHS_DIR.is_dir(), MISSING
    a, b = (load(GRAPHS_DIR / rel, weights="random") for rel in (metis_file, mtx_file))
    assert a.n == b.n and a.m == b.m
    assert _pair_set(a) == _pair_set(b)
    # Symmetric random weights: equal on both directions, and equal across the two files.
    wa = {(int(u), int(v)): int(x) for u, v, x in zip(*a.edges(), strict=True)}
    wb = {(int(u), int(v)): int(x) for u, v, x in zip(*b.edges(), strict=True)}
    assert wa == wb
    assert all(wa[(u, v)] == wa[(v, u)] for u, v in wa)


def test_reference_parse_metis_weighted():
    """lesmis (fmt 001) against a plain Python reading, edge by edge."""
    assert GRAPHS_DIR.is_dir(), MISSING
    lines = (
        gzip.decompress((GRAPHS_DIR / "clustering/lesmis.graph.gz").read_bytes())
        .decode()
        .splitlines()
    )
    lines = [ln for ln in lines if not ln.startswith("%")]
    expected = []
    for u, line in enumerate(lines[1:]):
        t = [int(x) for x in line.split()]
        expected += [(u, t[i] - 1, t[i + 1]) for i in range(0, len(t), 2)]
    got = list(zip(*(a.tolist() for a in _load("clustering/lesmis.graph.gz").edges()), strict=True))
    assert got == expected


def test_reference_parse_dimacs_and_snap():
    assert GRAPHS_DIR.is_dir(), MISSING
    text = gzip.decompress((GRAPHS_DIR / "road/rome99.gr.gz").read_bytes()).decode()
    arcs = sorted(
        (int(u) - 1, int(v) - 1, int(w))
        for tag, u, v, w in (ln.split() for ln in text.splitlines() if ln.startswith("a "))
        if tag == "a"
    )
    assert (
        sorted(zip(*(a.tolist() for a in _load("road/rome99.gr.gz").edges()), strict=True)) == arcs
    )

    text = gzip.decompress((GRAPHS_DIR / "snap/ca-GrQc.txt.gz").read_bytes()).decode()
    pairs = [tuple(int(x) for x in ln.split()) for ln in text.splitlines() if ln and ln[0] != "#"]
    g = _load("snap/ca-GrQc.txt.gz")
    ids = g.labels
    assert ids.tolist() == sorted({x for p in pairs for x in p})
    src, dst, _ = g.edges()
    assert sorted(zip(ids[src].tolist(), ids[dst].tolist(), strict=True)) == sorted(pairs)


# Road networks and meshes against small-world graphs: the third class key (sssp.classes).
HIGH_DIAMETER = (
    "walshaw/t60k.graph.gz",
    "road/COL.rw.gr.gz",
    "dimacs10_other/delaunay_n15.graph.gz",
    "walshaw/fe_sphere.graph.gz",
    "road/rome99.gr.gz",
    "clustering/power.graph.gz",
)
LOW_DIAMETER = (
    "snap/CA-CondMat.txt.gz",
    "clustering/as-22july06.graph.gz",
    "snap/wiki-Vote.txt.gz",
    "clustering/cond-mat-2005.graph.gz",
    "walshaw/vibrobox.graph.gz",
)


@pytest.mark.parametrize("rel", HIGH_DIAMETER + LOW_DIAMETER)
def test_diameter_class_separates_roads_and_meshes(rel):
    from sssp.classes import diameter_class

    assert GRAPHS_DIR.is_dir(), MISSING
    est = diameter_class(_load(rel))
    assert est.label == ("highdiam" if rel in HIGH_DIAMETER else "lowdiam"), (rel, est, est.ratio)
