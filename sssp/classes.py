"""The paper's graph classes: size labels (``24k``, ``49k``, ``98k``, ...) and degree classes.

Size ladder
    The paper's sizes are 24 576, 49 152 and 98 304 nodes (3·2^13, 3·2^14, 3·2^15), written
    ``24k``, ``49k`` and ``98k``. The ladder continues by doubling in both directions
    (``12k``, ``6k``, ... and ``196k``, ``393k``, ``786k``, ``1572k``, ...); a label is the node
    count divided by 1000, truncated, as the paper writes them. A graph's size label is the ladder
    step nearest to its node count in log2 (ties go to the larger step).

Degree classes
    By mean out-degree ``d = m / n``: the paper's classes are 2, 20, 200 and "1000 or more"
    (``deg2``, ``deg20``, ``deg200``, ``deg1000``). A graph belongs to the class nearest in
    log10, so the boundaries are the geometric midpoints: ``deg2`` for d < √40 ≈ 6.3,
    ``deg20`` for d < √4000 ≈ 63.2, ``deg200`` for d < √200000 ≈ 447, ``deg1000`` above.

Diameter classes
    A third key, beyond size and degree, separates graphs whose shortest paths are long in hops
    (road networks, meshes: thousands of Crauser phases) from small-world ones (random, social,
    collaboration graphs: tens to hundreds). :func:`diameter_class` estimates the hop diameter by
    a double sweep (a breadth-first search from the node of largest degree, then one from the
    farthest node it reached) on the graph with its edges made undirected, two passes over the
    edges; the graph is ``highdiam`` when that exceeds ``3 * log2(reached nodes)``, else
    ``lowdiam``. On the real graphs of ``../shared/graphs`` (DIMACS10, SNAP, Matrix Market,
    DIMACS9) and the paper's random classes the ratio is 0.2-2.3 for random, Kronecker, social,
    citation and AS graphs (and two stiffness matrices) and 3.5-63 for Delaunay, FE meshes,
    power grids and roads (t60k 41, COL 63), so the boundary at 3 sits in an empty gap.

    A :class:`GraphClass` carries it as its third key (``98k/deg2/highdiam``; low-diameter
    classes print as before, ``98k/deg2``). Only the sparse degree classes are estimated
    (``deg2``, ``deg20``): a graph of mean degree 63 or more is ``lowdiam`` without a search.
    The nearest stored class is looked for among classes of the same diameter first.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import UnknownClassError

if TYPE_CHECKING:
    from .graph import Graph

BASE_SIZE = 24_576  # 3 * 2**13, the paper's smallest class
PAPER_SIZES = ("24k", "49k", "98k")
DEGREE_CLASSES: dict[str, int] = {"deg2": 2, "deg20": 20, "deg200": 200, "deg1000": 1000}
PAPER_DEGREES = tuple(DEGREE_CLASSES)
_LADDER_RANGE = range(-8, 13)  # 96 nodes ... 100M nodes


def _ladder_nodes(step: int) -> int:
    return BASE_SIZE * 2**step if step >= 0 else BASE_SIZE // 2 ** (-step)


def _ladder_label(step: int) -> str:
    return (
        f"{_ladder_nodes(step) // 1000}k"
        if _ladder_nodes(step) >= 1000
        else str(_ladder_nodes(step))
    )


SIZE_LABELS: dict[str, int] = {_ladder_label(k): _ladder_nodes(k) for k in _LADDER_RANGE}


def parse_size(text: str | int) -> int:
    """Node count for a size given as a ladder label (``"49k"``), ``"<k>M"`` (k·2^20, the sizes
    of Martín's graphs) or a plain positive integer.

    Raises
    ------
    UnknownClassError
        For anything else, listing the accepted labels.
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        if int(text) == text and text > 0:
            return int(text)
        raise UnknownClassError(f"unknown size {text!r}: expected a positive integer")
    s = str(text).strip()
    if s in SIZE_LABELS:
        return SIZE_LABELS[s]
    if re.fullmatch(r"[1-9][0-9]*", s):
        return int(s)
    m = re.fullmatch(r"([1-9][0-9]*)M", s)
    if m:
        return int(m.group(1)) * 2**20
    raise UnknownClassError(
        f"unknown size {text!r}: expected a ladder label (24k, 49k, 98k, 196k, ...), "
        "'<k>M' for k*2^20 nodes, "
        "or a positive integer"
    )


def size_label(n: int) -> str:
    """The ladder label nearest to ``n`` nodes in log2."""
    if n <= 0:
        raise UnknownClassError(f"unknown size {n!r}: a graph class needs at least one node")
    step = math.floor(math.log2(n / BASE_SIZE) + 0.5)
    step = min(max(step, _LADDER_RANGE.start), _LADDER_RANGE.stop - 1)
    return _ladder_label(step)


def degree_class(mean_degree: float) -> str:
    """The paper's degree class nearest to ``mean_degree`` in log10."""
    if mean_degree <= 0:
        return "deg2"
    names = list(DEGREE_CLASSES)
    for lo, hi in zip(names, names[1:], strict=False):
        if mean_degree < math.sqrt(DEGREE_CLASSES[lo] * DEGREE_CLASSES[hi]):
            return lo
    return names[-1]


def parse_degree(text: str | int) -> str:
    """Normalise ``"deg200"``, ``"200"`` or ``200`` to a degree-class name."""
    s = str(text).strip()
    if s in DEGREE_CLASSES:
        return s
    if re.fullmatch(r"[1-9][0-9]*", s) and f"deg{s}" in DEGREE_CLASSES:
        return f"deg{s}"
    raise UnknownClassError(
        f"unknown degree class {text!r}: expected one of {', '.join(DEGREE_CLASSES)}"
    )


DIAMETER_CLASSES = ("lowdiam", "highdiam")
HIGH_DIAMETER_RATIO = 3.0
"""A graph is ``highdiam`` when its double-sweep hop diameter exceeds this times log2 of the
number of nodes the sweep reached."""
ESTIMATED_DEGREES = ("deg2", "deg20")
"""Degree classes whose graphs get a diameter estimate; denser ones are ``lowdiam``."""
DIAMETER_PENALTY = 100.0
"""Added to :meth:`GraphClass.distance` between classes of different diameter, larger than any
distance in (log2 size, log10 degree) on the ladder: the same diameter always wins."""


@dataclass(frozen=True, order=True)
class GraphClass:
    """A (size, degree, diameter) class such as ``GraphClass("49k", "deg200")`` or
    ``GraphClass("98k", "deg2", "highdiam")``."""

    size: str
    degree: str
    diameter: str = "lowdiam"

    def __post_init__(self) -> None:
        if self.size not in SIZE_LABELS:
            parse_size(self.size)  # raises with the standard message for non-labels
            raise UnknownClassError(
                f"unknown size {self.size!r}: a graph class needs a ladder label such as 49k"
            )
        parse_degree(self.degree)
        if self.degree not in DEGREE_CLASSES:
            object.__setattr__(self, "degree", parse_degree(self.degree))
        if self.diameter not in DIAMETER_CLASSES:
            raise UnknownClassError(
                f"unknown diameter class {self.diameter!r}: expected {' or '.join(DIAMETER_CLASSES)}"
            )

    @classmethod
    def parse(cls, size: str | int, degree: str | int, diameter: str = "lowdiam") -> GraphClass:
        """Build from user input: any size :func:`parse_size` accepts, snapped to the ladder."""
        return cls(size_label(parse_size(size)), parse_degree(degree), diameter)

    @classmethod
    def from_text(cls, text: str) -> GraphClass:
        """Parse :meth:`__str__`'s form, ``"98k/deg2"`` or ``"98k/deg2/highdiam"``."""
        parts = str(text).split("/")
        if len(parts) not in (2, 3):
            raise UnknownClassError(
                f"unknown graph class {text!r}: expected SIZE/DEGREE[/DIAMETER], e.g. 98k/deg2"
            )
        return cls.parse(*parts)

    @property
    def nodes(self) -> int:
        return SIZE_LABELS[self.size]

    @property
    def mean_degree(self) -> int:
        return DEGREE_CLASSES[self.degree]

    def distance(self, other: GraphClass) -> float:
        """Distance in (log2 size, log10 degree) space, plus :data:`DIAMETER_PENALTY` between
        diameter classes; used to find the nearest stored class."""
        ds = math.log2(self.nodes / other.nodes)
        dd = math.log10(self.mean_degree / other.mean_degree)
        return math.hypot(ds, dd) + (0.0 if self.diameter == other.diameter else DIAMETER_PENALTY)

    def __str__(self) -> str:
        base = f"{self.size}/{self.degree}"
        return base if self.diameter == "lowdiam" else f"{base}/{self.diameter}"


def paper_classes() -> list[GraphClass]:
    """The paper's 12 tuning classes: 24k/49k/98k x deg2/deg20/deg200/deg1000."""
    return [GraphClass(s, d) for s in PAPER_SIZES for d in PAPER_DEGREES]


HIGH_DIAMETER_SIZES = ("24k", "49k", "98k", "196k", "393k")
LARGE_SIZES = ("196k", "393k", "786k", "1572k", "3145k")
"""Sizes of :func:`large_classes`: up to 3.1 M nodes, the class of GAP's scale-22 graphs (4.2 M
nodes) and of road networks of 1-4 M nodes."""


def high_diameter_classes() -> list[GraphClass]:
    """The high-diameter tuning classes (road networks, meshes): 24k to 393k nodes x deg2 and
    deg20; their instances are road-like networks (deg2) and random geometric graphs (deg20)."""
    return [GraphClass(s, d, "highdiam") for s in HIGH_DIAMETER_SIZES for d in ESTIMATED_DEGREES]


def large_classes() -> list[GraphClass]:
    """The tuning classes past the paper's sizes: 196k to 3145k nodes x deg2 and deg20, low
    diameter (random instances: GAP's uniform family, social and web graphs) and, above the
    high-diameter classes' 393k, high diameter (road-like and geometric instances)."""
    low = [GraphClass(s, d) for s in LARGE_SIZES for d in ESTIMATED_DEGREES]
    high = [
        GraphClass(s, d, "highdiam")
        for s in LARGE_SIZES
        if s not in HIGH_DIAMETER_SIZES
        for d in ESTIMATED_DEGREES
    ]
    return low + high


@dataclass(frozen=True)
class DiameterEstimate:
    """Result of :func:`diameter_class`: the double-sweep hop diameter (a lower bound of the
    undirected hop diameter of the start node's component), the nodes that component has, and
    the class."""

    hops: int
    reached: int

    @property
    def ratio(self) -> float:
        """``hops / log2(reached)`` (0 for a component of one node)."""
        return self.hops / math.log2(self.reached) if self.reached > 1 else 0.0

    @property
    def label(self) -> str:
        return "highdiam" if self.ratio > HIGH_DIAMETER_RATIO else "lowdiam"


def diameter_class(graph: Graph) -> DiameterEstimate:
    """Estimate how long ``graph``'s shortest paths are in hops (see *Diameter classes* above):
    two breadth-first searches over the graph with its edges made undirected, O(n + m)."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    n = graph.n
    if graph.m == 0:
        return DiameterEstimate(0, 1)
    a = sp.csr_matrix((np.ones(graph.m, np.float32), graph.indices, graph.indptr), shape=(n, n))
    und = (a + a.T).tocsr()
    degree = np.diff(und.indptr)

    def sweep(start: int) -> tuple[int, int, int]:
        """(farthest node, its hops, nodes reached) of a breadth-first search from ``start``."""
        hops = shortest_path(
            und, method="D", directed=True, unweighted=True, indices=start
        )  # und is symmetric
        reached = np.isfinite(hops)
        far = int(np.argmax(np.where(reached, hops, -1.0)))
        return far, int(hops[far]), int(reached.sum())

    far, _, _ = sweep(int(np.argmax(degree)))
    _, hops, reached = sweep(far)
    return DiameterEstimate(hops, reached)
