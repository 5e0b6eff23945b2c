"""What can be tuned, per kernel: each parameter tagged launch-time or compile-time.

It lives here, below the tuner, because the store rebuilds the Optuna distributions of stored
trials from it (:func:`tuning_db.studies.search_space`); :mod:`tuner.space` is the tuner's name
for it.

Scopes
    ``"paper"``     the paper's knobs: block size (its values, including 96/192/384) x L1 state
                    in {N, A}.
    ``"extended"``  (default) adds the carveout point ``S`` (most shared, least L1) and, for relax,
                    the threads-per-node knob ``lanes`` (compile-time). Exhaustive search fits.
    ``"full"``      every block size that is a multiple of 32 up to 1024: too large to measure
                    exhaustively for every class; searched with TPE under a budget.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from sssp.config import KERNELS, L1_STATES, LANE_CHOICES, KernelConfig
from sssp.errors import TuningError

PAPER_BLOCKS = (32, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
ALL_BLOCKS = tuple(range(32, 1025, 32))
SCOPES = ("paper", "extended", "full")


@dataclass(frozen=True)
class Param:
    name: str
    values: tuple
    when: str  # "launch" (applied to the loaded function / the launch) or "compile" (a #define)
    doc: str


def params(kernel: str, scope: str = "extended") -> list[Param]:
    """The tunable parameters of ``kernel`` in ``scope``."""
    if kernel not in KERNELS:
        raise TuningError(f"unknown kernel {kernel!r}: expected one of {', '.join(KERNELS)}")
    if scope not in SCOPES:
        raise TuningError(f"unknown search scope {scope!r}: expected one of {', '.join(SCOPES)}")
    blocks = ALL_BLOCKS if scope == "full" else PAPER_BLOCKS
    l1 = ("N", "A") if scope == "paper" else tuple(L1_STATES)
    out = [
        Param("block_size_x", blocks, "launch", "threads per block"),
        Param(
            "l1", l1, "launch", "L1/shared carveout preference (N normal, A more L1, S more shared)"
        ),
    ]
    if kernel == "relax" and scope != "paper":
        out.append(Param("lanes", LANE_CHOICES, "compile", "threads sharing one node's edge list"))
    return out


def tune_params(kernel: str, scope: str = "extended") -> dict[str, list]:
    """Kernel Tuner's ``tune_params`` for ``kernel`` (ordered: block size, l1[, lanes])."""
    return {p.name: list(p.values) for p in params(kernel, scope)}


def configs(kernel: str, scope: str = "extended") -> list[KernelConfig]:
    """Every configuration of the space, as :class:`KernelConfig`."""
    tp = tune_params(kernel, scope)
    names = list(tp)
    return [
        to_config(dict(zip(names, values, strict=True)))
        for values in itertools.product(*tp.values())
    ]


def to_config(p: dict) -> KernelConfig:
    return KernelConfig(int(p["block_size_x"]), str(p["l1"]), int(p.get("lanes", 1)))


def from_config(kc: KernelConfig, kernel: str, scope: str = "extended") -> dict:
    out = {"block_size_x": kc.block_size, "l1": kc.l1}
    if "lanes" in tune_params(kernel, scope):
        out["lanes"] = kc.lanes
    return out


def size(kernel: str, scope: str = "extended") -> int:
    n = 1
    for p in params(kernel, scope):
        n *= len(p.values)
    return n
