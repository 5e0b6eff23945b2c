"""Slow, line-by-line Python readers of the four text formats, written from the format rules in
``sssp.formats`` and independent of its vectorised code; plus random valid files and mutations
of them. The fuzz tests (``tests/test_fuzz_readers.py``) and the long fuzz run
(``benchmarks/fuzz_readers.py``) check that ``sssp.formats`` returns exactly the graph these
readers return, or a ``GraphFormatError`` exactly when they refuse the file.

A reference reader returns ``(n, labels, arcs)`` (Matrix Market adds whether its field is real)
with ``arcs`` a list of ``(u, v, w)`` in 0-based node indices (``w`` None for unweighted files)
and ``labels`` the file's ids (a list), or raises :class:`Refused`.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter

__all__ = ["FORMATS", "Refused", "check", "mutate", "random_file", "read"]

FORMATS = ("metis", "dimacs", "mtx", "snap")
_INT = re.compile(rb"[+-]?[0-9]+\Z")
_REAL = re.compile(rb"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")
_WS = b" \t\n\r\x0b\x0c"
MAX_INT = 2**53
INT32_MAX = 2**31 - 1
FREE_NODES = 1 << 20


class Refused(Exception):
    """The reference reader rejects the file."""


def _lines(data: bytes) -> list[bytes]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\n" not in data and b"\r" in data:
        data = data.replace(b"\r", b"\n")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _number(tok: bytes, *, integer: bool, big_real: bool = False) -> int | float:
    """A token as int (integer syntax) or float (decimal real); Refused otherwise. ``big_real``:
    an integer too large to be exact is read as a real (a Matrix Market ``real`` field's value)."""
    if _INT.match(tok):
        v = int(tok)
        if abs(v) >= MAX_INT:
            if big_real and not integer and math.isfinite(float(v)):
                return float(v)
            raise Refused(f"too large {tok!r}")
        return v
    if not integer and _REAL.match(tok):
        v = float(tok)
        if v in (float("inf"), float("-inf")):
            raise Refused(f"too large {tok!r}")
        return v
    raise Refused(f"not a number {tok!r}")


def _tokens(line: bytes, *, big_real: bool = False) -> list[bytes]:
    for tok in line.split():
        _number(tok, integer=False, big_real=big_real)  # every token of a data line: a number
    return line.split()


def _weight(tok: bytes) -> int | float:
    w = _number(tok, integer=False)
    if w < 0:
        raise Refused("negative weight")
    return w


def _check_nodes(n: int, nbytes: int) -> None:
    if n < 0 or n > INT32_MAX or (n > FREE_NODES and n > 16 * nbytes):
        raise Refused(f"node count {n}")


def read_snap(data: bytes) -> tuple[int, list | None, list]:
    lines = _lines(data)
    rows = []
    for ln in lines:
        if ln[:1] in (b"#", b"%"):
            continue
        toks = _tokens(ln)
        if toks:
            rows.append(toks)
    if not rows:
        raise Refused("empty")
    width = len(rows[0])
    if width not in (2, 3) or any(len(r) != width for r in rows):
        raise Refused("width")
    edges = []
    for r in rows:
        u, v = (_number(t, integer=True) for t in r[:2])
        if u < 0 or v < 0:
            raise Refused("negative id")
        edges.append((u, v, _weight(r[2]) if width == 3 else None))
    ids = sorted({x for u, v, _ in edges for x in (u, v)})
    index = {x: i for i, x in enumerate(ids)}
    labels = None if ids == list(range(len(ids))) else ids
    return len(ids), labels, [(index[u], index[v], w) for u, v, w in edges]


def read_dimacs(data: bytes) -> tuple[int, list | None, list]:
    lines = _lines(data)
    n = m = None
    arcs = []
    for ln in lines:
        kind, sep = ln[:1], ln[1:2]
        if kind == b"c":
            continue
        if kind == b"p" and (sep == b"" or sep in _WS):
            if n is not None:
                raise Refused("second p")
            f = ln.split()
            if len(f) != 4 or f[1] != b"sp" or not all(x.isdigit() and len(x) < 19 for x in f[2:]):
                raise Refused("bad p")
            n, m = int(f[2]), int(f[3])
            if n > INT32_MAX:
                raise Refused("n")
            continue
        if kind == b"a" and (sep == b"" or sep in _WS):
            if n is None:
                raise Refused("arc before p")
            toks = _tokens(ln[1:])
            if len(toks) != 3:
                raise Refused("arc fields")
            u, v = (_number(t, integer=True) for t in toks[:2])
            if not (1 <= u <= n and 1 <= v <= n):
                raise Refused("id range")
            arcs.append((u - 1, v - 1, _weight(toks[2])))
            if len(arcs) > m:
                raise Refused("too many arcs")
            continue
        if kind == b"" or kind in _WS:
            if _tokens(ln):
                raise Refused("untagged line")
            continue
        raise Refused("line kind")
    if n is None or len(arcs) != m:
        raise Refused("no p / arc count")
    _check_nodes(n, len(data))
    return n, list(range(1, n + 1)), arcs


def read_metis(data: bytes) -> tuple[int, list | None, list]:
    lines = [ln for ln in _lines(data) if ln[:1] != b"%"]
    h = 0
    while h < len(lines) and not _tokens(lines[h]):
        h += 1
    if h == len(lines):
        raise Refused("empty")
    head = [_number(t, integer=True) for t in _tokens(lines[h])]
    if not 2 <= len(head) <= 4:
        raise Refused("header")
    n, m = head[0], head[1]
    fmt = head[2] if len(head) > 2 else 0
    ncon = head[3] if len(head) > 3 else 1
    if m < 0 or n < 0 or n > INT32_MAX or fmt not in (0, 1, 10, 11, 100, 101, 110, 111) or ncon < 1:
        raise Refused("header values")
    body = lines[h + 1 :]
    if len(body) < n or any(_tokens(ln) for ln in body[n:]):
        raise Refused("vertex line count")
    ewgt = fmt % 10 == 1
    skip = fmt // 100 + (ncon if (fmt // 10) % 10 else 0)
    arcs = []
    for v, ln in enumerate(body[:n]):
        toks = _tokens(ln)
        if len(toks) < skip:
            raise Refused("skip fields")
        for t in toks[:skip]:
            _number(t, integer=True)
        rest = toks[skip:]
        if ewgt and len(rest) % 2:
            raise Refused("odd")
        step = 2 if ewgt else 1
        for k in range(0, len(rest), step):
            u = _number(rest[k], integer=True)
            if not 1 <= u <= n:
                raise Refused("neighbour range")
            arcs.append((v, u - 1, _weight(rest[k + 1]) if ewgt else None))
    loops = sum(1 for u, v, _ in arcs if u == v)
    if 2 * m not in (len(arcs) + loops, len(arcs)):
        raise Refused("m")
    out, inn = Counter(u for u, _, _ in arcs), Counter(v for _, v, _ in arcs)
    if out != inn:
        raise Refused("asymmetric")
    _check_nodes(n, len(data))
    return n, list(range(1, n + 1)), arcs


def read_mtx(data: bytes) -> tuple[int, list | None, list]:
    lines = _lines(data)
    if not lines or not lines[0].startswith(b"%%MatrixMarket"):
        raise Refused("banner")
    words = lines[0].split()
    if len(words) != 5 or words[0] != b"%%MatrixMarket":
        raise Refused("banner words")
    try:
        obj, layout, field, symmetry = (w.decode("ascii").lower() for w in words[1:])
    except UnicodeDecodeError:
        raise Refused("banner ascii") from None
    field = {"double": "real"}.get(field, field)
    if (
        obj != "matrix"
        or layout != "coordinate"
        or field not in ("pattern", "integer", "real")
        or (symmetry not in ("general", "symmetric"))
    ):
        raise Refused("banner kind")
    real = field == "real"  # its values may be integers past 2**53, read as reals
    rows = [toks for ln in lines[1:] if ln[:1] != b"%" and (toks := _tokens(ln, big_real=real))]
    if not rows or len(rows[0]) != 3:
        raise Refused("size line")
    nr, nc, count = (_number(t, integer=True) for t in rows[0])
    if nr != nc or count < 0 or nr < 0 or nr > INT32_MAX:
        raise Refused("size values")
    width = 2 if field == "pattern" else 3
    entries = rows[1:]
    if len(entries) != count or any(len(r) != width for r in entries):
        raise Refused("entries")
    arcs = []
    for r in entries:
        i, j = (_number(t, integer=True) for t in r[:2])
        if not (1 <= i <= nr and 1 <= j <= nr):
            raise Refused("index range")
        w = None
        if width == 3:
            w = _number(r[2], integer=field == "integer", big_real=real)
            if w < 0:
                raise Refused("negative")
            w = float(w) if real else w
        arcs.append((i - 1, j - 1, w))
    if symmetry == "symmetric":
        arcs += [(j, i, w) for i, j, w in arcs if i != j]
    _check_nodes(nr, len(data))
    return nr, list(range(1, nr + 1)), arcs, field == "real"


READERS = {"snap": read_snap, "dimacs": read_dimacs, "metis": read_metis, "mtx": read_mtx}


def read(fmt: str, data: bytes) -> tuple[int, list | None, list, bool]:
    """The reference reading of ``data`` as ``fmt``: ``(n, labels, arcs, real)`` with ``real``
    whether the graph has real weights; raises Refused.

    Includes the rules the graph model adds: a file that looks like another format is refused,
    and so are weights whose distances could overflow int64 (or float64 for real weights).
    """
    from sssp.formats import _sniff_strong

    strong = _sniff_strong(data)
    if strong is not None and strong[0] != fmt:
        raise Refused(f"looks like {strong[0]}")
    n, labels, arcs, *real = READERS[fmt](data)
    ws = [w for _, _, w in arcs if isinstance(w, float)]
    if ws and not math.isfinite(float(n + 1) * max(ws)):
        raise Refused("float overflow")
    ints = [w for _, _, w in arcs if isinstance(w, int)]
    if not ws and ints and (n + 1) * max(ints) >= 2**63:
        raise Refused("int64 overflow")
    return n, labels, arcs, bool(ws) or any(real)


def check(fmt: str, data: bytes) -> str:
    """Read ``data`` with ``sssp.formats`` and with the reference; return ``"match"`` when both
    give the same graph (ids, arcs, weights and weight kind) and ``"refused"`` when both refuse.

    Raises
    ------
    AssertionError
        They disagree: a graph where the reference refuses (or the reverse), a different
        graph, or an exception other than :class:`sssp.SSSPError` (a crash).
    """
    from sssp.errors import SSSPError
    from sssp.formats import parse_bytes

    try:
        expected = read(fmt, data)
    except Refused as why:
        expected, reason = None, str(why)
    try:
        g = parse_bytes(data, fmt, path="fuzz")
    except SSSPError as err:
        assert expected is None, f"refused a file the reference reads: {err} ({data!r})"
        assert "Traceback" not in str(err) and "\n" not in str(err), (
            f"message is not one line: {err!r}"
        )
        return "refused"
    assert expected is not None, f"read a file the reference refuses ({reason}): {data!r}"
    n, labels, arcs, real = expected
    assert g.n == n, (g.n, n, data)
    assert (None if g.labels is None else g.labels.tolist()) == (labels or None), data
    assert g.is_float == real, data
    want = sorted((u, v, 1 if w is None else w) for u, v, w in arcs)
    src, dst, w = g.edges()
    got = sorted(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True))
    assert got == want, (got, want, data)
    return "match"


# -- random valid files and their mutations -------------------------------------------------------
def _fmt_weight(rng: random.Random, w: float | int) -> str:
    if isinstance(w, int):
        return str(w)
    return rng.choice(["%r", "%.3f", "%.2e", "%g"]) % w if rng.random() < 0.5 else repr(w)


def _weights(rng: random.Random, m: int) -> list:
    kind = rng.choice(["int", "real", "mixed"])
    out = []
    for _ in range(m):
        if kind == "int" or (kind == "mixed" and rng.random() < 0.5):
            out.append(rng.randint(0, 20))
        else:
            out.append(rng.choice([0.5, 0.25, 1e-3, 2.5e2, round(rng.uniform(0, 50), 3)]))
    return out


def random_file(rng: random.Random, fmt: str) -> bytes:
    """A small valid file of ``fmt`` (random graph, random layout choices)."""
    n = rng.randint(1, 9)
    nl = rng.choice(["\n", "\n", "\r\n"])
    sep = rng.choice([" ", " ", "\t", "  "])
    out: list[str] = []
    if fmt == "snap":
        ids = rng.sample(range(0, rng.choice([n, 3 * n, 1000])), n) if n else []
        m = rng.randint(1, 12)
        weighted = rng.random() < 0.5
        w = _weights(rng, m)
        if rng.random() < 0.5:
            out.append("# comment")
        for k in range(m):
            u, v = rng.choice(ids), rng.choice(ids)
            out.append(sep.join([str(u), str(v)] + ([_fmt_weight(rng, w[k])] if weighted else [])))
    elif fmt == "dimacs":
        m = rng.randint(0, 12)
        w = _weights(rng, m)
        out += ["c random graph", f"p sp {n} {m}"]
        for k in range(m):
            out.append(
                f"a {rng.randint(1, n)}{sep}{rng.randint(1, n)}{sep}{_fmt_weight(rng, w[k])}"
            )
    elif fmt == "metis":
        pairs = [(rng.randint(1, n), rng.randint(1, n)) for _ in range(rng.randint(0, 10))]
        pairs = [(u, v) for u, v in pairs if u != v]
        weighted = rng.random() < 0.5
        w = _weights(rng, len(pairs))
        adj: dict[int, list[str]] = {v: [] for v in range(1, n + 1)}
        for k, (u, v) in enumerate(pairs):
            wt = [_fmt_weight(rng, w[k])] if weighted else []
            adj[u] += [str(v), *wt]
            adj[v] += [str(u), *wt]
        out.append(f"{n} {len(pairs)}" + (" 1" if weighted else ""))
        if rng.random() < 0.3:
            out.insert(0, "% comment")
        out += [sep.join(adj[v]) for v in range(1, n + 1)]
    else:
        field = rng.choice(["pattern", "integer", "real"])
        symmetry = rng.choice(["general", "symmetric"])
        m = rng.randint(0, 10)
        w = [rng.randint(0, 20) for _ in range(m)] if field == "integer" else _weights(rng, m)
        out += [f"%%MatrixMarket matrix coordinate {field} {symmetry}", "% comment", f"{n} {n} {m}"]
        for k in range(m):
            i, j = rng.randint(1, n), rng.randint(1, n)
            if symmetry == "symmetric":
                i, j = max(i, j), min(i, j)
            out.append(
                f"{i}{sep}{j}" + ("" if field == "pattern" else f"{sep}{_fmt_weight(rng, w[k])}")
            )
    text = nl.join(out) + (nl if rng.random() < 0.8 else "")
    return text.encode()


_JUNK = [
    b"\x00",
    b"\r",
    b"\n",
    b" ",
    b"\t",
    b".",
    b"-",
    b"+",
    b"e",
    b"E",
    b"x",
    b"_",
    b"%",
    b"#",
    b"0",
    b"1",
    b"9",
    b"a ",
    b"c ",
    b"p sp ",
    b"\xef\xbb\xbf",
    b"\xff",
    b"1e400",
    b"9007199254740993",
    b"inf",
    b"nan",
    b"0x5",
    b"12abc",
    b"2.9",
    b"-0",
    b"\x1c",
]


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to three random edits: insert, replace or delete bytes, cut the end, duplicate or
    drop a line."""
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        pos = rng.randint(0, len(data))
        if op == 0:
            data = data[:pos] + rng.choice(_JUNK) + data[pos:]
        elif op == 1 and data:
            data = data[:pos] + rng.choice(_JUNK) + data[pos + 1 :]
        elif op == 2 and data:
            data = data[:pos] + data[pos + rng.randint(1, 4) :]
        elif op == 3:
            data = data[:pos]
        else:
            lines = data.split(b"\n")
            k = rng.randrange(len(lines))
            lines = lines[:k] + ([lines[k], lines[k]] if op == 4 else []) + lines[k + 1 :]
            data = b"\n".join(lines)
    return data
