"""One validation entry (sssp.request): each bad input gets one error class and one wording,
whichever entry point it came through (solve, Solver, solve_many, the csgraph adapter, the CPU
solvers' own public functions)."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import sssp
import sssp.csgraph as cs
from sssp.cpu import solve_cpu
from sssp.cpu.many import CPURows
from sssp.errors import InvalidArgumentError, InvalidGraphError, InvalidTypeError, SSSPError
from sssp.request import SolverRequest

pytestmark = pytest.mark.timeout(120)

GRAPH = sssp.Graph.from_edges(4, [0, 0, 2], [1, 2, 1], [4, 1, 2])
MATRIX = np.array([[0, 4, 1, 0], [0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0]])


def _solve(source=0, **options):
    return lambda: sssp.solve(GRAPH, source, backend=options.pop("backend", "cpu"), **options)


def _solver(source=0, **options):
    def call():
        with sssp.Solver(GRAPH, backend=options.pop("backend", "cpu"), **options) as s:
            s.solve(source)

    return call


def _many(sources=(0,), **options):
    limit = options.pop("limit", None)

    def call():
        with sssp.Solver(GRAPH, backend=options.pop("backend", "cpu"), **options) as s:
            s.solve_many(list(sources), limit=limit)

    return call


def _one_limit(limit):
    return [
        lambda: sssp.solve(GRAPH, 0, backend="cpu", limit=limit),
        lambda: sssp.Solver(GRAPH, backend="cpu").solve(0, limit=limit),
        lambda: sssp.Solver(GRAPH, backend="cpu").solve_many([0, 1], limit=limit),
        lambda: cs.dijkstra(MATRIX, indices=[0], limit=limit, backend="cpu"),
    ]


# (error class, the whole message, the calls that must all raise exactly it)
CASES: dict[str, tuple[type[SSSPError], str, list[Callable[[], object]]]] = {
    "algorithm": (
        InvalidArgumentError,
        "unknown algorithm 'bellman': expected one of auto, dijkstra, martin, crauser, "
        "crauser-in, crauser-inout, near-far",
        [_solve(algorithm="bellman"), _solver(algorithm="bellman"), _many(algorithm="bellman")],
    ),
    "variant": (
        InvalidArgumentError,
        "unknown variant 'both': expected one of successors, predecessors",
        [
            _solve(variant="both"),
            _solver(variant="both"),
            _many(variant="both"),
            lambda: solve_cpu(GRAPH, 0, algorithm="crauser", variant="both"),
            lambda: CPURows(GRAPH, algorithm="crauser", variant="both"),
        ],
    ),
    "variant-of-algorithm": (
        InvalidArgumentError,
        "algorithm 'near-far' has no variant 'predecessors': use 'successors'",
        [
            _solve(algorithm="near-far", variant="predecessors"),
            _solver(algorithm="near-far", variant="predecessors"),
            _many(algorithm="near-far", variant="predecessors"),
            # refused whatever the backend: the GPU is never looked for
            _solver(algorithm="near-far", variant="predecessors", backend="gpu"),
            lambda: solve_cpu(GRAPH, 0, algorithm="near-far", variant="predecessors"),
            lambda: CPURows(GRAPH, algorithm="near-far", variant="predecessors"),
        ],
    ),
    "backend": (
        InvalidArgumentError,
        "unknown backend 'tpu': expected one of auto, cpu, gpu",
        [
            _solve(backend="tpu"),
            _solver(backend="tpu"),
            _many(backend="tpu"),
            lambda: cs.dijkstra(MATRIX, indices=[0], backend="tpu"),
        ],
    ),
    "delta-of-algorithm": (
        InvalidArgumentError,
        "delta applies to algorithm 'near-far' only, not 'crauser'",
        [
            _solve(algorithm="crauser", delta=3),
            _solver(algorithm="crauser", delta=3),
            _many(algorithm="crauser", delta=3),
            lambda: solve_cpu(GRAPH, 0, algorithm="crauser", delta=3),
            lambda: CPURows(GRAPH, algorithm="crauser", delta=3),
        ],
    ),
    "delta-value": (
        InvalidArgumentError,
        "delta must be a positive number, got -1",
        [
            _solve(delta=-1),
            _solver(algorithm="near-far", delta=-1),
            _many(delta=-1),
            lambda: solve_cpu(GRAPH, 0, algorithm="near-far", delta=-1),
            lambda: CPURows(GRAPH, algorithm="near-far", delta=-1),
        ],
    ),
    "delta-type": (
        InvalidTypeError,
        "delta must be a positive number, got '3'",
        [
            _solve(delta="3"),
            _solver(delta="3"),
            _many(delta="3"),
            lambda: solve_cpu(GRAPH, 0, algorithm="near-far", delta="3"),
        ],
    ),
    "config": (
        InvalidTypeError,
        "config must be a LaunchConfig, got str",
        [_solve(config="fast"), _solver(config="fast"), _many(config="fast")],
    ),
    "tuned": (
        InvalidTypeError,
        "tuned must be True or False, got 'yes'",
        [_solve(tuned="yes"), _solver(tuned="yes"), _many(tuned="yes")],
    ),
    "device": (
        InvalidArgumentError,
        "device must be a CUDA device ordinal >= 0, got -1",
        [_solve(device=-1), _solver(device=-1), _many(device=-1)],
    ),
    "source-type": (
        InvalidTypeError,
        "source 1.5 is not an integer node id",
        [
            _solve(1.5),
            _solver(1.5),
            _many([0, 1.5]),
            lambda: cs.dijkstra(MATRIX, indices=[1.5], backend="cpu"),
            lambda: solve_cpu(GRAPH, 1.5, algorithm="crauser"),  # type: ignore[arg-type]
            lambda: solve_cpu(GRAPH, 1.5, algorithm="dijkstra"),  # type: ignore[arg-type]
            lambda: solve_cpu(GRAPH, 1.5, algorithm="near-far"),  # type: ignore[arg-type]
        ],
    ),
    "source-bool": (
        InvalidTypeError,
        "source True is not an integer node id",
        [
            _solve(True),
            _solver(True),
            _many([True]),
            lambda: solve_cpu(GRAPH, True, algorithm="martin"),
        ],
    ),
    "source-range": (
        InvalidGraphError,
        "source 7 is out of range [0, 4)",
        [
            _solve(7),
            _solver(7),
            _many([0, 7]),
            _many(np.array([7], dtype=np.uint64)),
            lambda: cs.dijkstra(MATRIX, indices=[7], backend="cpu"),
            lambda: solve_cpu(GRAPH, 7, algorithm="crauser"),
            lambda: solve_cpu(GRAPH, 7, algorithm="dijkstra"),
            lambda: solve_cpu(GRAPH, 7, algorithm="near-far"),
        ],
    ),
    "limit-value": (
        InvalidArgumentError,
        "limit must be a non-negative number, got -1",
        _one_limit(-1),
    ),
    "limit-type": (
        InvalidTypeError,
        "limit must be a non-negative number, got 'far'",
        _one_limit("far"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_class_and_one_wording_from_every_entry_point(case: str) -> None:
    cls, message, calls = CASES[case]
    for i, call in enumerate(calls):
        with pytest.raises(SSSPError) as info:
            call()
        # exactly this class (not merely a relative), and the same words every time
        assert type(info.value) is cls, (case, i, type(info.value), info.value)
        assert str(info.value) == message, (case, i)


def test_errors_are_of_the_documented_builtin_family() -> None:
    for cls, _, _ in CASES.values():
        builtin = TypeError if cls is InvalidTypeError else ValueError
        assert issubclass(cls, SSSPError) and issubclass(cls, builtin)


def test_the_cpu_solvers_name_their_own_allowed_algorithms() -> None:
    # The same condition and words as the front door; the CPU's domain has no "auto".
    with pytest.raises(InvalidArgumentError) as info:
        solve_cpu(GRAPH, 0, algorithm="bellman")
    assert str(info.value) == (
        "unknown algorithm 'bellman': expected one of dijkstra, martin, crauser, crauser-in, "
        "crauser-inout, near-far"
    )


def test_the_request_is_built_once_and_frozen() -> None:
    with sssp.Solver(GRAPH, backend="cpu", delta=np.int32(3)) as solver:
        request = solver.request
        assert isinstance(request, SolverRequest)
        assert (request.algorithm, request.delta, type(request.delta)) == ("near-far", 3, int)
        assert solver.solve(0).stats["delta"] == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.variant = "predecessors"  # type: ignore[misc]


def test_nothing_is_written_when_a_source_is_bad() -> None:
    out = np.full((2, 4), -5, dtype=np.int64)
    with pytest.raises(InvalidGraphError, match=r"source 9 is out of range \[0, 4\)"):
        sssp.solve(GRAPH, [0, 9], backend="cpu", out=out)
    assert (out == -5).all()


def test_the_gpu_runtime_raises_only_the_error_family() -> None:
    """What escapes the GPU modules is an SSSPError (SolverError is also a RuntimeError, so
    ``except RuntimeError`` still catches a failed solve)."""
    gpu = Path(sssp.__file__).parent / "gpu"
    escaping = []
    for path in sorted(gpu.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in {"RuntimeError", "ValueError"}:
                    escaping.append(f"{path.name}:{node.lineno} raises {exc.id}")
    assert not escaping, escaping


class _StandInGPU:
    """A GPU solver that records its one-source calls (no device)."""

    config_detail = ""

    def __init__(self, graph, **kw) -> None:
        self.n, self.calls = graph.n, []

    def solve(self, s, **kw):
        from sssp.result import SSSPResult

        self.calls.append((s, type(s), sorted(kw)))
        return SSSPResult(np.zeros(self.n, np.int64), None, s, "crauser", "successors", "gpu", 1)

    def close(self) -> None:
        pass


@pytest.fixture
def standin_gpu(monkeypatch):
    """Solver claims the GPU backend and gets a _StandInGPU."""
    import sssp.gpu
    from sssp.solve import Solver

    monkeypatch.setattr(Solver, "_resolve_backend", staticmethod(lambda backend, algorithm: "gpu"))
    monkeypatch.setattr(sssp.gpu, "make_solver", _StandInGPU)
    return monkeypatch


def test_the_one_source_fast_path_keeps_every_check(standin_gpu) -> None:
    """Solver.solve hands a plain in-range int with no options straight to the GPU solver (the
    checks cost microseconds of a small graph's solve); every other call takes the checked
    path, so NumPy integers, options, bools and out-of-range ids behave as before."""
    from sssp.solve import Solver

    graph = sssp.generate("random", size=64, degree=2, seed=0)
    with Solver(graph, algorithm="crauser") as solver:
        calls = solver._gpu.calls
        assert solver.solve(3).source == 3
        assert calls[-1] == (3, int, ["t0"])  # the fast path
        solver.solve(np.int64(5))
        assert calls[-1] == (5, int, ["return_predecessors", "t0"])  # checked, then a Python int
        solver.solve(7, return_predecessors=False)
        assert calls[-1] == (7, int, ["return_predecessors", "t0"])
        for bad, error in [
            (True, InvalidTypeError),
            (graph.n, InvalidGraphError),
            (-1, InvalidGraphError),
        ]:
            with pytest.raises(error):
                solver.solve(bad)
        assert len(calls) == 3


def test_a_closed_gpu_solver_refuses_instead_of_solving_on_the_cpu(standin_gpu) -> None:
    """After close() (the end of a ``with`` block) a GPU Solver raises SolverError for one
    source and for many; it used to fall through to the CPU path and answer from there."""
    from sssp.errors import SolverError
    from sssp.solve import Solver

    graph = sssp.generate("random", size=64, degree=2, seed=0)
    with Solver(graph, algorithm="crauser") as solver:
        pass
    for call in (
        lambda: solver.solve(3),
        lambda: solver.solve(np.int64(3)),
        lambda: solver.solve([1, 2]),
    ):
        with pytest.raises(SolverError, match="closed"):
            call()
    standin_gpu.undo()
    with sssp.Solver(graph, backend="cpu") as cpu:
        pass
    assert cpu.solve(3).backend == "cpu"  # nothing was released: a CPU solver still answers
