"""Fuzzing of every text reader against the independent reference readers of
``tests/reference_readers.py``: random valid files, mutated, must give exactly the reference's
graph or a one-line ``SSSPError`` exactly when the reference refuses them. Never a crash, never
a traceback, never a silently different graph.

The budget is fixed (about a minute on a 2-core machine: 1 200 cases per format here; the
5-minute run of ``benchmarks/fuzz_readers.py`` is made by hand). Files that once broke a reader are kept
under ``tests/data/readers/`` and checked the same way on every run.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sssp
from sssp.errors import GraphFormatError
from sssp.formats import _textio, load, parse_bytes

try:  # tests/ as a package (tests/__init__.py) or as a rootdir-relative path
    from tests.reference_readers import FORMATS, check, mutate, random_file
except ImportError:  # pytest's default "prepend" import mode puts tests/ itself on sys.path
    from reference_readers import FORMATS, check, mutate, random_file  # type: ignore[no-redef]

pytestmark = pytest.mark.timeout(300)

DATA = Path(__file__).parent / "data" / "readers"
SUFFIX_FORMAT = {".gr": "dimacs", ".graph": "metis", ".mtx": "mtx", ".txt": "snap"}
FUZZ = settings(max_examples=1200, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(rng=st.randoms(use_true_random=False), mutated=st.integers(0, 4))
def test_reader_agrees_with_the_reference(fmt, rng, mutated):
    data = random_file(rng, fmt)
    if mutated:  # 4 in 5 cases
        data = mutate(rng, data)
    check(fmt, data)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=False), chunk=st.integers(1, 40))
def test_blocks_do_not_change_the_result(fmt, rng, chunk, monkeypatch_module):
    """Parsing in blocks of a few bytes gives the graph (or the refusal) of one block."""
    data = mutate(rng, random_file(rng, fmt)) if rng.random() < 0.5 else random_file(rng, fmt)
    data = data.replace(b"\r", b" ")  # bare-CR detection looks at the first block only
    whole = _outcome(fmt, data)
    default = _textio.CHUNK_BYTES
    monkeypatch_module.setattr(_textio, "CHUNK_BYTES", chunk)
    try:
        assert _outcome(fmt, data) == whole
    finally:
        monkeypatch_module.setattr(_textio, "CHUNK_BYTES", default)


def _outcome(fmt: str, data: bytes):
    try:
        g = parse_bytes(data, fmt)
    except GraphFormatError:
        return "refused"
    labels = None if g.labels is None else g.labels.tolist()
    return (
        g.n,
        labels,
        g.weights.dtype.str,
        sorted(zip(*(a.tolist() for a in g.edges()), strict=True)),
    )


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.mark.parametrize("path", sorted(DATA.iterdir()), ids=lambda p: p.name)
def test_regression_files(path):
    check(SUFFIX_FORMAT[path.suffix], path.read_bytes())


# -- the cases of the report, one by one -----------------------------------------------------------
def test_matrix_market_that_crashed_scipy_reads_or_is_refused_cleanly():
    g = load(DATA / "mtx-trailing-space-no-newline.mtx")
    assert g.n == 3 and g.edges()[0].tolist() == [1] and g.edges()[1].tolist() == [2]
    with pytest.raises(
        GraphFormatError, match=r"mtx-nul-byte.mtx:3: unexpected control character 0x00"
    ):
        load(DATA / "mtx-nul-byte.mtx")


@pytest.mark.parametrize(
    "name, message",
    [
        ("mtx-numeric-prefix.mtx", ":3: expected a number, got '12abc'"),
        ("mtx-hex.mtx", ":3: expected a number, got '-0x5'"),
        ("mtx-underscore.mtx", ":3: expected a number, got '1_000'"),
        ("mtx-real-index.mtx", ":3: row/column index must be an integer, got '2.9'"),
        ("mtx-extra-token.mtx", ":3: entry line must hold 3 numbers"),
        ("mtx-extra-entry.mtx", ":4: more entries than the 1 declared"),
    ],
)
def test_corrupted_matrix_market_numbers_are_refused(name, message):
    with pytest.raises(GraphFormatError) as info:
        load(DATA / name)
    assert message in str(info.value)


def test_bom_and_bare_cr_line_ends():
    g = load(DATA / "snap-bom.txt")
    assert g.labels.tolist() == [7, 13, 20] and g.m == 2
    g = load(DATA / "metis-cr-only.graph")
    assert g.n == 3 and g.m == 4
    with pytest.raises(GraphFormatError, match=r"x.txt:3: mixed line endings"):
        list(_textio.iter_texts(b"0 1\r1 2\r" + b"\n2 3\n", "x.txt", chunk=4))


def test_real_weights_beyond_int64_stay_real():
    g = load(DATA / "snap-1e300.txt")
    r = sssp.solve(g, 0, backend="cpu")
    assert r.dist.tolist() == [0.0, 1e300, 1e300 + 2.5]
    with pytest.raises(GraphFormatError, match="integer 9007199254740992 is too large"):
        load(DATA / "snap-int-2-53.txt")
    with pytest.raises(GraphFormatError, match="number 1e400 is too large"):
        load(DATA / "snap-real-overflow.txt")
    # A Matrix Market real field's value in integer syntax past 2**53 is a real, as any other
    # (the fuzzing found the reference refusing it).
    g = load(DATA / "mtx-real-past-2-53.mtx")
    assert g.weights.dtype == np.float64 and g.weights.tolist() == [0.0, 9.007199254740993e16]


@pytest.mark.parametrize(
    "fmt, data, line, value",
    [
        ("dimacs", b"p sp 5000 1\na 1 2 4611686018427387\n", 2, "4611686018427387"),
        ("snap", b"0 1 5\n1 2 1e308\n2 3 1\n", 2, "1e+308"),
        ("metis", b"2 1 1\n2 1e308\n1 1e308\n", 2, "1e+308"),
        (
            "mtx",
            b"%%MatrixMarket matrix coordinate integer general\n3000 3000 1\n1 2 9000000000000000\n",
            3,
            "9000000000000000",
        ),
    ],
)
def test_weights_whose_distances_overflow_name_file_line_and_value(fmt, data, line, value):
    with pytest.raises(GraphFormatError) as info:
        parse_bytes(data, fmt, path="w")
    assert str(info.value).startswith(f"w:{line}: weight {value} is too large")


def test_declared_size_the_file_cannot_back_is_refused():
    with pytest.raises(
        GraphFormatError, match="67000000 nodes but 0 arcs declared: beyond 1048576 nodes"
    ):
        load(DATA / "dimacs-huge-declared-n.gr")
    with pytest.raises(GraphFormatError, match="exceeds the int32"):
        parse_bytes(
            b"%%MatrixMarket matrix coordinate pattern general\n3000000000 3000000000 0\n", "mtx"
        )


def test_blank_lines_cost_no_memory(tmp_path):
    """A 1 MB .gz of newlines (about 1 GB of text) used to need ~46 bytes of RAM per byte; the
    reader now holds one block at a time. 128 MB of newlines here, to keep the test short."""
    import tracemalloc

    path = tmp_path / "blank.txt.gz"
    path.write_bytes(gzip.compress(b"\n" * (128 << 20), compresslevel=1))
    tracemalloc.start()
    try:
        with pytest.raises(GraphFormatError, match="empty file"):
            load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # per-line tables of one block (~50 bytes per blank line), not the 128 MB of text
    assert peak < 64 << 20


def test_dev_zero_as_an_edge_list_stops_at_once():
    with pytest.raises(GraphFormatError, match="line longer than 65536 bytes"):
        load("/dev/zero", format="snap")
