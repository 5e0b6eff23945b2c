"""Plain, typed values that go in and out of the store (no SQLAlchemy objects leak out)."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sssp.classes import GraphClass
from sssp.config import KERNELS, KernelConfig, LaunchConfig
from sssp.tuned import TunedFallback


class TrialStatus(StrEnum):
    """Outcome of measuring one configuration. A failure is data, not an exception."""

    OK = "ok"
    COMPILE_FAILED = "compile_failed"
    LAUNCH_FAILED = "launch_failed"
    INVALID = "invalid"  # rejected by a restriction or by the device's limits
    WRONG_RESULT = "wrong_result"  # outputs differ from the default configuration's


class RunStatus(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


@dataclass(frozen=True)
class DeviceRecord:
    """A GPU as the tuner saw it."""

    name: str
    uuid: str
    compute_capability: str  # "9.0"
    sm_count: int
    driver_version: str
    cuda_version: str


_DEVICE_PREFIXES = ("NVIDIA ", "GeForce ", "Tesla ", "Quadro ")
"""Vendor prefixes a GPU's short name drops (:func:`short_device_name`)."""


def short_device_name(name: str) -> str:
    """A GPU's short name: vendor prefixes dropped (``"NVIDIA H200"`` → ``"H200"``)."""
    short = name.strip()
    changed = True
    while changed:
        changed = False
        for prefix in _DEVICE_PREFIXES:
            if short.startswith(prefix) and len(short) > len(prefix):
                short = short[len(prefix) :].lstrip()
                changed = True
    return short or name


def device_name_matches(name: str, wanted: str) -> bool:
    """Whether a GPU called ``name`` is the one a user named ``wanted``: its full or short
    name (:func:`short_device_name`) or its model, the short name's first word where it holds
    a digit, any case (``H200`` and ``nvidia h200`` both name ``"NVIDIA H200"``, ``H100``
    names ``"NVIDIA H100 80GB HBM3"``, ``A100`` ``"NVIDIA A100-SXM4-80GB"``; ``RTX`` names no
    ``"NVIDIA GeForce RTX 4090"``)."""
    want = wanted.strip().casefold()
    short = short_device_name(name).casefold()
    model = re.split(r"[\s-]", short, maxsplit=1)[0]
    return want in (name.casefold(), short) or (want == model and any(c.isdigit() for c in model))


@dataclass(frozen=True)
class KernelVersionRecord:
    """The exact kernel sources (digest) and the compile options applied to every config."""

    digest: str
    compile_options: str = ""


@dataclass(frozen=True)
class RunKey:
    """What identifies a tuning run, so an interrupted one can be found and resumed."""

    device: DeviceRecord
    kernel_version: KernelVersionRecord
    graph_class: GraphClass
    algorithm: str = "crauser"
    variant: str = "successors"
    kernel: str = "all"  # "relax" | "min" | "update" | "all"
    strategy: str = "exhaustive"
    instance: str = ""  # how the class instance was made, e.g. "random n=49152 d=200 seed=0"
    replay: bool = False


@dataclass(frozen=True)
class RunRecord:
    id: int
    key: RunKey
    status: RunStatus
    budget: int | None
    seed: int
    started_at: dt.datetime
    finished_at: dt.datetime | None
    wall_seconds: float | None = None


@dataclass(frozen=True)
class TrialRecord:
    """One measured (or failed) configuration of one kernel."""

    kernel: str
    config: KernelConfig
    status: TrialStatus
    times_ms: tuple[float, ...] = ()
    """Per-repetition kernel times (ms), summed over the workload's captured states."""
    applied_l1: str = ""
    """What the driver reported after applying the L1 state (attribute read back)."""
    message: str = ""
    number: int | None = None
    """The Optuna trial number within its study, assigned by the store."""
    measurements: Mapping[str, Any] = field(default_factory=dict)
    """Kernel Tuner's own result for this configuration (JSON values), kept on the trial."""

    @property
    def median_ms(self) -> float | None:
        if not self.times_ms:
            return None
        s = sorted(self.times_ms)
        k = len(s) // 2
        return s[k] if len(s) % 2 else 0.5 * (s[k - 1] + s[k])


@dataclass(frozen=True)
class BestRecord:
    """The configuration to use for (device, kernel version, graph class, algorithm, variant),
    with the end-to-end check that justified it.

    ``algorithm`` is the record's key: the algorithm the search was run for, ``"auto"`` when the
    search also chose the algorithm (``tune engine --algorithm auto``). What runs is
    :attr:`chosen_algorithm`, with near-far's :attr:`delta_scale`.
    """

    device: DeviceRecord
    kernel_version: KernelVersionRecord
    graph_class: GraphClass
    algorithm: str
    """The search's algorithm (part of the key): a fixed one, or ``"auto"``."""
    variant: str
    config: LaunchConfig
    """What `solve(tuned=True)` runs: the tuned picks, or the default when tuning did not help."""
    tuned_config: LaunchConfig
    """The per-kernel picks of the search, kept even when the default won the end-to-end check."""
    tuned_median_ms: float
    default_median_ms: float
    speedup: float  # default_median_ms / tuned_median_ms
    n_sources: int
    kept_default: bool
    replay: bool = False
    """True when built from recorded measurements rather than measured in this run."""
    run_id: int | None = None
    updated_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    options: Mapping[str, str | int | float] = field(default_factory=dict)
    """The structural choices of the class (e.g. ``{"loop": "persistent", "delta": 64}``)."""
    chosen_algorithm: str = ""
    """The algorithm that runs with :attr:`config`: :attr:`algorithm` itself, or for an
    ``"auto"`` record the search's pick (Crauser OUT where the default was kept). Left empty,
    it is read from ``options["algorithm"]`` (records written before it was a field)."""
    delta_scale: float | None = None
    """Near-far's Δ as a multiple of its default rule (:func:`sssp.cpu.nearfar.scaled_delta`)
    when :attr:`chosen_algorithm` is near-far, else None. Left None for near-far, it is read
    from ``options["delta_scale"]`` (1 when absent)."""

    def __post_init__(self) -> None:
        chosen = self.chosen_algorithm or _chosen_from_options(self.algorithm, self.options)
        object.__setattr__(self, "chosen_algorithm", chosen)
        if chosen == "auto":
            raise ValueError("chosen_algorithm must name the algorithm that runs, not 'auto'")
        if self.algorithm != "auto" and chosen != self.algorithm:
            raise ValueError(
                f"chosen_algorithm {chosen!r} differs from the record's algorithm "
                f"{self.algorithm!r}: only an 'auto' record runs another one"
            )
        stored = self.options.get("algorithm")
        if stored is not None and self.algorithm == "auto" and stored != chosen:
            raise ValueError(
                f"chosen_algorithm {chosen!r} contradicts options['algorithm'] {stored!r}"
            )
        scale = self.delta_scale
        if chosen == "near-far":
            if scale is None:
                scale = float(self.options.get("delta_scale", 1))
            scale = float(scale)
            if not math.isfinite(scale) or scale <= 0:
                raise ValueError(f"delta_scale must be a positive number, got {scale!r}")
        elif scale is not None:
            raise ValueError(f"delta_scale applies to near-far only, not {chosen!r}")
        object.__setattr__(self, "delta_scale", scale)
        for key, value in self.options.items():
            ok = isinstance(value, str | int | float) and not isinstance(value, bool)
            if (
                not isinstance(key, str)
                or not ok
                or (isinstance(value, float) and not math.isfinite(value))
            ):
                raise ValueError(
                    f"option {key!r}={value!r} is invalid: options map names to strings or finite numbers"
                )

    @property
    def fallback(self) -> TunedFallback | None:
        """What runs while the pick's preprocessing is not done (a pick on the phast loop
        stores the best point of its search on another loop), or None."""
        return read_fallback(self.options)

    @property
    def measured_on(self) -> str | None:
        """The kernel digest the record was measured on, when it was carried to
        :attr:`kernel_version` unmeasured (``scripts/same_code.py --carry-changed``), else None."""
        value = self.options.get(MEASURED_ON)
        return None if value is None else str(value)


FALLBACK = "fallback."
"""The prefix of a record's options that hold its fallback (:class:`sssp.tuned.TunedFallback`):
the launch labels (``fallback.relax``, ``.min``, ``.update``), the launch options
(``fallback.loop``, ...), ``fallback.algorithm``, ``fallback.delta_scale`` and
``fallback.wall_ms`` (:func:`fallback_options`)."""


def fallback_options(fallback: TunedFallback) -> dict[str, str | int | float]:
    """The options of a record that store ``fallback`` (:data:`FALLBACK`)."""
    out: dict[str, str | int | float] = {
        **fallback.config.as_dict(),
        **fallback.config.options(),
        "algorithm": fallback.algorithm,
    }
    if fallback.delta_scale is not None:
        out["delta_scale"] = float(fallback.delta_scale)
    if fallback.wall_ms is not None:
        out["wall_ms"] = float(fallback.wall_ms)
    return {FALLBACK + k: v for k, v in out.items()}


def read_fallback(options: Mapping[str, Any]) -> TunedFallback | None:
    """The fallback stored in a record's ``options``, or None where it stores none."""
    own = {k.removeprefix(FALLBACK): v for k, v in options.items() if k.startswith(FALLBACK)}
    if not own:
        return None
    labels = {k: str(own[k]) for k in KERNELS}
    config = LaunchConfig.from_parts(labels, own)
    algorithm = str(own["algorithm"])
    scale = own.get("delta_scale")
    wall = own.get("wall_ms")
    return TunedFallback(
        config,
        algorithm,
        float(scale) if scale is not None and algorithm == "near-far" else None,
        None if wall is None else float(wall),
    )


MEASURED_ON = "measured_on_kernels"
"""The option of a record carried to a new kernel digest without re-measuring: the digest its
numbers were measured on. Reports and the tuned look-up name it."""


def _chosen_from_options(algorithm: str, options: Mapping[str, Any]) -> str:
    """What an older record (no typed field) runs: its algorithm, or for ``"auto"`` the one
    named in its options (Crauser OUT when none is: what the look-up always ran then)."""
    if algorithm != "auto":
        return algorithm
    return str(options.get("algorithm", "crauser"))


KERNEL_KINDS = ("engine", "paper")
"""What a selection of the database (:func:`tuning_db.transfer.export_json`) can name: engine 2's
records, or those of the paper's three kernels."""


def is_engine2(r: BestRecord) -> bool:
    """A record of engine 2 (``tune engine``: loop mechanism and launch searched end to end),
    as opposed to the paper's per-kernel characterisation of its relax/min/update kernels."""
    return r.config.loop != "legacy" or r.tuned_config.loop != "legacy"


def is_engine2_run(r: RunRecord) -> bool:
    """A run of engine 2's searches: its studies are named after the engine (``engine``, and
    ``engine-many`` for the many-source choices), a paper run's after its kernels
    (``relax,min,update``)."""
    return r.key.kernel.split("-")[0] == "engine"
