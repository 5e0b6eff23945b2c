"""CUDA sources of the relax, min and update kernels, shipped as package data.

The sources are data: this module reads them with :mod:`importlib.resources`, identifies them by
a digest (used as the compile-cache key and as the kernel version in the tuning database), and
describes their compile-time parameters. Nothing here needs CUDA or pycuda.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from sssp.config import LANE_CHOICES
from sssp.errors import InvalidGraphError, KernelCompileError

SOURCE_FILE = "sssp_kernels.cu"
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
def source() -> str:
    """Text of the kernel source file."""
    return resources.files(__package__).joinpath(SOURCE_FILE).read_text(encoding="utf-8")


@cache
def digest() -> str:
    """SHA-256 (first 16 hex digits) of the exact sources and the compile options: a change to
    either is a new kernel version for compile caches and for the tuning database."""
    h = hashlib.sha256()
    h.update(source().encode())
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

    def __post_init__(self) -> None:
        if self.dist_bits not in (32, 64) or self.weight_bits not in (32, 64):
            raise ValueError(f"distance/weight bits must be 32 or 64, got {self.dist_bits}/{self.weight_bits}")
        if self.weight_bits > self.dist_bits:
            raise ValueError("weight bits cannot exceed distance bits")
        if self.relax_lanes not in LANE_CHOICES:
            raise ValueError(f"relax lanes {self.relax_lanes} not in {LANE_CHOICES}")

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
        return f"d{self.dist_bits}w{self.weight_bits}{'c' if self.crauser else 'm'}l{self.relax_lanes}"


def widths_for(n: int, max_weight: int) -> tuple[int, int]:
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
    raise InvalidGraphError(
        f"distances up to (n + 1) * max_weight = {bound} do not fit in 64 bits (n = {n}, "
        f"max weight {max_weight})"
    )


def runtime_params() -> list[CompileParams]:
    """Every combination of compile-time parameters the runtime can request."""
    out = []
    for (db, wb), crauser, lanes in itertools.product(
        [(32, 32), (64, 32), (64, 64)], (True, False), LANE_CHOICES
    ):
        out.append(CompileParams(db, wb, crauser, lanes))
    return out


def nvcc_compile(params: CompileParams, *, arch: str = DEFAULT_ARCH, nvcc: str | None = None) -> bytes:
    """Compile the sources to a cubin with ``nvcc`` (no GPU needed) and return it.

    Used by the CPU-side tests to check every parameter combination; the GPU runtime compiles
    through pycuda with the same options.

    Raises
    ------
    KernelCompileError
        With the source, options and compiler log when nvcc fails or is missing.
    """
    nvcc = nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists() and shutil.which(nvcc) is None:
        raise KernelCompileError("nvcc not found (install the CUDA toolkit or put nvcc on PATH)")
    with tempfile.TemporaryDirectory(prefix="sssp-nvcc-") as tmp:
        src = Path(tmp) / SOURCE_FILE
        src.write_text(source(), encoding="utf-8")
        out = Path(tmp) / "k.cubin"
        opts = [*NVCC_OPTIONS, f"-arch={arch}", "--cubin", *params.nvcc_flags()]
        proc = subprocess.run([nvcc, *opts, "-o", str(out), str(src)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise KernelCompileError(
                f"nvcc failed for {params.key}", source=source(), options=tuple(opts),
                log=proc.stdout + proc.stderr,
            )
        return out.read_bytes()
