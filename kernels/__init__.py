"""The kernel contract: CUDA sources (package data) and, for every kernel, its CUDA name per
variant, argument list and format, grid and shared-memory rule, compile-time defines, dtype rule
and sentinels.

Two sources ship:

``sssp_kernels.cu`` (the paper's loop, ``loop="legacy"``)
    The paper's three kernels (relax, min, update) and a predecessor pass, driven by a host loop.
    Kept as the measured baseline and for the paper's per-kernel characterisation (Table 1).
``sssp_engine.cu`` (engine ``"engine"``)
    Engine 2: frontier and fringe queues, the threshold folded into relax and settle, packed
    distance/predecessor words, and three loop mechanisms (host, CUDA graph, persistent).

The runtime (``sssp.gpu``) and the tuner (measurement and replay) both read this module; nothing
here needs CUDA or pycuda, and nothing here imports from ``sssp``.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

LANE_CHOICES = (1, 2, 4, 8, 16, 32)
"""Threads that share one node's edge list in relax and in the tree pass."""


class KernelError(Exception):
    """Base of this package's errors. ``sssp`` re-raises them as its own error family at its
    boundary (this package is the ground floor and imports nothing from ``sssp``)."""


class KernelContractError(KernelError, ValueError):
    """Compile-time parameters outside the kernels' contract, or values the distance type
    cannot hold."""


class KernelCompileFailure(KernelError):
    """nvcc rejected a source; keeps the source, the options and the compiler log."""

    def __init__(
        self, message: str, *, source: str = "", options: tuple[str, ...] = (), log: str = ""
    ):
        self.source, self.options, self.log = source, tuple(options), log
        super().__init__(message)


SOURCE_FILE = "sssp_kernels.cu"
ENGINE_SOURCE_FILE = "sssp_engine.cu"
RESULT_SOURCE_FILE = "sssp_result.cu"
WIDE_SOURCE_FILE = "sssp_wide.cu"
CONTRACT_HEADER = "sssp_contract.cuh"
"""The sizes and word layouts the kernels and the host share, as ``#define`` lines emitted from this
module (:func:`contract_header`; the committed file must equal it, a test checks)."""
SOURCE_PARTS: dict[str, tuple[str, ...]] = {
    ENGINE_SOURCE_FILE: (
        CONTRACT_HEADER,
        ENGINE_SOURCE_FILE,
        "sssp_nearfar.cu",
        "sssp_cluster.cu",
        "sssp_phast.cu",
    ),
    RESULT_SOURCE_FILE: (CONTRACT_HEADER, RESULT_SOURCE_FILE),
    WIDE_SOURCE_FILE: (CONTRACT_HEADER, WIDE_SOURCE_FILE),
}
"""Sources compiled as one translation unit, in this order: the contract header, then engine 2's
core and Crauser/Martín steps, near-far on the same queues and barriers, and near-far in one
thread-block cluster (``sssp_nearfar.cu`` and ``sssp_cluster.cu`` continue ``sssp_engine.cu`` and
do not compile alone); the result pass and the wide loop after the contract header too. The result pass is a module of
its own, so its digest, not engine 2's, changes when it does: the tuning stored for engine 2's
kernels stays theirs. The wide loop (near-far a kernel per move, for graphs of large steps) is a
module of its own for the same reason."""
KERNEL_NAMES = {
    # logical kernel -> CUDA function, per variant
    ("relax", "successors"): "sssp_relax",
    ("relax", "predecessors"): "sssp_relax_pull",
    ("min", "successors"): "sssp_min",
    ("min", "predecessors"): "sssp_min",
    ("update", "successors"): "sssp_update",
    ("update", "predecessors"): "sssp_update",
    ("tree", "successors"): "sssp_tree",
    ("tree", "predecessors"): "sssp_tree_pull",
}
DEFAULT_ARCH = "sm_90"
NVCC_OPTIONS: tuple[str, ...] = ("-O3", "--use_fast_math")
"""Applied to every configuration (Kernel Tuner's ``compiler_options`` and the runtime alike)."""

UINT32_INF = 2**32 - 1
UINT64_INF = 2**64 - 1


@cache
def source(file: str = SOURCE_FILE) -> str:
    """Text of a kernel source (default: the paper's kernels); a source of several files
    (:data:`SOURCE_PARTS`) is their concatenation."""
    root = resources.files(__package__)
    return "".join(
        root.joinpath(part).read_text(encoding="utf-8") for part in SOURCE_PARTS.get(file, (file,))
    )


_C_UNSIGNED = {32: "unsigned int", 64: "unsigned long long"}


def signature_source(defines: dict) -> str:
    """The paper's kernels' source with the typedef'd pointer types of distances and weights
    (``sssp_dist_t *``, ``sssp_weight_t *``) spelled out for ``defines``' widths
    (``SSSP_DIST_BITS``, ``SSSP_WEIGHT_BITS``).

    Kernel Tuner checks the host arguments against the text of a kernel's signature and does not
    see through typedefs, so it warned about every distance and weight argument. The typedefs
    name these same types under the same defines, so the compiled code is the same; the kernel
    version (:func:`digest`) stays that of the file."""
    text = source(SOURCE_FILE)
    dist, weight = int(defines["SSSP_DIST_BITS"]), int(defines["SSSP_WEIGHT_BITS"])
    if dist not in _C_UNSIGNED or weight not in _C_UNSIGNED:
        raise KernelContractError(f"distance/weight bits must be 32 or 64, got {dist}/{weight}")
    return text.replace("sssp_dist_t *", f"{_C_UNSIGNED[dist]} *").replace(
        "sssp_weight_t *", f"{_C_UNSIGNED[weight]} *"
    )


@cache
def digest(file: str = SOURCE_FILE) -> str:
    """SHA-256 (first 16 hex digits) of the exact sources and the compile options: a change to
    either is a new kernel version for compile caches and for the tuning database."""
    h = hashlib.sha256()
    h.update(source(file).encode())
    h.update(b"\0")  # NUL separator: options may contain spaces and commas
    h.update(" ".join(NVCC_OPTIONS).encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True, order=True)
class CompileParams:
    """Compile-time parameters of one module build (each becomes a ``#define SSSP_...``)."""

    dist_bits: int = 32
    weight_bits: int = 32
    crauser: bool = True
    relax_lanes: int = 1

    source_file = SOURCE_FILE

    def __post_init__(self) -> None:
        if self.dist_bits not in (32, 64) or self.weight_bits not in (32, 64):
            raise KernelContractError(
                f"distance/weight bits must be 32 or 64, got {self.dist_bits}/{self.weight_bits}"
            )
        if self.weight_bits > self.dist_bits:
            raise KernelContractError("weight bits cannot exceed distance bits")
        if self.relax_lanes not in LANE_CHOICES:
            raise KernelContractError(f"relax lanes {self.relax_lanes} not in {LANE_CHOICES}")

    def defines(self) -> dict[str, int]:
        return {
            "SSSP_DIST_BITS": self.dist_bits,
            "SSSP_WEIGHT_BITS": self.weight_bits,
            "SSSP_CRAUSER": int(self.crauser),
            "SSSP_RELAX_LANES": self.relax_lanes,
        }

    def nvcc_flags(self) -> list[str]:
        return [f"-D{k}={v}" for k, v in self.defines().items()]

    @property
    def key(self) -> str:
        return (
            f"d{self.dist_bits}w{self.weight_bits}{'c' if self.crauser else 'm'}l{self.relax_lanes}"
        )


CRITERIA = ("out", "in", "inout", "martin")
"""Settling rules of engine 2: Crauser OUT, Crauser IN, both, and Martín (the minimum only)."""


@dataclass(frozen=True, order=True)
class EngineParams:
    """Compile-time parameters of one engine-2 module build (``#define SSSP_...``).

    ``floating`` builds float64 distances (the weights stay float32 or float64 per
    ``weight_bits``); otherwise distances are unsigned integers of ``dist_bits``.
    """

    dist_bits: int = 32
    weight_bits: int = 32
    floating: bool = False
    criterion: str = "out"
    relax_lanes: int = 1
    pull: bool = False
    cluster: int = 0
    """Blocks of the cluster near-far solver (``sssp_nfc_solve``) built in; 0 builds none."""
    many: bool = False
    """Build the cluster solver's batch kernel (``sssp_nfc_many``: every cluster solves source
    after source) instead of its one-source kernel; needs ``cluster``."""

    source_file = ENGINE_SOURCE_FILE

    def __post_init__(self) -> None:
        if self.dist_bits not in (32, 64) or self.weight_bits not in (32, 64):
            raise KernelContractError(
                f"distance/weight bits must be 32 or 64, got {self.dist_bits}/{self.weight_bits}"
            )
        if self.floating and self.dist_bits != 64:
            raise KernelContractError("real-valued weights use float64 distances (dist_bits=64)")
        if not self.floating and self.weight_bits > self.dist_bits:
            raise KernelContractError("weight bits cannot exceed distance bits")
        if self.criterion not in CRITERIA:
            raise KernelContractError(f"criterion {self.criterion!r} not in {CRITERIA}")
        if self.relax_lanes not in LANE_CHOICES:
            raise KernelContractError(f"relax lanes {self.relax_lanes} not in {LANE_CHOICES}")
        if self.cluster and (self.cluster not in CLUSTER_SIZES or not self.packed or self.pull):
            raise KernelContractError(
                f"cluster {self.cluster}: the cluster solver takes {CLUSTER_SIZES} blocks, 32-bit integer "
                "distances and the successors variant"
            )
        if self.many and not self.cluster:
            raise KernelContractError("the batch kernel (many) is a build of the cluster solver")

    @property
    def packed(self) -> bool:
        """Distance and predecessor share one 64-bit word (32-bit integer distances only)."""
        return not self.floating and self.dist_bits == 32

    def defines(self) -> dict[str, int]:
        return {
            "SSSP_DIST_BITS": self.dist_bits,
            "SSSP_WEIGHT_BITS": self.weight_bits,
            "SSSP_FLOAT": int(self.floating),
            "SSSP_OUT": int(self.criterion in ("out", "inout")),
            "SSSP_IN": int(self.criterion in ("in", "inout")),
            "SSSP_RELAX_LANES": self.relax_lanes,
            "SSSP_PULL": int(self.pull),
            "SSSP_NF_CLUSTER": self.cluster,
            # Only the batch builds name it, so the other builds' flags stay as they were.
            **({"SSSP_NF_MANY": 1} if self.many else {}),
        }

    def nvcc_flags(self) -> list[str]:
        return [f"-D{k}={v}" for k, v in self.defines().items()]

    @property
    def key(self) -> str:
        kind = "f" if self.floating else "u"
        return (
            f"e-{kind}{self.dist_bits}w{self.weight_bits}-{self.criterion}-l{self.relax_lanes}"
            f"{'-pull' if self.pull else ''}{f'-c{self.cluster}' if self.cluster else ''}"
            f"{'-many' if self.many else ''}"
        )

    def dtypes(self) -> tuple[str, str, str]:
        """numpy dtype names of (stored distance key, distance value, weight) on the device."""
        if self.floating:
            return "uint64", "float64", "float32" if self.weight_bits == 32 else "float64"
        value = "uint32" if self.dist_bits == 32 else "uint64"
        weight = "uint32" if self.weight_bits == 32 else "uint64"
        return ("uint64" if self.packed else value), value, weight


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of the contract."""

    name: str
    cuda_names: dict
    """variant ("successors"/"predecessors") -> CUDA function name."""
    args: tuple[str, ...]
    arg_format: str
    """pycuda ``prepare`` format of ``args`` (P pointer, i int32, Q uint64)."""
    grid: str
    """How many blocks: ``"nodes"`` (one thread per node), ``"node-lanes"`` (lanes threads per
    node), ``"history"`` (cover the per-phase history), ``"resident"`` (every block resident at
    once: the persistent loop's grid barrier needs it), ``"half-nodes"`` (two nodes per thread),
    ``"rows"`` (one block per row, capped at the resident blocks when strided), ``"cluster"`` (one
    thread-block cluster: the size compiled in)."""
    shared: str = "none"
    """Dynamic shared memory: ``"none"``, ``"block-dist"`` (one distance per thread),
    ``"local-queues"`` (:func:`local_queue_bytes`), ``"cluster-state"``
    (:func:`cluster_smem_bytes`) or ``"phast-top"`` (the distances of the hierarchy's top levels:
    :func:`phast_top_levels`)."""
    strided: bool = False
    """The kernel strides over its work, so its grid may be capped at the resident blocks."""

    def cuda_name(self, variant: str = "successors") -> str:
        return self.cuda_names[variant]


ENGINE_ARGS = (
    "indptr",
    "indices",
    "weights",
    "omega",
    "iota",
    "settled_at",
    "key",
    "pred",
    "qF",
    "qR",
    "cnt",
    "thr",
    "ctrl",
    "n",
)
"""Every engine-2 kernel takes these first, in this order (kernels/sssp_engine.cu, SSSP_ARGS)."""
ENGINE_FORMAT = "P" * 13 + "i"


def _both(name: str) -> dict:
    return {"successors": name, "predecessors": name}


ENGINE_KERNELS: dict[str, KernelSpec] = {
    "init": KernelSpec(
        "init", _both("sssp_e_init"), (*ENGINE_ARGS, "source"), ENGINE_FORMAT + "i", "history"
    ),
    "relax": KernelSpec(
        "relax", _both("sssp_e_relax"), ENGINE_ARGS, ENGINE_FORMAT, "node-lanes", strided=True
    ),
    "settle": KernelSpec(
        "settle",
        _both("sssp_e_settle"),
        (*ENGINE_ARGS, "cond"),
        ENGINE_FORMAT + "Q",
        "nodes",
        strided=True,
    ),
    "persistent": KernelSpec(
        "persistent",
        _both("sssp_e_persistent"),
        (*ENGINE_ARGS, "local_limit", "local_cap", "degree"),
        ENGINE_FORMAT + "iii",
        "resident",
        "local-queues",
    ),
    "tree": KernelSpec("tree", _both("sssp_e_tree"), ENGINE_ARGS, ENGINE_FORMAT, "node-lanes"),
    "sort": KernelSpec(
        "sort",
        _both("sssp_e_sort_rows"),
        ("indptr", "indices", "weights", "n"),
        "PPPi",
        "rows",
        strided=True,
    ),
}
"""Engine 2's kernels. ``relax`` and ``settle`` are the host and graph loops' per-phase kernels
(their grid is capped at the resident blocks; they stride over their queues). ``sort`` runs once,
when a graph is uploaded: it sorts every row by weight (:func:`sorts_rows` says when), so that
the bounded relax of Crauser's late phases stops at a frontier node's first edge above the bound;
the solver then sets the control word :data:`CTRL_SORTED`."""

SORT_CAP = 4096
"""The longest row ``sssp_e_sort_rows`` sorts (in shared memory; ``SSSP_SORT_CAP`` there)."""
SORT_BLOCK = 256
"""Threads per block of ``sssp_e_sort_rows`` (a block sorts one row at a time)."""


def sorts_rows(params: EngineParams, max_degree: int) -> bool:
    """Whether engine 2 sorts a graph's rows by weight for its push relax (the successors
    variant; the pull relax has no bound to stop at, and near-far runs its own kernels): 32-bit
    weights (the sort's keys) and no row longer than :data:`SORT_CAP`."""
    return not params.pull and params.weight_bits == 32 and max_degree <= SORT_CAP


NEARFAR_ARGS = (*ENGINE_ARGS, "pushed", "infar")
"""Near-far's kernels take engine 2's arguments and two node arrays more: the distance each node
last pushed with (distance bits) and its far-pile flags (one bit per node,
:func:`nearfar_flag_words` uint32 words)."""

NEARFAR_KERNELS: dict[str, KernelSpec] = {
    "init": KernelSpec(
        "init", _both("sssp_nf_init"), (*NEARFAR_ARGS, "source"), ENGINE_FORMAT + "PPi", "nodes"
    ),
    "persistent": KernelSpec(
        "persistent",
        _both("sssp_nf_persistent"),
        (*NEARFAR_ARGS, "delta", "local_limit"),
        ENGINE_FORMAT + "PPQi",
        "resident",
    ),
    "tree": KernelSpec("tree", _both("sssp_nf_tree"), ENGINE_ARGS, ENGINE_FORMAT, "node-lanes"),
    "async": KernelSpec(
        "async",
        _both("sssp_nf_async"),
        (*NEARFAR_ARGS, "delta", "qbits", "aw"),
        ENGINE_FORMAT + "PPQPP",
        "resident",
    ),
}
"""Near-far (Δ-stepping) on engine 2: one persistent launch, then the strict half of the
predecessor rule (kernels/sssp_nearfar.cu). ``delta`` is 64 bits: an integer, or a float64's bits
for real-valued weights (:func:`nearfar_delta_bits`). Successors variant only."""

CLUSTER_KERNELS: dict[str, KernelSpec] = {
    "solve": KernelSpec(
        "solve",
        _both("sssp_nfc_solve"),
        (
            *ENGINE_ARGS,
            "delta",
            "source",
            "nb",
            "cap",
            "limit",
            "mb",
            "lq",
            "spread",
            "place",
            "slots",
        ),
        ENGINE_FORMAT + "QiiiiiiiPP",
        "cluster",
        "cluster-state",
    ),
    "tree": NEARFAR_KERNELS["tree"],
}
"""Near-far in one thread-block cluster (kernels/sssp_cluster.cu): one launch of exactly
``cluster`` blocks (compiled in, ``EngineParams.cluster``) whose shared memory holds every node's
distance (:func:`cluster_smem_bytes`), then the predecessors as for near-far. Of engine 2's
arguments it uses ``indptr``, ``indices``, ``weights``, ``key`` (written at the end), ``cnt`` and
``ctrl``; the others may be null. ``delta`` as for near-far; ``nb`` the node slots per block
(:func:`cluster_slots`); ``cap`` the list entries per block (:data:`CLUSTER_LIST_CAP`); ``limit``
:func:`nearfar_step_limit`; ``mb`` 0, or the most edges of one block's nodes when the blocks keep
their rows and edges in shared memory too (:func:`cluster_layout`); ``lq`` 0, or the local queue's
capacity (:data:`CLUSTER_LOCAL_QUEUE`): a block keeps relaxing its own nodes that fell below the
threshold before it meets the cluster (local work, warp by warp); ``spread`` 0, or (with ``lq``)
1: a target in another block that falls below the threshold joins that block's queue too, and the
cluster meets only when nothing below it is queued or being relaxed anywhere (one cluster barrier
per bucket, unless a list or queue overflows); ``place`` and ``slots`` null
(node v in block v % C), or the two arrays of :func:`cluster_placement`."""

PHAST_ARGS = (
    "key",
    "ctrl",
    "order",
    "level_ptr",
    "down_ptr",
    "down_pos",
    "down_w",
    "pword",
    "pgen",
    "seed_gen",
    "seed_val",
    "seed_pos",
    "seed_d",
    "nseeds",
    "gen",
    "levels",
    "small",
    "staged",
    "width",
    "nap",
    "seed_flag",
    "source",
    "up_ptr",
    "up_pos",
    "up_w",
    "slevel",
    "sdist",
    "bag",
    "table",
    "ncore",
    "nlev",
    "nentries",
)
"""The PHAST sweep's arguments (kernels/sssp_phast.cu, SSSP_PH_ARGS): the engine's keys and
control words; the hierarchy by sweep position (the node at each position, the levels' first
positions, the downward in-edges by head position: their tails' positions and weights in the
distance type); the distances by position as published (32-bit distances: the generation above
the distance in one 64-bit word; 64-bit: the distance, with the generation in ``pgen``); the seeds
of the positions below the top (a solve's generation number marks them; one more word, past the
last position, says they are out) and this solve's seeds (position, distance); the number of
seeds, the generation, the levels, the top levels block 0 sweeps alone and how many of those it
reads its in-edges of from shared memory (:func:`phast_smem_bytes`); the most lanes that split a
node's in-edges (1 to 32, a power of two: fewer where a level has more nodes than threads); the
longest nap in ns between two polls of a tail not yet published (0: none); null, or host memory
mapped into the device holding the generation and the count of seeds that the host writes after
the launch (the seeds then in mapped host memory too). Then the device's own upward search: the
source's position (-1: the seeds come from the host, and the rest is unused); the upward edges
by tail position (offsets, heads' positions, weights in the distance type); each position's
level counted below the core (negative in it); the search's distances by position (64-bit, all
ones between solves) and its lists of reached positions (n slots, a level's at its first
position); the core table in the distance type (infinity: no path), the core's nodes, and the
hierarchy's levels below the core (what the search's counts cover, whatever ``levels`` is).
Last, how many of the seeds are a label's entries (``sssp.hierarchy.UpwardLabels``: core nodes
whose table rows give the core's distances; 0: none, the seeds are the host's search's)."""

PHAST_KERNELS: dict[str, KernelSpec] = {
    "sweep": KernelSpec(
        "sweep",
        _both("sssp_ph_sweep"),
        PHAST_ARGS,
        "P" * 13 + "iIiiiiiP" + "i" + "P" * 7 + "iii",
        "resident",
        "phast-top",
    ),
    "tree": NEARFAR_KERNELS["tree"],
}
"""PHAST on engine 2 (kernels/sssp_phast.cu): one persistent launch sweeps a contraction
hierarchy level by level (no grid barrier: a node waits for its tails' published distances) and
leaves the keys as near-far does, then near-far's predecessor pass. Integer distances only (not
built with ``SSSP_FLOAT``)."""

PHAST_BLOCK = 1024
"""Threads per block of the sweep (block 0 sweeps a top level of at most this many nodes in one
pass; ``LaunchConfig.local_limit`` may send it wider levels, swept in several passes)."""


def phast_smem_bytes(
    level_ptr,
    down_ptr,
    small: int,
    staged: int,
    dist_bytes: int,
    counters: int = 0,
    *,
    grid_core: bool = False,
) -> int:
    """The sweep's dynamic shared memory: the distances of the positions above
    ``level_ptr[small]`` (the core's, where one sits above ``level_ptr[0]``, and the top
    ``small`` levels'; none with ``grid_core``: a label's core merged by the whole grid, which
    needs ``small`` 0), then the in-edges of the first ``staged`` levels (weights, row offsets,
    tails' positions), then ``counters`` words (the device's upward search: a count of reached
    positions per level below the core, and one for the core), as kernels/sssp_phast.cu lays
    them out."""
    if grid_core and small:
        raise KernelContractError(f"grid_core needs no top level in block 0, not small={small}")
    top = 0 if grid_core else int(level_ptr[small])
    first, pst = int(level_ptr[0]), int(level_ptr[staged])
    est = int(down_ptr[pst])
    return dist_bytes * (top + est) + 4 * (pst - first + 1 + est + counters)


def phast_staged_levels(
    level_ptr, down_ptr, small: int, dist_bytes: int, smem_bytes: int, counters: int = 0
) -> int:
    """How many of the top ``small`` levels can have their in-edges in shared memory beside the
    top's distances (and ``counters`` words), within ``smem_bytes`` (:func:`phast_smem_bytes`)."""
    staged = 0
    while (
        staged < small
        and phast_smem_bytes(level_ptr, down_ptr, small, staged + 1, dist_bytes, counters)
        <= smem_bytes
    ):
        staged += 1
    return staged


def phast_top_levels(
    level_sizes, dist_bytes: int, smem_bytes: int, block: int = PHAST_BLOCK
) -> int:
    """How many levels, from the top, block 0 of the sweep takes alone: the longest run of
    levels (``level_sizes``, top first) of at most ``block`` nodes each (0: none) whose
    distances fit in ``smem_bytes`` of shared memory at ``dist_bytes`` each."""
    room = smem_bytes // dist_bytes
    total = small = 0
    for size in level_sizes:
        size = int(size)
        if size > block or total + size > room:
            break
        total += size
        small += 1
    return small


CLUSTER_BATCH_KERNEL = KernelSpec(
    "many",
    _both("sssp_nfc_many"),
    (
        *ENGINE_ARGS,
        "delta",
        "sources",
        "nb",
        "cap",
        "limit",
        "mb",
        "lq",
        "spread",
        "place",
        "slots",
        "k",
        "rows",
        "info",
        "out_kind",
    ),
    ENGINE_FORMAT + "QPiiiiiiPPiPPi",
    "cluster",
    "cluster-state",
)
"""The cluster solver's batch kernel (the ``many`` build of :class:`EngineParams`): a grid of
clusters, each solving source after source of ``sources`` (``k`` of them, taken in turn from a
counter at ``info[k * RESULT_WORDS]``, zero at the launch) with the graph's part of its state set
up once, and writing row ``j`` of ``rows`` in the dtype of ``out_kind`` (:data:`OUT_KINDS`; no
predecessors) and the ``RESULT_WORDS`` words of row ``j`` of ``info`` (zero at the launch: the
control words, near-far's counters and the reached nodes, as the result pass writes them). The
other arguments as for ``solve`` (:data:`CLUSTER_KERNELS`)."""

CLUSTER_SIZES = (1, 2, 4, 8, 16)
"""Cluster sizes the solver builds for (16 is beyond the portable 8: the runtime opts in)."""
CLUSTER_LANES = 8
"""Lanes per node of the predecessor pass after a cluster solve (its builds fix them, so that the
cluster adds five builds, not thirty)."""
CLUSTER_LIST_CAP = 2048
"""List entries per block and step (nodes past it stay active for the next step)."""
CLUSTER_LOCAL_QUEUE = 2048
"""Local-queue entries per block and step (fused cluster loop); a node past them waits for the
next step."""
CLUSTER_MAX_SLOTS = 1 << 16
"""Slots per block the cluster solver can address (a slot is kept in 16 bits)."""
CLUSTER_STATIC_SMEM = 1024
"""Shared memory per block the cluster solver keeps out of its dynamic budget (its static
scratch is 128 B; the rest is margin)."""
CLUSTER_MAX_EDGES = 2**31 - 1
"""Row starts are 32-bit in the cluster solver's list: graphs with more edges use the grid."""


def cluster_slots(n: int, blocks: int) -> int:
    """Node slots per block of a cluster of ``blocks``: ceil(n / blocks), rounded up to 32 (a
    whole word of active bits)."""
    per_block = -(-n // blocks)
    return max(32, -(-per_block // 32) * 32)


def cluster_smem_bytes(
    n: int, blocks: int, cap: int = CLUSTER_LIST_CAP, mb: int = 0, lq: int = 0
) -> int:
    """Dynamic shared memory per block of the cluster solver: 12 words of counters, an inbox of 6
    words per block, the distances (4 B per slot), two bit maps, the list (4 words per entry),
    with ``mb`` > 0 (resident) the rows (4 B per slot, one more) and ``mb`` edges of 8 B (target
    and weight), else 16-bit out-degrees, and with ``lq`` > 0 (local work) a third bit map and a
    local queue of ``lq`` entries of :data:`CLUSTER_QUEUE_ENTRY_BYTES`."""
    nb = cluster_slots(n, blocks)
    graph = 4 * (nb + 1) + 8 * mb if mb else 2 * nb
    local = 4 * (nb // 32) + CLUSTER_QUEUE_ENTRY_BYTES * lq if lq else 0
    return 4 * (12 + 6 * blocks + nb + 2 * (nb // 32) + 4 * cap) + graph + local


def async_words(blocks: int) -> int:
    """The words of ``sssp_nf_async``'s ``aw`` for a grid of ``blocks`` blocks."""
    return ASYNC_WORDS + ASYNC_BLOCK_WORDS * blocks


ASYNC_MAX_BLOCKS_PER_SM = 32
"""Resident blocks per multiprocessor ``aw`` is sized for (the most any kernel can have)."""


CLUSTER_QUEUE_ENTRY_BYTES = 8
"""A local queue entry of the cluster solver: the node's slot, and the distance it was pushed at
(a node of another block) or all ones (the block's own node, queued once by its queued bit)."""

CLUSTER_MAX_QUEUE = 32768
"""The most queue entries per block the one-source solver fused across blocks takes (its queue
holds the pushes of every chain of relaxations the block starts in a bucket:
:func:`cluster_queue_room`)."""


def cluster_queue_room(n: int, blocks: int, mb: int, lq: int, smem_per_block: int) -> int:
    """The local queue's capacity for local work across blocks: at least ``lq``, and as much
    more as the shared memory the layout leaves free holds (up to :data:`CLUSTER_MAX_QUEUE`).
    Across blocks a step runs a whole bucket, so a block's queue takes every push its warps make
    in the bucket; a push past it waits for another step."""
    free = smem_per_block - cluster_smem_bytes(n, blocks, mb=mb, lq=lq)
    return max(lq, min(CLUSTER_MAX_QUEUE, lq + max(free, 0) // CLUSTER_QUEUE_ENTRY_BYTES))


def cluster_placement(order, blocks: int) -> tuple:
    """The ``place`` and ``slots`` arrays (int32) of the cluster solver that put the nodes of
    ``order`` (a permutation of 0..n-1) in consecutive runs of :func:`cluster_slots` slots: the
    first run in block 0, and so on. ``place[v]`` is ``owner << 16 | slot``, ``slots[owner * nb +
    slot]`` the node there or -1. With a bandwidth-reducing order (reverse Cuthill-McKee) a block
    holds a band of the graph and most edges stay inside their block."""
    import numpy as np

    order = np.asarray(order, dtype=np.int64)
    n = len(order)
    nb = cluster_slots(n, blocks)
    if nb > CLUSTER_MAX_SLOTS:
        raise ValueError(
            f"{n} nodes need {nb} slots per block: the cluster solver addresses {CLUSTER_MAX_SLOTS}"
        )
    pos = np.arange(n, dtype=np.int64)
    place = np.empty(n, np.int32)
    place[order] = ((pos // nb) << 16 | pos % nb).astype(np.int32)
    slots = np.full(blocks * nb, -1, np.int32)
    slots[:n] = order
    return place, slots


def cluster_block_edges(degrees, blocks: int, order=None) -> int:
    """The most edges of one block's nodes: node v in block v % blocks, or with ``order`` in the
    runs of :func:`cluster_placement`. ``degrees``: the out-degrees as a numpy array."""
    if order is None:
        return max(int(degrees[r::blocks].sum()) for r in range(blocks))
    nb = cluster_slots(len(degrees), blocks)
    ordered = degrees[order]
    return max(int(ordered[r * nb : (r + 1) * nb].sum()) for r in range(blocks))


def cluster_layout(
    degrees,
    smem_per_block: int,
    *,
    at_least: int = 1,
    largest: int = CLUSTER_SIZES[-1],
    lq: int = 0,
    order=None,
) -> tuple[int, int] | None:
    """(blocks, mb) of the cluster solver for a graph with out-degrees ``degrees``: the fewest
    blocks of :data:`CLUSTER_SIZES` (from ``at_least`` to ``largest``) whose shared memory
    (``smem_per_block`` bytes each) holds the distances and the graph itself (``mb`` edges per
    block: no global memory read in a step), else the fewest that hold the distances alone
    (``mb`` = 0); None when none does, or the graph has too many edges for the solver.
    ``degrees``: the out-degrees as a numpy array; ``lq`` and ``order``: the local queue and the
    placement order when the solve runs local rounds on a placement."""
    n, m = len(degrees), int(degrees.sum())
    if m > CLUSTER_MAX_EDGES:
        return None
    sizes = [
        c
        for c in CLUSTER_SIZES
        if at_least <= c <= largest and cluster_slots(n, c) <= CLUSTER_MAX_SLOTS
    ]
    for c in sizes:
        mb = cluster_block_edges(degrees, c, order)
        if cluster_smem_bytes(n, c, mb=max(mb, 1), lq=lq) <= smem_per_block:
            return c, max(mb, 1)
    for c in sizes:
        if cluster_smem_bytes(n, c, lq=lq) <= smem_per_block:
            return c, 0
    return None


def batch_layout(
    degrees, smem_per_block: int, sizes=CLUSTER_SIZES, *, lq: int = 0, order=None
) -> tuple[int, int] | None:
    """(blocks, mb) of the batch kernel (:data:`CLUSTER_BATCH_KERNEL`): the fewest blocks of
    ``sizes`` whose shared memory holds the distances (each source then takes the fewest
    multiprocessors), with the graph itself too where it fits at that size; None when no size
    holds the distances. Arguments as for :func:`cluster_layout`."""
    n, m = len(degrees), int(degrees.sum())
    if m > CLUSTER_MAX_EDGES:
        return None
    for c in sizes:
        if cluster_slots(n, c) > CLUSTER_MAX_SLOTS:
            continue
        mb = max(cluster_block_edges(degrees, c, order), 1)
        if cluster_smem_bytes(n, c, mb=mb, lq=lq) <= smem_per_block:
            return c, mb
        if cluster_smem_bytes(n, c, lq=lq) <= smem_per_block:
            return c, 0
    return None


NEARFAR_WORDS = 16
"""Entries of ``cnt`` and ``thr`` near-far uses (its counter rings): all it allocates of them."""


def nearfar_flag_words(n: int) -> int:
    """uint32 words of near-far's far-pile flags (``infar``): one bit per node."""
    return (n + 31) // 32


def nearfar_step_limit(n: int) -> int:
    """A guard on near-far's steps (each step lowers some distance, so a solve ends; a count past
    this means a defect, reported instead of a hung device)."""
    return min(2**31 - 2, 64 * (n + 2) + 1024)


def nearfar_delta_bits(delta: int | float, floating: bool) -> int:
    """Δ as the kernel's 64-bit argument: a float64's bits for real-valued weights, else the
    integer (capped at 2**64 - 1; the kernel saturates it at the distance type's infinity)."""
    if floating:
        return struct.unpack("<Q", struct.pack("<d", float(delta)))[0]
    return min(int(delta), UINT64_INF)


#: The paper's kernels (:data:`SOURCE_FILE`), driven by a host loop.
PAPER_KERNELS: dict[str, KernelSpec] = {
    "relax": KernelSpec(
        "relax",
        {"successors": "sssp_relax", "predecessors": "sssp_relax_pull"},
        ("indptr", "indices", "weights", "settled_at", "dist", "n", "iter"),
        "PPPPPii",
        "node-lanes",
    ),
    "min": KernelSpec(
        "min",
        _both("sssp_min"),
        ("settled_at", "dist", "omega", "delta_hist", "n", "iter"),
        "PPPPii",
        "half-nodes",
        "block-dist",
    ),
    "update": KernelSpec(
        "update",
        _both("sssp_update"),
        ("settled_at", "dist", "delta_hist", "settled_count", "n", "iter"),
        "PPPPii",
        "nodes",
    ),
    "tree": KernelSpec(
        "tree",
        {"successors": "sssp_tree", "predecessors": "sssp_tree_pull"},
        ("indptr", "indices", "weights", "settled_at", "dist", "pred", "n"),
        "PPPPPPi",
        "node-lanes",
    ),
}
LEGACY_KERNELS = PAPER_KERNELS  # the former name, still used by sssp.gpu.runtime

# Sentinels shared by both sources.
UNSETTLED = 0x7FFFFFFF
"""``settled_at`` of a node not settled yet."""
NO_PRED = 0xFFFFFFFF
"""Predecessor field of the source and of unreached nodes (as uint32; -1 as int32)."""
CTRL_WORDS = 16
CTRL_PHASE, CTRL_DONE, CTRL_ABORT, CTRL_LIMIT, CTRL_REACHED, CTRL_SORTED = 0, 1, 5, 6, 8, 9
"""Engine 2's control words (see sssp_engine.cu): the current phase, the done flag, the abort
flag set by a grid barrier that timed out, the phase limit, (Crauser) the nodes reached, after
which relax is bounded by the largest carried distance (words 10-13), and whether the rows
ascend by weight (``sort``), so that the bounded relax may stop at a node's first edge above it."""
CTRL_SEEDS = 14
"""PHAST's control word where the device searches upward itself (``source`` of
:data:`PHAST_ARGS`): the seeds that search found below the core."""
CTRL_BUCKETS = 4
"""Near-far's control word: the threshold raises (buckets) of the solve."""
CTRL_BARRIER, CTRL_FINISHED, CTRL_READERS, CTRL_BOUND = 2, 4, 7, 10
"""Control words the kernels keep to themselves: the persistent loop's grid-barrier arrivals
(64-bit, words 2-3, never reset during a solve), the blocks done with a Crauser or Martín settle
step (the word near-far uses for :data:`CTRL_BUCKETS`), the blocks that have read near-far's
ring before a block-local run, and (Crauser) the largest carried distance, two 64-bit slots by
phase parity (words 10-13)."""
NF_LIST, NF_FAR, NF_DEGREES = 0, 3, 10
"""Near-far's counter words the kernels keep to themselves: |L| by move % 3 (words 0-2), the
far pile's size by raise % 3 (words 3-5), and the out-degrees of L summed (64-bit, by move % 3,
words 10-15)."""
ASYNC_WORDS, ASYNC_GEN, ASYNC_BUSY = 8, 0, 1
"""Near-far across the grid (``sssp_nf_async``): its words (``aw``) begin with the buckets
finished and the blocks busy; then :data:`ASYNC_BLOCK_WORDS` per block."""
ASYNC_BLOCK_WORDS, ASYNC_HEAD, ASYNC_TAIL, ASYNC_PENDING = 4, 0, 1, 2
"""Per block of ``sssp_nf_async``: its shard's tickets taken and entries pushed, and its count
(its split until done, the nodes queued to it until their edges are)."""
NF_MAX_LIST, NF_LOCAL_POPS, NF_UPDATES = 6, 7, 8
"""Near-far's counter words (``cnt``): the largest near list, the nodes popped by the fused
cluster loop's local work, and (64-bit, words 8-9) the list entries summed over the steps."""
THR_T, THR_FAR_MIN = 0, 1
"""Near-far's threshold words (``thr``): T at a hand-over, and the far pile's minimum by
raise % 3 (words 1-3)."""
UNREACHABLE_INT64 = 2**63 - 1
"""The distance the host receives for an unreachable node on integer weights (``sssp.UNREACHABLE``)."""

RESULT_WORDS = 48
"""uint32 words of a solve's result summary, written by the result pass (``sssp_result``) into
page-locked host memory beside the distances."""
RES_CTRL, RES_NF, RES_REACHED, RES_FLAT = 0, 16, 32, 34
"""Result summary: the control words after the solve (:data:`CTRL_WORDS` from word 0), near-far's
counter words (:data:`NEARFAR_WORDS` from word 16), and 64-bit counts of the reached nodes and of
the reached nodes other than the source without a predecessor (words 32-33, 34-35)."""
RES_FRONTIER_SUM, RES_FRONTIER_MAX, RES_FRINGE_SUM = 36, 38, 40
"""Result summary, Crauser and Martín: the frontier sizes of phases 0..p summed (64-bit) and
their maximum, and the fringe sizes of phases 1..p summed (64-bit), p the last phase."""
RES_PACKED, RES_U64, RES_F64 = 0, 1, 2
"""How the result pass reads the solver's distance words: 64-bit keys with the distance in the
high word (all ones: unreached) and the predecessor in the low word; unsigned 64-bit distances
(all ones: unreached); float64 bits (+inf: unreached). The last two read predecessors from their
own array."""
OUT_I64, OUT_I32, OUT_F64, OUT_F32 = 0, 1, 2, 3
"""The dtype the result pass writes distances in: int64 (unreached: :data:`UNREACHABLE_INT64`),
int32 (unreached: :data:`UNREACHABLE_INT32`; integer weights whose distances fit), float64 or
float32 (unreached: inf)."""
OUT_KINDS = {"int64": OUT_I64, "int32": OUT_I32, "float64": OUT_F64, "float32": OUT_F32}
UNREACHABLE_INT32 = 2**31 - 1
"""An unreached node's distance in an int32 result (the dtype's largest value, as
:data:`UNREACHABLE_INT64` is int64's)."""
RES_COUNTERS_NEARFAR, RES_COUNTERS_PHASES = 0, 1
"""What the result pass summarises of ``cnt``: near-far's counter words (copied), or the phase
history of Crauser and Martín (frontier and fringe sizes per phase, reduced)."""
RESULT_BLOCK = 256
"""Threads per block of the result pass."""
RESULT_SCRATCH_WORDS = 4
"""uint64 words of device scratch the result pass keeps (two running counts and a block ticket),
zero between solves: the pass's last block resets them."""


WIDE_WORDS = 20
"""uint32 control words of the wide loop (``sssp_wide.cu``, the ``SSSP_W_*`` names)."""
(
    W_MODE,
    W_K,
    W_R,
    W_NL,
    W_NEXT,
    W_FAR,
    W_KEPT,
    W_HUBS,
    W_T,
    W_FMIN,
    W_FMIN_NEXT,
    W_PILE,
    W_MAXL,
    W_SEALED,
    W_LIMIT,
    W_BUCKET,
) = range(16)
W_SUM = 16
W_DELTA = 18
"""The wide loop's words: the current move (:data:`W_STEP`, :data:`W_RAISE`, :data:`W_DONE`),
the next step k, the raises, |L_k|, the entries of the list being filled, the far pile's size and
the other pile's, the hub chunks queued, the threshold T, the pile's minimum and the other pile's,
which pile is current, the largest list, a word no kernel uses now (:data:`W_SEALED`: it kept
the end pass from running twice when every round queued it; kept so that the shared header, and
with it engine 2's digest and stored tuning, stay as they are), the step limit, the entries of the bucket's list (light/heavy split), (64-bit, words 16-17) the
list entries summed, and Δ (saturated at 2**32 - 1; for reading back: the split's kernels take Δ
from the rows' partition, ``light``)."""
W_STEP, W_RAISE, W_DONE, W_HEAVY = 0, 1, 2, 3
WIDE_BLOCK = 256
"""Threads per block of the wide loop's kernels."""
WIDE_BATCH = 4
"""Edges a lane of the wide loop has in flight at once (each round for all of them first); the
default of :class:`WideParams`, as are the two below."""
WIDE_HUB_DEGREE = 256
"""A list entry with more out-edges goes to the hub queue in chunks of :data:`WIDE_CHUNK`."""
WIDE_CHUNK = 1024
"""Edges of one hub chunk (one warp walks it, 32 x the batch at a time)."""


@dataclass(frozen=True, order=True)
class WideParams:
    """Compile-time parameters of the wide loop's module (``sssp_wide.cu``; 32-bit distances in
    packed keys only): edges a lane has in flight, the degree above which an entry goes to the
    hub queue, a hub chunk's edges, and the blocks per multiprocessor the step kernels are
    compiled for (``__launch_bounds__``' second argument, 0: none), and whether a step pushes
    only light edges, the heavy ones once per bucket (``split``: Meyer and Sanders' light/heavy
    split; see the source's header). The split is the default: on GAP's scale-22 graphs it took
    10.2 and 9.7 ms of device time at 0.5 x the default Δ against 12.0 and 10.7 without it (H200,
    run 94, ``benchmarks/results/h200/wide_split_run94.csv``), and less at 1 x too."""

    batch: int = WIDE_BATCH
    hub_degree: int = WIDE_HUB_DEGREE
    chunk: int = WIDE_CHUNK
    min_blocks: int = 0
    split: bool = True

    source_file = WIDE_SOURCE_FILE

    def __post_init__(self) -> None:
        if self.batch not in (1, 2, 4, 8):
            raise KernelContractError(f"wide batch {self.batch} not in (1, 2, 4, 8)")
        if not 32 <= self.hub_degree <= self.chunk or self.chunk % 32:
            raise KernelContractError(
                f"wide hub degree {self.hub_degree} and chunk {self.chunk}: need "
                "32 <= hub degree <= chunk, chunk a multiple of 32"
            )
        if self.hub_degree * 32 >= 2**31:
            raise KernelContractError(f"wide hub degree {self.hub_degree} too large")
        if not 0 <= self.min_blocks <= 8:
            raise KernelContractError(f"wide min_blocks {self.min_blocks} not in 0..8")

    def defines(self) -> dict[str, int]:
        return {
            "SSSP_W_BATCH": self.batch,
            "SSSP_W_HUB_DEGREE": self.hub_degree,
            "SSSP_W_CHUNK": self.chunk,
            "SSSP_W_MIN_BLOCKS": self.min_blocks,
            "SSSP_W_SPLIT": int(self.split),
        }

    def nvcc_flags(self) -> list[str]:
        return [f"-D{k}={v}" for k, v in self.defines().items()]

    @property
    def key(self) -> str:
        split = "-s1" if self.split else ""
        return f"wide-b{self.batch}-h{self.hub_degree}-c{self.chunk}-m{self.min_blocks}{split}"


_WIDE_COMMON = (
    "indptr",
    "indices",
    "weights",
    "key",
    "pushed",
    "infar",
    "lists",
    "piles",
    "hubs",
    "w",
    "n",
    "light",
)
_WIDE_FORMAT = "PPPPPPPPPPiP"
WIDE_KERNELS: dict[str, KernelSpec] = {
    "init": KernelSpec(
        "init",
        _both("sssp_w_init"),
        (*_WIDE_COMMON, "cnt", "delta", "source", "limit"),
        _WIDE_FORMAT + "PQii",
        "resident",
        strided=True,
    ),
    "step": KernelSpec("step", _both("sssp_w_step"), _WIDE_COMMON, _WIDE_FORMAT, "resident"),
    "hubs": KernelSpec("hubs", _both("sssp_w_hubs"), _WIDE_COMMON, _WIDE_FORMAT, "resident"),
    "raise": KernelSpec("raise", _both("sssp_w_raise"), _WIDE_COMMON, _WIDE_FORMAT, "resident"),
    "tree": KernelSpec("tree", _both("sssp_w_tree"), _WIDE_COMMON, _WIDE_FORMAT, "resident"),
    "tree_hubs": KernelSpec(
        "tree_hubs", _both("sssp_w_tree_hubs"), _WIDE_COMMON, _WIDE_FORMAT, "resident"
    ),
    "advance": KernelSpec(
        "advance", _both("sssp_w_advance"), ("w", "cnt", "ctrl", "delta", "after"), "PPPQi", "one"
    ),
    "finish": KernelSpec(
        "finish", _both("sssp_w_finish"), ("key", "w", "n"), "PPi", "resident", strided=True
    ),
    "partition": KernelSpec(
        "partition",
        _both("sssp_w_partition"),
        ("indptr", "indices", "weights", "light", "out_indices", "out_weights", "n", "delta"),
        "PPPPPPiI",
        "resident",
        strided=True,
    ),
}
"""The wide loop's kernels (``sssp_wide.cu``); the grids stride over their work, so every one
runs at the resident blocks (``"one"``: a single thread's decision)."""


def result_blocks(n: int, sm_count: int) -> int:
    """Blocks of the result pass: one thread per node, at most four blocks per multiprocessor
    (the pass strides over the nodes)."""
    return max(1, min(-(-n // RESULT_BLOCK), 4 * sm_count))


def contract_defines() -> dict[str, str]:
    """Every ``#define`` of :data:`CONTRACT_HEADER`, by name, as C literals."""
    return {
        "SSSP_NO_PRED": f"0x{NO_PRED:08X}u",
        "SSSP_UNSETTLED": f"0x{UNSETTLED:08X}",
        "SSSP_UNREACHABLE_I64": f"0x{UNREACHABLE_INT64:016X}ll",
        "SSSP_CTRL_WORDS": str(CTRL_WORDS),
        "SSSP_CTRL_PHASE": str(CTRL_PHASE),
        "SSSP_CTRL_DONE": str(CTRL_DONE),
        "SSSP_CTRL_BUCKETS": str(CTRL_BUCKETS),
        "SSSP_CTRL_ABORT": str(CTRL_ABORT),
        "SSSP_CTRL_LIMIT": str(CTRL_LIMIT),
        "SSSP_CTRL_REACHED": str(CTRL_REACHED),
        "SSSP_CTRL_SORTED": str(CTRL_SORTED),
        "SSSP_CTRL_BARRIER": str(CTRL_BARRIER),
        "SSSP_CTRL_FINISHED": str(CTRL_FINISHED),
        "SSSP_CTRL_READERS": str(CTRL_READERS),
        "SSSP_CTRL_BOUND": str(CTRL_BOUND),
        "SSSP_CTRL_SEEDS": str(CTRL_SEEDS),
        "SSSP_NF_WORDS": str(NEARFAR_WORDS),
        "SSSP_NF_L": str(NF_LIST),
        "SSSP_NF_FAR": str(NF_FAR),
        "SSSP_NF_DEG": str(NF_DEGREES),
        "SSSP_NF_MAXL": str(NF_MAX_LIST),
        "SSSP_NF_POPS": str(NF_LOCAL_POPS),
        "SSSP_NF_SUM": str(NF_UPDATES),
        "SSSP_NFA_WORDS": str(ASYNC_WORDS),
        "SSSP_NFA_GEN": str(ASYNC_GEN),
        "SSSP_NFA_BUSY": str(ASYNC_BUSY),
        "SSSP_NFA_BLOCK_WORDS": str(ASYNC_BLOCK_WORDS),
        "SSSP_NFA_HEAD": str(ASYNC_HEAD),
        "SSSP_NFA_TAIL": str(ASYNC_TAIL),
        "SSSP_NFA_PEND": str(ASYNC_PENDING),
        "SSSP_NF_T": str(THR_T),
        "SSSP_NF_FMIN": str(THR_FAR_MIN),
        "SSSP_RES_WORDS": str(RESULT_WORDS),
        "SSSP_RES_CTRL": str(RES_CTRL),
        "SSSP_RES_NF": str(RES_NF),
        "SSSP_RES_REACHED": str(RES_REACHED),
        "SSSP_RES_FLAT": str(RES_FLAT),
        "SSSP_RES_FRONTIER_SUM": str(RES_FRONTIER_SUM),
        "SSSP_RES_FRONTIER_MAX": str(RES_FRONTIER_MAX),
        "SSSP_RES_FRINGE_SUM": str(RES_FRINGE_SUM),
        "SSSP_RES_PACKED": str(RES_PACKED),
        "SSSP_RES_U64": str(RES_U64),
        "SSSP_RES_F64": str(RES_F64),
        "SSSP_UNREACHABLE_I32": f"0x{UNREACHABLE_INT32:08X}",
        "SSSP_OUT_I64": str(OUT_I64),
        "SSSP_OUT_I32": str(OUT_I32),
        "SSSP_OUT_F64": str(OUT_F64),
        "SSSP_OUT_F32": str(OUT_F32),
        "SSSP_RES_COUNTERS_NEARFAR": str(RES_COUNTERS_NEARFAR),
        "SSSP_RES_COUNTERS_PHASES": str(RES_COUNTERS_PHASES),
        "SSSP_RES_BLOCK": str(RESULT_BLOCK),
        "SSSP_RES_SCRATCH_WORDS": str(RESULT_SCRATCH_WORDS),
        **{f"SSSP_W_{name}": str(value) for name, value in _wide_words().items()},
    }


def _wide_words() -> dict[str, int]:
    names = (
        "MODE K R NL NEXT FAR KEPT HUBS T FMIN FMIN_NEXT PILE MAXL SEALED LIMIT BUCKET SUM DELTA "
        "STEP RAISE DONE HEAVY"
    ).split()
    words = {name: globals()[f"W_{name}"] for name in names}
    return {
        **words,
        "WORDS": WIDE_WORDS,
        "BLOCK": WIDE_BLOCK,
    }


def contract_header() -> str:
    """The text of :data:`CONTRACT_HEADER`: this module's shared sizes and layouts as
    ``#define`` lines. Regenerate the committed file with ``python -m kernels``."""
    lines = [
        "// Emitted from kernels/__init__.py (python -m kernels): the sizes and word layouts the",
        "// kernels and the host share. Edit them there, never here; a test compares this file.",
        "#ifndef SSSP_CONTRACT_CUH",
        "#define SSSP_CONTRACT_CUH",
    ]
    lines += [f"#define {name} {value}" for name, value in contract_defines().items()]
    return "\n".join([*lines, "#endif", ""])


@dataclass(frozen=True, order=True)
class ResultParams:
    """The result pass's module (``sssp_result.cu``): one build serves every solver, so it has
    no compile-time parameters."""

    source_file = RESULT_SOURCE_FILE

    def defines(self) -> dict[str, int]:
        return {}

    def nvcc_flags(self) -> list[str]:
        return []

    @property
    def key(self) -> str:
        return "result"


RESULT_ARGS = (
    "key",
    "pred_in",
    "cnt",
    "ctrl",
    "dist",
    "pred",
    "info",
    "scratch",
    "n",
    "source",
    "layout",
    "counters",
    "history_len",
    "out_kind",
    "tree_ptr",
    "tree_src",
    "tree_w",
    "tree_w_bytes",
)
RESULT_KERNEL = KernelSpec(
    "result", _both("sssp_result"), RESULT_ARGS, "PPPPPPPPiiiiiiPPPi", "nodes"
)
"""The result pass, launched after the solve's last kernel: it writes the distances (in the
dtype ``out_kind`` names) and, when ``pred`` is not null, the predecessors
(int32, -1 for none) straight into the host's page-locked arrays (``dist``, ``pred``), and the
summary of :data:`RESULT_WORDS` words into ``info``; ``layout`` one of :data:`RES_PACKED`,
:data:`RES_U64`, :data:`RES_F64`, ``counters`` one of :data:`RES_COUNTERS_NEARFAR`,
:data:`RES_COUNTERS_PHASES`, ``history_len`` the entries of ``cnt``, ``out_kind`` one of
:data:`OUT_KINDS` (the distances' dtype). With ``tree_ptr`` not null (integer layouts) the
pass finds the predecessors itself from the reverse graph's CSR (``tree_ptr``, ``tree_src``,
``tree_w`` of ``tree_w_bytes`` 4 or 8), by the tree passes' rule, instead of reading them. Its
grid is :func:`result_blocks`."""


LOCAL_CAP_MAX = 4096


def local_queue_capacity(local_limit: int) -> int:
    """Queue entries the persistent loop keeps in shared memory in its block-local phases: the
    work limit rounded up to a power of two, at most :data:`LOCAL_CAP_MAX` (entries beyond spill
    to global memory, so the capacity bounds speed, never correctness)."""
    if local_limit <= 0:
        return 0
    return min(LOCAL_CAP_MAX, 1 << (local_limit - 1).bit_length())


def local_queue_bytes(cap: int, dist_bytes: int) -> int:
    """Dynamic shared memory of the persistent kernel: frontier ids and distances and fringe ids,
    two of each (by phase parity)."""
    return 2 * cap * (dist_bytes + 4 + 4)


def engine_history_len(n: int) -> int:
    """Entries of the per-phase history arrays ``cnt`` and ``thr`` (two per phase)."""
    return 2 * (n + 3)


def engine_phase_limit(n: int) -> int:
    """Every productive phase settles a node, so a solve never needs more than n + 1 phases."""
    return n + 2


def blocks_for(
    spec: KernelSpec, n: int, block: int, lanes: int = 1, *, resident: int | None = None
) -> int:
    """Number of blocks for ``spec``'s grid rule (``resident``: blocks that fit at once)."""
    if spec.grid == "node-lanes":
        blocks = -(-n * lanes // block)
    elif spec.grid == "half-nodes":
        blocks = -(-n // (2 * block))
    elif spec.grid == "history":
        blocks = -(-engine_history_len(n) // block)
    elif spec.grid == "cluster":
        raise KernelContractError("the cluster grid is the cluster's size (EngineParams.cluster)")
    elif spec.grid == "rows":
        blocks = n
    elif spec.grid == "resident":
        if resident is None:
            raise KernelContractError("the resident grid rule needs the number of resident blocks")
        return max(1, resident)
    else:
        blocks = -(-n // block)
    blocks = max(blocks, 1)
    return min(blocks, resident) if resident and spec.strided else blocks


def widths_for_float(weight_dtype: str) -> tuple[int, int]:
    """(distance bits, weight bits) for real-valued weights: float64 distances always (exact
    agreement with SciPy's float64 Dijkstra), float32 weights kept as float32."""
    return 64, 32 if weight_dtype == "float32" else 64


def widths_for(n: int, max_weight: float) -> tuple[int, int]:
    """(distance bits, weight bits) for a graph: 32-bit distances only when the largest value
    the kernels can form, ``(n + 1) * max_weight`` (a distance plus one more edge or ω), stays
    below the 32-bit infinity sentinel; 64-bit otherwise. Never a silent overflow: a graph
    whose values would not fit in 64 bits is rejected."""
    bound = (n + 1) * max_weight
    weight_bits = 32 if max_weight < UINT32_INF else 64
    if bound < UINT32_INF:
        return 32, weight_bits
    if bound < UINT64_INF:
        return 64, weight_bits
    raise KernelContractError(
        f"distances up to (n + 1) * max_weight = {bound} do not fit in 64 bits (n = {n}, "
        f"max weight {max_weight})"
    )


def engine_params() -> list[EngineParams]:
    """Every engine-2 combination the runtime can request (the CPU compile test builds them)."""
    out = []
    kinds = [(32, 32, False), (64, 32, False), (64, 64, False), (64, 32, True), (64, 64, True)]
    for (db, wb, fl), crit, lanes, pull in itertools.product(
        kinds, CRITERIA, LANE_CHOICES, (False, True)
    ):
        out.append(EngineParams(db, wb, fl, crit, lanes, pull))
    for many in (False, True):  # the cluster solver, one source a launch or a batch
        out.extend(
            EngineParams(32, 32, False, "out", CLUSTER_LANES, False, c, many) for c in CLUSTER_SIZES
        )
    return out


def runtime_params() -> list[CompileParams]:
    """Every combination of compile-time parameters the runtime can request."""
    out = []
    for (db, wb), crauser, lanes in itertools.product(
        [(32, 32), (64, 32), (64, 64)], (True, False), LANE_CHOICES
    ):
        out.append(CompileParams(db, wb, crauser, lanes))
    return out


def nvcc_compile(
    params: CompileParams | EngineParams, *, arch: str = DEFAULT_ARCH, nvcc: str | None = None
) -> bytes:
    """Compile the sources to a cubin with ``nvcc`` (no GPU needed) and return it.

    Used by the CPU-side tests to check every parameter combination; the GPU runtime compiles
    through pycuda with the same options.

    Raises
    ------
    KernelCompileFailure
        With the source, options and compiler log when nvcc fails or is missing.
    """
    nvcc = nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists() and shutil.which(nvcc) is None:
        raise KernelCompileFailure("nvcc not found (install the CUDA toolkit or put nvcc on PATH)")
    text = source(params.source_file)
    with tempfile.TemporaryDirectory(prefix="sssp-nvcc-") as tmp:
        src = Path(tmp) / params.source_file
        src.write_text(text, encoding="utf-8")
        out = Path(tmp) / "k.cubin"
        opts = [*NVCC_OPTIONS, f"-arch={arch}", "--cubin", *params.nvcc_flags()]
        proc = subprocess.run(
            [nvcc, *opts, "-o", str(out), str(src)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise KernelCompileFailure(
                f"nvcc failed for {params.key}",
                source=text,
                options=tuple(opts),
                log=proc.stdout + proc.stderr,
            )
        return out.read_bytes()
