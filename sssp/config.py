"""Launch configurations of the three GPU kernels (pure data: no CUDA needed to build them).

A kernel's configuration is its thread-block size and its L1 state. The paper's two L1 states
(Fermi/Kepler) are carried to today's GPUs, where L1 and shared memory are one pool split by a
per-kernel *carveout preference*:

``"N"`` normal
    No preference: the driver picks the split (``CU_FUNC_CACHE_PREFER_NONE``, carveout left at
    its default). This is the paper's default configuration.
``"A"`` augmented L1
    Prefer L1 (``CU_FUNC_CACHE_PREFER_L1``, carveout 0 %: as little shared memory as the kernel
    needs, the rest L1).
``"S"`` shared-heavy
    Prefer shared memory (``CU_FUNC_CACHE_PREFER_SHARED``, carveout 100 %): the least L1. This is
    what Fermi's "N" split (16 KB L1 / 48 KB shared) meant, kept as a third point worth trying.

The driver treats these as hints and may round them; the runtime reads the attribute back and
reports what it saw.

The relax kernel has one more knob beyond the paper: ``lanes``, the number of consecutive
threads that share one frontier node's edge list (1 = the paper's one thread per node).

Beyond the per-kernel knobs, a :class:`LaunchConfig` carries the structural choices of engine 2
(``kernels/sssp_engine.cu``): the loop mechanism and, for the persistent loop, the blocks per
multiprocessor and the size under which a phase runs in one block. Under engine 2 the relax
configuration applies to the relax kernel (and to the persistent kernel, which relaxes and
settles), the update configuration to the settle kernel (update with the threshold folded in),
and the min configuration is unused: there is no min pass. ``loop="legacy"`` runs the paper's
three kernels from the host, the measured baseline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum

from .errors import SSSPError

L1_STATES: dict[str, tuple[str, int | None]] = {
    # state: (cache-config preference, shared-memory carveout percent or None for "leave alone")
    "N": ("PREFER_NONE", None),
    "A": ("PREFER_L1", 0),
    "S": ("PREFER_SHARED", 100),
}
KERNELS = ("relax", "min", "update")
LOOPS = ("persistent", "graph", "host", "cluster", "wide", "phast", "legacy")
"""Loop mechanisms: one persistent kernel with a grid barrier; a CUDA graph WHILE node; host
launches per phase (engine 2); near-far in one thread-block cluster with the distances in its
shared memory (near-far only, when they fit; otherwise the persistent loop runs); near-far with
a kernel per move at full occupancy, each step dealt out by edges (near-far with 32-bit integer
distances only, otherwise the persistent loop runs: for graphs whose steps are large,
:mod:`sssp.gpu.wide`); near-far's answer by one sweep of a contraction hierarchy built once per
graph, a step per level (PHAST: integer weights only, otherwise the persistent loop runs;
:mod:`sssp.gpu.phast`); the paper's host-driven relax/min/update kernels."""
FUSE_LEVELS = ("", " fused", " fused across blocks")
"""The cluster loop's fusion levels (``LaunchConfig.fuse``: 0, 1, 2), as its text shows them."""
CORE_NODES_MAX = 8192
"""The most nodes of the phast loop's core table (:attr:`LaunchConfig.core`,
:func:`sssp.hierarchy.core_table`: 512 MiB of int64 distances on the host while it is built, 256
MiB of int32 kept where they fit). Against 4 096, it left the record's 14 meshes 2-11 fewer levels
to sweep and their sweeps 2-79 us shorter, while the merge of a label through the wider table
cost cs4, delaunay_n15 and t60k more than that (H100, run 186:
``benchmarks/results/h200/phast_probe_core8192_h100_run186.csv``): the tuner measures both."""
MIN_BLOCK, MAX_BLOCK = 32, 1024
SHORTCUT_CHOICES = (0, 4, 8, 16, 32)
"""Shortcut edges per node a configuration may ask for (:attr:`LaunchConfig.shortcuts`; 0: none).
On the CPU reference, over the record's 17 meshes, roads and geometric graphs at Δ 1-16 x the
rule, they cut near-far's steps 1.25-1.5x, 1.7-2.2x, 2.3-3.5x and 2.9-5.3x (medians 1.4, 1.9,
2.7, 3.8) for 1.2-1.8, 1.6-3.4, 2.6-6.7 and 4.5-13 times the graph's edges
(``benchmarks/results/cpu/shortcut_steps.csv``)."""
from kernels import CLUSTER_SIZES, LANE_CHOICES  # noqa: E402  (the kernel contract owns them)


class ConfigError(SSSPError, ValueError):
    """An impossible kernel configuration (block size, L1 state, lanes)."""


class ConfigSource(StrEnum):
    """Where a launch configuration came from."""

    EXPLICIT = "explicit"
    TUNED_EXACT = "tuned-exact"
    TUNED_NEAREST = "tuned-nearest"
    DEFAULT = "default"


@dataclass(frozen=True, order=True)
class KernelConfig:
    """One kernel's launch configuration."""

    block_size: int = 256
    l1: str = "N"
    lanes: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.block_size, int) or isinstance(self.block_size, bool):
            raise ConfigError(f"block size must be an integer, got {self.block_size!r}")
        if not (MIN_BLOCK <= self.block_size <= MAX_BLOCK) or self.block_size % 32:
            raise ConfigError(
                f"block size {self.block_size} is invalid: use a multiple of 32 in "
                f"[{MIN_BLOCK}, {MAX_BLOCK}]"
            )
        if self.l1 not in L1_STATES:
            raise ConfigError(f"L1 state {self.l1!r} is invalid: use one of {', '.join(L1_STATES)}")
        if self.lanes not in LANE_CHOICES:
            raise ConfigError(f"lanes {self.lanes!r} is invalid: use one of {LANE_CHOICES}")
        if self.lanes > self.block_size:
            raise ConfigError(f"lanes {self.lanes} exceed block size {self.block_size}")

    @property
    def label(self) -> str:
        """The paper's cell notation, e.g. ``"192-A"``; ``"256-N/x8"`` when lanes > 1."""
        base = f"{self.block_size}-{self.l1}"
        return base if self.lanes == 1 else f"{base}/x{self.lanes}"

    @classmethod
    def parse(cls, text: str) -> KernelConfig:
        """Inverse of :attr:`label` (``"192-A"``, ``"256-N/x8"``)."""
        m = re.fullmatch(r"\s*(\d+)-([A-Z])(?:/x(\d+))?\s*", text)
        if not m:
            raise ConfigError(f"kernel configuration {text!r} is invalid: expected e.g. '192-A'")
        return cls(int(m.group(1)), m.group(2), int(m.group(3) or 1))

    def __str__(self) -> str:
        return self.label


DEFAULT_KERNEL = KernelConfig(256, "N", 1)


@dataclass(frozen=True)
class LaunchConfig:
    """The configurations of the relax, min and update kernels for one solve, and the loop.

    Attributes
    ----------
    loop : {"persistent", "graph", "host", "cluster", "wide", "phast", "legacy"}
        How phases are driven (see :data:`LOOPS`).
    blocks_per_sm : int
        Persistent loop: blocks per multiprocessor (capped at what fits resident; 0 = all that fit).
    local_limit : int
        Persistent loop: a phase whose frontier plus fringe is at most this runs in one block
        with block barriers only (work: frontier edges plus fringe); 0 turns that off, -1 means
        eight times the block size. Phast loop: the top levels of at most this many nodes each
        are swept by one block (their distances in its shared memory, as far as they fit); 0
        sweeps every level with the whole grid, -1 means ``kernels.PHAST_BLOCK``.
    cluster : int
        Cluster loop: at least this many blocks in the cluster (0: the fewest whose shared
        memory holds the graph's distances; see :func:`kernels.cluster_layout`).
    fuse : {False, True, 0, 1, 2}
        Cluster loop: ``True`` (or 1) places the nodes in bands of a bandwidth-reducing order
        (reverse Cuthill-McKee), one band per block, and lets each block keep relaxing its own
        nodes that fall below the threshold before it meets the others (bucket fusion per block:
        fewer cluster-wide steps on meshes and road networks). 2 (*across blocks*) also hands a
        target in another block that falls below the threshold to that block's queue, so the
        whole cluster keeps relaxing until nothing below the threshold is left anywhere: one
        cluster barrier per bucket instead of one per step (bands where they keep edges local,
        else nodes spread ``v % C``). Stored as 0, 1 or 2.
    batch_cluster : int
        Many sources (near-far's batch kernel, :func:`sssp.gpu.plan.plan_batch`): blocks per
        source (0: the fewest whose shared memory holds the distances).
    batch_block : int
        Many sources: threads per block of the batch kernel (0: 1024).
    shortcuts : int
        Near-far on the persistent or cluster loop, integer weights: relax a copy of the graph
        with an edge from every node to each of its ``shortcuts`` nearest nodes, weighted by
        their distance (:func:`sssp.shortcuts.with_shortcuts`, built once per solver): the same
        distances in fewer steps on graphs of high diameter, more edges a step. The predecessor
        tree is built on the graph's own edges. One of :data:`SHORTCUT_CHOICES`; 0: none.
    core : int
        Phast loop: the host keeps the distances between the nodes of the hierarchy's top levels
        of at most this many nodes together (a core table, :func:`sssp.hierarchy.core_table`,
        built once per solver); a solve's upward search stops there, the core's distances go
        to the device as seeds, and the device sweeps only the levels below. 0 to
        :data:`CORE_NODES_MAX`; 0: none.
    """

    relax: KernelConfig = DEFAULT_KERNEL
    min: KernelConfig = DEFAULT_KERNEL
    update: KernelConfig = DEFAULT_KERNEL
    loop: str = "persistent"
    blocks_per_sm: int = 2
    local_limit: int = -1
    cluster: int = 0
    fuse: bool | int = False
    batch_cluster: int = 0
    batch_block: int = 0
    shortcuts: int = 0
    core: int = 0

    def __post_init__(self) -> None:
        for name in KERNELS:
            kc = getattr(self, name)
            if not isinstance(kc, KernelConfig):
                raise ConfigError(f"{name} configuration must be a KernelConfig, got {kc!r}")
            if name != "relax" and kc.lanes != 1:
                raise ConfigError(f"only relax takes lanes > 1; {name} got {kc.lanes}")
        if self.loop not in LOOPS:
            raise ConfigError(f"loop {self.loop!r} is invalid: use one of {', '.join(LOOPS)}")
        for field_name, low in (("blocks_per_sm", 0), ("local_limit", -1), ("cluster", 0)):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ConfigError(f"{field_name} must be an integer >= {low}, got {value!r}")
        if self.cluster and self.cluster not in CLUSTER_SIZES:
            raise ConfigError(f"cluster {self.cluster} is invalid: use 0 or one of {CLUSTER_SIZES}")
        if isinstance(self.batch_cluster, bool) or self.batch_cluster not in (0, *CLUSTER_SIZES):
            raise ConfigError(
                f"batch_cluster {self.batch_cluster!r} is invalid: use 0 or one of {CLUSTER_SIZES}"
            )
        bb = self.batch_block
        if (
            not isinstance(bb, int)
            or isinstance(bb, bool)
            or (bb and (bb % 32 or not 32 <= bb <= 1024))
        ):
            raise ConfigError(
                f"batch_block {bb!r} is invalid: use 0 or a multiple of 32 from 32 to 1024"
            )
        if isinstance(self.shortcuts, bool) or self.shortcuts not in SHORTCUT_CHOICES:
            raise ConfigError(
                f"shortcuts {self.shortcuts!r} is invalid: use one of {SHORTCUT_CHOICES}"
            )
        if self.shortcuts and self.loop not in ("persistent", "cluster"):
            raise ConfigError(
                f"shortcuts apply to the persistent and cluster loops, not loop {self.loop!r}"
            )
        if (
            not isinstance(self.core, int)
            or isinstance(self.core, bool)
            or not 0 <= self.core <= CORE_NODES_MAX
        ):
            raise ConfigError(
                f"core {self.core!r} is invalid: use an integer from 0 to {CORE_NODES_MAX}"
            )
        if self.core and self.loop != "phast":
            raise ConfigError(f"core applies to the phast loop, not loop {self.loop!r}")
        if not isinstance(self.fuse, int) or not 0 <= self.fuse < len(FUSE_LEVELS):
            raise ConfigError(f"fuse must be True, False, 0, 1 or 2, got {self.fuse!r}")
        if self.fuse and self.loop != "cluster":
            raise ConfigError(f"fuse applies to the cluster loop, not loop {self.loop!r}")

    @classmethod
    def default(cls) -> LaunchConfig:
        """The paper's default (256 threads per block, L1 normal, for every kernel) on engine 2's
        persistent loop."""
        return cls()

    @classmethod
    def paper(cls) -> LaunchConfig:
        """The paper's default on the paper's host-driven kernels (the legacy baseline)."""
        return cls(loop="legacy")

    def options(self) -> dict[str, int | str]:
        """The structural choices (stored beside the per-kernel labels)."""
        opts: dict[str, int | str] = {
            "loop": self.loop,
            "blocks_per_sm": self.blocks_per_sm,
            "local_limit": self.local_limit,
        }
        if self.loop == "cluster":
            opts["cluster"] = self.cluster
            opts["fuse"] = int(self.fuse)
        if self.shortcuts:
            opts["shortcuts"] = self.shortcuts
        if self.core:
            opts["core"] = self.core
        for name in ("batch_cluster", "batch_block"):  # many sources: stored when chosen
            if getattr(self, name):
                opts[name] = getattr(self, name)
        return opts

    @classmethod
    def from_parts(cls, labels: dict[str, str], options: dict | None = None) -> LaunchConfig:
        """Inverse of :meth:`as_dict` plus :meth:`options`; missing options take the defaults
        (records made before engine 2 describe the legacy loop)."""
        opts = dict(options or {})
        kernels = {k: KernelConfig.parse(labels[k]) for k in KERNELS}
        return cls(
            **kernels,
            loop=str(opts.get("loop", "legacy")),
            blocks_per_sm=int(opts.get("blocks_per_sm", 2)),
            local_limit=int(opts.get("local_limit", -1)),
            cluster=int(opts.get("cluster", 0)),
            fuse=int(opts.get("fuse", 0)),
            batch_cluster=int(opts.get("batch_cluster", 0)),
            batch_block=int(opts.get("batch_block", 0)),
            shortcuts=int(opts.get("shortcuts", 0)),
            core=int(opts.get("core", 0)),
        )

    @classmethod
    def uniform(cls, block_size: int, l1: str = "N") -> LaunchConfig:
        kc = KernelConfig(block_size, l1)
        return cls(kc, kc, kc)

    def kernel(self, name: str) -> KernelConfig:
        if name not in KERNELS:
            raise ConfigError(f"unknown kernel {name!r}: expected one of {', '.join(KERNELS)}")
        return getattr(self, name)

    def with_kernel(self, name: str, config: KernelConfig) -> LaunchConfig:
        self.kernel(name)
        kernels_now = {k: getattr(self, k) for k in KERNELS}
        kernels_now[name] = config
        return replace(
            self, relax=kernels_now["relax"], min=kernels_now["min"], update=kernels_now["update"]
        )

    def as_dict(self) -> dict[str, str]:
        return {k: self.kernel(k).label for k in KERNELS}

    def __str__(self) -> str:
        kernels = self.as_dict()
        if self.loop == "legacy":
            return " ".join(f"{k}={v}" for k, v in kernels.items())
        text = f"loop={self.loop} relax={kernels['relax']} settle={kernels['update']}"
        if self.loop == "persistent":
            text += f" blocks/SM={self.blocks_per_sm or 'max'} local<={self.local_limit}"
        elif self.loop == "phast":
            text += f" local<={self.local_limit}"
            if self.core:
                text += f" core<={self.core}"
        elif self.loop == "cluster":
            text += f" cluster>={self.cluster or 'fit'}" + FUSE_LEVELS[int(self.fuse)]
        if self.shortcuts:
            text += f" shortcuts={self.shortcuts}"
        if self.batch_cluster or self.batch_block:
            text += f" batch={self.batch_cluster or 'fit'}x{self.batch_block or 'default'}"
        return text
