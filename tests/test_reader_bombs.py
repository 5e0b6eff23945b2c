"""Compressed memory bombs: a few kilobytes of file that declare a huge graph. Each reader checks
the sizes a header (or an ``.npz`` member's ``.npy`` header) declares against what the file can
back and against a memory budget before it allocates, so each bomb ends in one clean error line,
fast and in little memory. Measured on ``sssp info`` in a child process: its peak resident set
(``VmHWM``, read as it exits: ``wait4``'s maximum also counts the memory of the test process it
was forked from, which grows with the tests run before), and once under an address-space limit
(``RLIMIT_AS``)."""

from __future__ import annotations

import gzip
import io
import os
import resource
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

import sssp
from sssp.errors import GraphFormatError
from sssp.formats import _textio, parse_bytes

pytestmark = pytest.mark.timeout(300)

SSSP = [sys.executable, "-m", "sssp.cli"]
PEAK_CLI = """\
import atexit, os, runpy, sys
def _peak():
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    with open(os.environ["SSSP_TEST_PEAK"], "w") as out:
        out.write(str(kb))
atexit.register(_peak)
sys.argv = ["sssp", *sys.argv[1:]]
runpy.run_module("sssp.cli", run_name="__main__")
"""
"""``python -m sssp.cli`` that writes its own peak resident set (kB) to $SSSP_TEST_PEAK as it
exits (a new process image starts its own peak; the maximum ``wait4`` reports does not)."""
ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 10
LIMIT_RSS = 1 << 30
N_BOMB = 1 << 28  # 268 435 456 nodes: ~10.8 GB once allocated
# Padding that the old limit (16 nodes per byte of file) counted: 2 bytes a line, 16.8 MB.
PAD_LINES = 1 << 23


def _gzip(path: Path, head: bytes, line: bytes, lines: int) -> Path:
    with gzip.open(path, "wb", compresslevel=6) as fh:
        fh.write(head)
        block = line * (1 << 20)
        for _ in range(lines >> 20):
            fh.write(block)
    return path


def _info(path: Path, *, preexec=None) -> tuple[int, float, int, str]:
    """``sssp info PATH`` in a child: (exit status, seconds, peak RSS bytes, stderr)."""
    peak = path.with_name(path.name + ".peak")
    peak.unlink(missing_ok=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", PEAK_CLI, "info", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        preexec_fn=preexec,
        env={**os.environ, "SSSP_TEST_PEAK": str(peak)},
    )
    try:
        _, status, _ = os.wait4(proc.pid, 0)
    finally:
        proc.returncode = 0  # reaped by wait4
    err = proc.stderr.read().decode()
    proc.stdout.close()
    proc.stderr.close()
    rss = int(peak.read_text()) * 1024 if peak.exists() else -1
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, rss, err


def _assert_clean_refusal(path: Path, expected: str) -> None:
    rc, seconds, rss, err = _info(path)
    assert seconds < LIMIT_S, f"{seconds:.1f} s: {err}"
    assert 0 < rss < LIMIT_RSS, f"{rss / 2**20:.0f} MiB resident: {err}"
    assert rc == 1, err
    assert err.count("\n") == 1 and err.startswith(f"sssp: error: {path}") and expected in err, err


# -- text formats: a header declaring 2**28 nodes, padded ----------------------------------------


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bombs")
    return {
        "dimacs": _gzip(d / "bomb.gr.gz", b"p sp %d 0\n" % N_BOMB, b"c\n", PAD_LINES),
        "mtx": _gzip(
            d / "bomb.mtx.gz",
            b"%%%%MatrixMarket matrix coordinate pattern general\n%d %d 0\n" % (N_BOMB, N_BOMB),
            b"%\n",
            PAD_LINES,
        ),
        "metis": _gzip(d / "bomb.graph.gz", b"%d 0\n" % N_BOMB, b"%\n", PAD_LINES),
        # Blank lines are vertex lines: a header that edges back, and 2**25 vertices without one.
        "metis-blank": _gzip(d / "blank.graph.gz", b"%d %d\n" % (1 << 25, 1 << 26), b"\n", 1 << 25),
    }


@pytest.mark.parametrize(
    "fmt, expected",
    [
        ("dimacs", f"{N_BOMB} nodes but 0 arcs declared"),
        ("mtx", f"{N_BOMB} nodes but 0 entries declared"),
        ("metis", f"{N_BOMB} nodes but 0 edges declared"),
        ("metis-blank", "the vertex lines hold 0 neighbour entries"),
    ],
)
def test_padded_header_bomb_is_refused_fast_and_small(bombs, fmt, expected):
    assert bombs[fmt].stat().st_size < 100_000  # tens of kilobytes on disk
    _assert_clean_refusal(bombs[fmt], expected)


def test_bomb_under_an_address_space_limit_is_a_clean_error(bombs):
    """Under RLIMIT_AS the reader's budget shrinks with the limit: a clean message, not the
    "out of memory" of a failed allocation."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    rc, _, _, err = _info(bombs["dimacs"], preexec=limit)
    assert rc == 1 and "nodes but 0 arcs declared" in err and "out of memory" not in err, err
    big = b"p sp 1000000 400000000\n"  # backed by its m, but 16 GB: over the 2 GiB limit
    path = bombs["dimacs"].with_name("budget.gr")
    path.write_bytes(big)
    rc, _, _, err = _info(path, preexec=limit)
    assert rc == 1 and "more than the 2.0 GiB this process may use" in err, err


def test_declared_sizes_are_checked_on_the_header_line():
    with pytest.raises(GraphFormatError, match=r"x:1: 2000000 nodes but 1000 arcs declared"):
        parse_bytes(b"p sp 2000000 1000\n", "dimacs", path="x")
    with pytest.raises(
        GraphFormatError, match=r"x:2: .* more than the 1.0 KiB this process may use"
    ):
        _textio.check_declared(10, 100, "x", line=2, budget=1024)
    _textio.check_declared(
        _textio.FREE_NODE_LIMIT, 0, "x", line=1
    )  # small enough to take at its word
    _textio.check_declared(4 * 1_000_000, 1_000_000, "x", line=1)  # 4 nodes per arc beyond it
    assert 0 < _textio.memory_budget()


def test_a_graph_of_isolated_nodes_within_the_limit_still_loads():
    g = parse_bytes(b"p sp 1048576 1\na 1 2 3\n", "dimacs")
    assert (g.n, g.m) == (1 << 20, 1)
    g = parse_bytes(b"%d 1\n2\n1\n" % (1 << 20) + b"\n" * ((1 << 20) - 2), "metis")
    assert (g.n, g.m) == (1 << 20, 2)


# -- .npz: a member whose .npy header declares 2**31 entries -----------------------------------
BLOCK = 1 << 24


def _zeros_member(name: str, header: bytes, count: int) -> tuple[str, bytes, int, int]:
    """(name, raw deflate data, CRC-32, size) of a member holding ``header`` and ``count`` zero
    bytes, made fast: after a full flush the compressor starts afresh, so every 16 MiB block of
    zeros compresses to the same bytes, compressed once and repeated."""
    assert count % BLOCK == 0 and len(header) < BLOCK
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = header + bytes(BLOCK - len(header))
    data = [comp.compress(first) + comp.flush(zlib.Z_FULL_FLUSH)]
    block = comp.compress(bytes(BLOCK)) + comp.flush(zlib.Z_FULL_FLUSH)
    data += [block] * (count // BLOCK - 1)
    data.append(comp.compress(bytes(len(header))) + comp.flush())
    crc, zeros = zlib.crc32(first), bytes(BLOCK)
    for _ in range(count // BLOCK - 1):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(bytes(len(header)), crc)
    return name, b"".join(data), crc, len(header) + count


def _array_member(name: str, array: np.ndarray) -> tuple[str, bytes, int, int]:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=False)
    body = buf.getvalue()
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    return f"{name}.npy", comp.compress(body) + comp.flush(), zlib.crc32(body), len(body)


def _zip(path: Path, members: list[tuple[str, bytes, int, int]]) -> None:
    """A zip archive (deflated members, sizes below 4 GiB) of (name, raw deflate data, CRC-32,
    uncompressed size) members, written as zipfile writes one."""
    out = io.BytesIO()
    central = []
    for name, data, crc, size in members:
        offset, raw = out.tell(), name.encode()
        out.write(
            struct.pack(
                "<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), size, len(raw), 0
            )
        )
        out.write(raw + data)
        central.append(
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                20,
                20,
                0,
                8,
                0,
                0,
                crc,
                len(data),
                size,
                len(raw),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + raw
        )
    start = out.tell()
    out.write(b"".join(central))
    out.write(
        struct.pack(
            "<4s4H2LH",
            b"PK\x05\x06",
            0,
            0,
            len(central),
            len(central),
            out.tell() - start,
            start,
            0,
        )
    )
    path.write_bytes(out.getvalue())


def _npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        head, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return head.getvalue()


def _graph_members(skip: str) -> list[tuple[str, bytes, int, int]]:
    """The members of a saved 2-node graph with one edge, but ``skip``."""
    arrays = {
        "indptr": np.array([0, 1, 1], dtype=np.int64),
        "indices": np.array([1], dtype=np.int32),
        "weights": np.array([1], dtype=np.int32),
        "name": np.array("bomb"),
        "meta": np.array("{}"),
        "meta_arrays": np.array("[]"),
        "format_version": np.array(1, dtype=np.int64),
    }
    return [_array_member(k, v) for k, v in arrays.items() if k != skip]


@pytest.fixture(scope="module")
def npz_bomb(tmp_path_factory) -> Path:
    """A 2-node graph whose ``indices`` member declares 2**31 uint8 entries: 2 MB on disk,
    2.1 GB decompressed (within deflate's ratio)."""
    path = tmp_path_factory.mktemp("npz") / "bomb.npz"
    _zip(
        path,
        [
            _zeros_member("indices.npy", _npy_header("|u1", (1 << 31,)), 1 << 31),
            *_graph_members(skip="indices"),
        ],
    )
    return path


def test_the_member_builder_writes_what_zipfile_reads(tmp_path):
    import zipfile

    header = _npy_header("|u1", (1 << 25,))
    _zip(
        tmp_path / "z.npz",
        [_zeros_member("z.npy", header, 1 << 25), *_graph_members(skip="indices")],
    )
    with zipfile.ZipFile(tmp_path / "z.npz") as zf:
        assert zf.read("z.npy") == header + bytes(1 << 25)  # its CRC checked by zipfile
        assert np.load(io.BytesIO(zf.read("indptr.npy"))).tolist() == [0, 1, 1]


def test_npz_bomb_is_refused_from_the_member_header(npz_bomb):
    assert npz_bomb.stat().st_size < 4 << 20
    _assert_clean_refusal(npz_bomb, "member 'indices' has shape (2147483648,), expected (1,)")


def test_npz_member_declaring_more_than_deflate_can_give(tmp_path):
    """3 GiB declared in a hundred bytes of deflate data: refused before decompression."""
    header = _npy_header("<i4", ((3 << 30) // 4,))
    body = header + bytes(64)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    lie = (
        "indices.npy",
        comp.compress(body) + comp.flush(),
        zlib.crc32(body),
        len(header) + (3 << 30),
    )
    _zip(tmp_path / "lie.npz", [lie, *_graph_members(skip="indices")])
    with pytest.raises(GraphFormatError, match="more than deflate can expand to"):
        sssp.load(tmp_path / "lie.npz")


def test_npz_member_whose_header_disagrees_with_its_size(tmp_path):
    header = _npy_header("<i4", (1000,))
    body = header + bytes(40)  # 10 entries follow, not 1000
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    short = ("indices.npy", comp.compress(body) + comp.flush(), zlib.crc32(body), len(body))
    _zip(tmp_path / "short.npz", [short, *_graph_members(skip="indices")])
    with pytest.raises(
        GraphFormatError, match=r"member 'indices' declares 1000 int32 .* but the archive says 40 B"
    ):
        sssp.load(tmp_path / "short.npz")


def test_npz_within_budget_round_trips_from_a_compressed_file(tmp_path):
    g = sssp.generate("random", size=1000, degree=5, seed=1)
    sssp.save(g, tmp_path / "g.npz")
    (tmp_path / "g.npz.gz").write_bytes(gzip.compress((tmp_path / "g.npz").read_bytes()))
    for path in (tmp_path / "g.npz", tmp_path / "g.npz.gz"):
        back = sssp.load(path)
        assert np.array_equal(back.indptr, g.indptr) and np.array_equal(back.indices, g.indices)
    (tmp_path / "junk.npz.gz").write_bytes(gzip.compress(bytes(1 << 20)))
    with pytest.raises(GraphFormatError, match="missing zip signature"):
        sssp.load(tmp_path / "junk.npz.gz")
