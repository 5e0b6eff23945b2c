"""The smaller reliability fixes, one test each: output files keep their mode, constructors check
sizes before allocating, ``path_to`` and ``load`` refuse what is not a node or a path, a Matrix
Market ``real`` field reads every decimal spelling, and ``tune`` neither creates a database a
read-only command names nor stores results in a database that vanishes at exit."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

import sssp
from sssp import cli as sssp_cli
from sssp.errors import InvalidArgumentError, InvalidGraphError, InvalidTypeError, SSSPError
from sssp.formats import parse_bytes
from tuner import cli as tune_cli

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def small_graph(tmp_path):
    path = tmp_path / "g.npz"
    sssp.save(sssp.Graph([0, 2, 3, 3], [1, 2, 2], [4, 1, 2]), path)
    return path


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664], ids=oct)
def test_solve_output_keeps_the_mode_of_the_file_it_replaces(small_graph, tmp_path, mode, capsys):
    out = tmp_path / "dist.npy"
    out.write_bytes(b"old")
    os.chmod(out, mode)
    assert sssp_cli.main(["solve", str(small_graph), "--backend", "cpu", "-o", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert np.load(out).tolist() == [0, 4, 1]


def test_solve_output_to_a_read_only_file(small_graph, tmp_path, capsys):
    """Refused as writing it in place would be; root, who may write it, keeps its 0444."""
    out = tmp_path / "dist.npy"
    out.write_bytes(b"keep")
    os.chmod(out, 0o444)
    rc = sssp_cli.main(["solve", str(small_graph), "--backend", "cpu", "-o", str(out)])
    if os.geteuid() == 0:
        assert rc == 0 and np.load(out).tolist() == [0, 4, 1]
    else:
        err = capsys.readouterr().err
        assert rc == 1 and err.count("\n") == 1 and "(the file is read-only)" in err, err
        assert out.read_bytes() == b"keep"
    assert stat.S_IMODE(out.stat().st_mode) == 0o444


def test_atomic_output_refuses_what_this_process_may_not_write(tmp_path, monkeypatch):
    """The same check as above, for root too (os.access is what decides)."""
    from sssp.cliutil import atomic_output

    out = tmp_path / "x.txt"
    out.write_text("keep")
    monkeypatch.setattr(os, "access", lambda path, how: False)
    with pytest.raises(SSSPError, match="the file is read-only"), atomic_output(out, ".txt"):
        pass
    assert out.read_text() == "keep"


def test_from_edges_checks_n_before_allocating():
    with pytest.raises(
        InvalidGraphError, match="n = 1099511627776 nodes exceeds the int32 node-id range"
    ):
        sssp.Graph.from_edges(2**40, [0], [1], [1])


def test_float_indptr_beyond_int64_is_named():
    with pytest.raises(InvalidGraphError, match=r"indptr value 1e\+300 exceeds the int64 range"):
        sssp.Graph(np.array([0.0, 1e300]), np.array([0]), np.array([1]))


def test_path_to_refuses_nodes_outside_the_graph():
    r = sssp.solve(sssp.Graph([0, 1, 2, 2], [1, 2], [1, 1]), 0, backend="cpu")
    assert r.path_to(2) == [0, 1, 2] and r.path_to(np.int64(2)) == [0, 1, 2]
    for bad in (-1, -3, 3, 2**40):
        with pytest.raises(InvalidArgumentError, match=rf"target {bad} is out of range \[0, 3\)"):
            r.path_to(bad)
    for bad in (1.0, "2", True, None):
        with pytest.raises(InvalidTypeError, match="target must be an integer node index"):
            r.path_to(bad)


@pytest.mark.parametrize("value", [None, 3, b"g.gr", ["g.gr"]])
def test_load_refuses_what_is_not_a_path(value):
    with pytest.raises(InvalidTypeError, match="path must be a file path") as info:
        sssp.load(value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, SSSPError)


def test_matrix_market_real_field_reads_every_spelling_of_a_number():
    head = b"%%MatrixMarket matrix coordinate real general\n2 2 1\n"
    for spelling in (
        b"1000000000000000000",
        b"1e18",
        b"1000000000000000000.0",
        b"100000000000000000000",
    ):
        g = parse_bytes(head + b"1 2 " + spelling + b"\n", "mtx")
        assert g.weights.tolist() == [float(spelling)], spelling
    with pytest.raises(
        SSSPError, match="integer 1000000000000000000 is too large"
    ):  # integers stay exact
        parse_bytes(
            b"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1000000000000000000\n",
            "mtx",
        )
    with pytest.raises(SSSPError, match="row/column index 20000000000000000000 is too large"):
        parse_bytes(head + b"1 20000000000000000000 5\n", "mtx")


@pytest.mark.parametrize(
    "command", [["show"], ["report"], ["export", "-o", "out.json"], ["upgrade"]]
)
def test_read_only_tune_commands_never_create_the_database(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "typo.sqlite"
    assert tune_cli.main([*command, "--db", f"sqlite:///{path}"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no such file {path}" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite://"])
def test_tune_refuses_to_store_results_in_memory(url, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rc = tune_cli.main(["--replay", "--graph-class", "deg200", "--size", "49k", "--db", url])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1, err
    assert "is in memory: what `tune run` stores would be lost when it exits" in err
