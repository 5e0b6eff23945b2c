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
MIN_BLOCK, MAX_BLOCK = 32, 1024
LANE_CHOICES = (1, 2, 4, 8, 16, 32)


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
    """The configurations of the relax, min and update kernels for one solve."""

    relax: KernelConfig = DEFAULT_KERNEL
    min: KernelConfig = DEFAULT_KERNEL
    update: KernelConfig = DEFAULT_KERNEL

    def __post_init__(self) -> None:
        for name in KERNELS:
            kc = getattr(self, name)
            if not isinstance(kc, KernelConfig):
                raise ConfigError(f"{name} configuration must be a KernelConfig, got {kc!r}")
            if name != "relax" and kc.lanes != 1:
                raise ConfigError(f"only relax takes lanes > 1; {name} got {kc.lanes}")

    @classmethod
    def default(cls) -> LaunchConfig:
        """The paper's default: 256 threads per block and L1 normal for every kernel."""
        return cls()

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
        return replace(self, **{name: config})

    def as_dict(self) -> dict[str, str]:
        return {k: self.kernel(k).label for k in KERNELS}

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.as_dict().items())
