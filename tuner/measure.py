"""Kernel Tuner as the measurement engine.

One ``tune_kernel`` call per kernel measures every configuration the search asks for on all of
the workload's captured states:

* the kernel is compiled with the project's compile-time ``#define`` s only (``defines=``), so
  the source is identical for every launch-time configuration; :class:`StateObserver` memoises
  the backend's module builds, so one build serves every block size and L1 state (Kernel Tuner
  would otherwise run nvcc again for each);
* before each timed launch the observer copies the next captured state into the kernel's
  argument buffers (outside the timed region), so every launch starts from a real solve's state
  and the kernels' own writes (relax's ``atomicMin``, update's settling) never leak into the
  next launch;
* per configuration the observer applies the L1 state to the compiled function, reads the
  carveout attribute back, and reports the weighted per-state median time (the objective);
* outputs are checked against the host reference of one kernel step on the first state (the
  default configuration produces the same, bit for bit); a mismatch is recorded as
  ``wrong_result``, not raised.

Kernel Tuner's cache files are kept: they make an interrupted run skip measured configurations,
and ``simulation_mode=True`` replays them on a machine without a GPU.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import kernels
from kernels import KERNEL_NAMES, NVCC_OPTIONS
from sssp.errors import TuningError

from . import space
from .workload import ITER, KernelState, Workload, min_reference, relax_reference, update_reference

log = logging.getLogger(__name__)

OBJECTIVE = "weighted_ms"
HARNESS_VERSION = 2
"""Bump when what a measurement means changes (workload, verification, objective): Kernel
Tuner serves configurations from its cache file without re-measuring, so results of an older
harness must not share a cache file with new ones."""


@dataclass
class KernelProblem:
    """Kernel Tuner's inputs for one kernel: arguments (first state), answer, the per-state
    argument contents, the state weights, grid rules."""

    kernel: str
    function: str
    arguments: list
    answer: list | None
    state_args: list[dict[int, np.ndarray]]  # per state: argument index -> contents
    weights: list[float]
    problem_size: Any
    grid_div_x: Any
    smem_args: dict | None
    defines: dict


def _dist_inf(dtype) -> int:
    return int(np.iinfo(dtype).max)


def build_problem(wl: Workload, kernel: str) -> KernelProblem:
    """Arguments and references for ``kernel`` from a captured workload."""
    states: list[KernelState] = wl.states.get(kernel, [])
    if not states:
        raise TuningError(f"the workload has no captured states for {kernel}")
    g = wl.graph if wl.variant == "successors" else wl.graph.reverse()
    n = np.int32(wl.graph.n)
    it = np.int32(ITER)
    inf = wl.inf
    dd = wl.dist_dtype
    crauser = wl.algorithm == "crauser"
    omega: np.ndarray = wl.graph.omega().astype(dd)
    omega[wl.graph.omega() < 0] = inf
    dsize = np.dtype(dd).itemsize
    defines = {
        "SSSP_DIST_BITS": 8 * dsize,
        "SSSP_WEIGHT_BITS": 8 * np.dtype(wl.weight_dtype).itemsize,
        "SSSP_CRAUSER": int(crauser),
        "SSSP_RELAX_LANES": lambda p: p.get("lanes", 1),
    }
    s0 = states[0]
    if kernel == "relax":
        args = [
            g.indptr,
            g.indices,
            g.weights.astype(wl.weight_dtype),
            s0.settled_at.copy(),
            s0.dist.copy(),
            n,
            it,
        ]
        state_args = [{3: s.settled_at, 4: s.dist} for s in states]
        answer: list[np.ndarray | None] = [None] * 7
        # Unchanged inputs are listed too: Kernel Tuner restores exactly the arrays that have an
        # answer before verifying, and the observer leaves the last state in the others.
        answer[3] = s0.settled_at
        answer[4] = relax_reference(wl.graph, s0.settled_at, s0.dist)
        return KernelProblem(
            kernel,
            KERNEL_NAMES[("relax", wl.variant)],
            args,
            answer,
            state_args,
            [s.weight for s in states],
            lambda p: (int(n) * p.get("lanes", 1),),
            ["block_size_x"],
            None,
            defines,
        )
    if kernel == "min":
        delta: np.ndarray = np.full(2, inf, dd)
        args = [s0.settled_at.copy(), s0.dist.copy(), omega, delta.copy(), n, it]
        state_args = [{0: s.settled_at, 1: s.dist, 3: delta} for s in states]
        answer = [None] * 6
        answer[0], answer[1] = s0.settled_at, s0.dist
        answer[3] = np.array([inf, min_reference(s0.settled_at, s0.dist, omega, inf, crauser)], dd)
        return KernelProblem(
            kernel,
            KERNEL_NAMES[("min", wl.variant)],
            args,
            answer,
            state_args,
            [s.weight for s in states],
            int(n),
            [lambda p: 2 * p["block_size_x"]],
            {"size": lambda p: p["block_size_x"] * dsize},
            defines,
        )
    if kernel == "update":
        deltas: list[np.ndarray] = [
            np.array([inf, s.delta if s.delta is not None else inf], dd) for s in states
        ]
        count = np.zeros(2, np.uint32)
        args = [s0.settled_at.copy(), s0.dist.copy(), deltas[0].copy(), count.copy(), n, it]
        state_args = [
            {0: s.settled_at, 1: s.dist, 2: d, 3: count}
            for s, d in zip(states, deltas, strict=True)
        ]
        settled_ref, settled_n = update_reference(
            s0.settled_at, s0.dist, int(deltas[0][1]), inf, crauser
        )
        answer = [None] * 6
        answer[0] = settled_ref
        answer[1], answer[2] = s0.dist, deltas[0]
        answer[3] = np.array([0, settled_n], np.uint32)
        return KernelProblem(
            kernel,
            KERNEL_NAMES[("update", wl.variant)],
            args,
            answer,
            state_args,
            [s.weight for s in states],
            int(n),
            ["block_size_x"],
            None,
            defines,
        )
    raise TuningError(f"unknown kernel {kernel!r}")


class Verifier:
    """Kernel Tuner ``verify`` callback that records instead of raising: the observer picks up
    the verdict for the configuration being measured (verification precedes benchmarking)."""

    def __init__(self) -> None:
        self.last_ok: bool | None = None
        self.last_message = ""

    def __call__(self, answer, result_host, atol=None) -> bool:
        ok, msg = True, ""
        for i, (want, got) in enumerate(zip(answer, result_host, strict=False)):
            if want is None:
                continue
            got = np.asarray(got).reshape(np.asarray(want).shape)
            if not np.array_equal(want, got):
                bad = np.flatnonzero(want != got)
                ok, msg = False, f"argument {i}: {bad.size} elements differ (first at {bad[0]})"
                break
        self.last_ok, self.last_message = ok, msg
        return True


def make_observer(problem: KernelProblem, verifier: Verifier) -> Any:
    """A Kernel Tuner benchmark observer (memoised module builds, per-state argument restore,
    L1 state per configuration, weighted objective, verification verdict). Built here so that
    kernel_tuner and pycuda are imported only when measuring."""
    import pycuda.driver as cuda
    from kernel_tuner.observers.observer import BenchmarkObserver

    from sssp.gpu.runtime import apply_l1

    class StateObserver(BenchmarkObserver):
        def __init__(self) -> None:
            self.state_bufs: list[dict[int, tuple[Any, int]]] = []
            self.launch = 0
            self.times: list[list[float]] = []
            self.applied = ""

        def register_device(self, dev: Any) -> None:
            self.dev = dev
            build = dev.source_mod
            memo: dict = {}

            def cached_build(source, **kw):
                key = (source, tuple(kw.get("options") or ()), kw.get("arch"), kw.get("code"))
                if key not in memo:
                    memo[key] = build(source, **kw)
                return memo[key]

            dev.source_mod = cached_build
            for contents in problem.state_args:
                bufs = {}
                for i, arr in contents.items():
                    buf = cuda.mem_alloc(max(arr.nbytes, 8))
                    cuda.memcpy_htod(buf, np.ascontiguousarray(arr))
                    bufs[i] = (buf, arr.nbytes)
                self.state_bufs.append(bufs)

        def register_configuration(self, params: dict) -> None:
            self.launch = 0
            self.times = [[] for _ in self.state_bufs]
            self.applied = apply_l1(self.dev.func, params["l1"])

        def before_start(self) -> None:
            k = self.launch % len(self.state_bufs)
            # dev.allocations[i] holds the i-th array argument (the arrays come first).
            for i, (buf, nbytes) in self.state_bufs[k].items():
                cuda.memcpy_dtod(self.dev.allocations[i], buf, nbytes)

        def after_finish(self) -> None:
            k = self.launch % len(self.state_bufs)
            self.times[k].append(self.dev.end.time_since(self.dev.start))
            self.launch += 1

        def get_results(self) -> dict:
            medians = [float(np.median(t)) if t else float("nan") for t in self.times]
            # One value per repetition: the weighted sum over states of that repetition's
            # launches, i.e. an estimate of the kernel's time over one whole solve.
            reps = min(len(t) for t in self.times)
            rep_ms = [
                float(sum(w * t[r] for w, t in zip(problem.weights, self.times, strict=True)))
                for r in range(reps)
            ]
            ok = verifier.last_ok
            verifier.last_ok = None
            return {
                OBJECTIVE: float(np.median(rep_ms)),
                "rep_ms": rep_ms,
                "state_ms": medians,
                "applied_l1": self.applied,
                "verified": -1 if ok is None else int(ok),
                "verify_message": verifier.last_message,
            }

    return StateObserver()


def run_kernel_tuner(
    problem: KernelProblem,
    *,
    strategy: Any,
    scope: str,
    cache_file: Path,
    simulation: bool = False,
    repetitions: int = 5,
    device: int = 0,
) -> tuple[list[dict], dict]:
    """One ``kernel_tuner.tune_kernel`` call for ``problem``; returns (results, environment)."""
    import kernel_tuner

    verifier = Verifier()
    iterations = repetitions * len(problem.state_args)
    observers = [] if simulation else [make_observer(problem, verifier)]
    tune_params = space.tune_params(problem.kernel, scope)
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    results, env = kernel_tuner.tune_kernel(
        problem.function,
        kernels.signature_source(problem.defines),
        problem.problem_size,
        problem.arguments,
        tune_params,
        grid_div_x=problem.grid_div_x,
        smem_args=problem.smem_args,
        answer=None if simulation else problem.answer,
        verify=None if simulation else verifier,
        lang="PYCUDA" if not simulation else None,
        device=device,
        compiler_options=list(NVCC_OPTIONS),
        defines=problem.defines,
        iterations=iterations,
        quiet=True,
        strategy=strategy,
        cache=str(cache_file),
        simulation_mode=simulation,
        observers=observers,
        objective=OBJECTIVE,
        objective_higher_is_better=False,
    )
    return results, env


def replay_problem(
    kernel: str, n: int, *, algorithm: str, variant: str, dist_bits: int, weight_bits: int
) -> KernelProblem:
    """A stand-in problem for replaying recorded measurements (``simulation_mode``): the same
    kernel, problem size and argument types as the recorded run, with placeholder arrays."""
    dd = np.uint32 if dist_bits == 32 else np.uint64
    wd = np.uint32 if weight_bits == 32 else np.uint64
    n32, it = np.int32(n), np.int32(ITER)
    defines = {
        "SSSP_DIST_BITS": dist_bits,
        "SSSP_WEIGHT_BITS": weight_bits,
        "SSSP_CRAUSER": int(algorithm == "crauser"),
        "SSSP_RELAX_LANES": lambda p: p.get("lanes", 1),
    }
    i32 = np.zeros(1, np.int32)
    d = np.zeros(1, dd)
    if kernel == "relax":
        args = [np.zeros(2, np.int64), i32, np.zeros(1, wd), i32, d, n32, it]
        return KernelProblem(
            kernel,
            KERNEL_NAMES[("relax", variant)],
            args,
            None,
            [],
            [],
            lambda p: (n * p.get("lanes", 1),),
            ["block_size_x"],
            None,
            defines,
        )
    if kernel == "min":
        args = [i32, d, d, d, n32, it]
        return KernelProblem(
            kernel,
            KERNEL_NAMES[("min", variant)],
            args,
            None,
            [],
            [],
            n,
            [lambda p: 2 * p["block_size_x"]],
            {"size": lambda p: p["block_size_x"]},
            defines,
        )
    if kernel == "update":
        args = [i32, d, d, np.zeros(1, np.uint32), n32, it]
        return KernelProblem(
            kernel,
            KERNEL_NAMES[("update", variant)],
            args,
            None,
            [],
            [],
            n,
            ["block_size_x"],
            None,
            defines,
        )
    raise TuningError(f"unknown kernel {kernel!r}")
