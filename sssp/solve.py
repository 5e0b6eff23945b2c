"""The front door: :func:`solve` and the reusable :class:`Solver`."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

import numpy as np

from .config import ConfigSource, LaunchConfig
from .errors import (
    BackendUnavailableError,
    ConfigIgnoredWarning,
    InvalidArgumentError,
    InvalidTypeError,
    warn,
)
from .graph import Graph
from .result import ALGORITHMS, CPU_ONLY_ALGORITHMS, VARIANTS, SSSPResult

log = logging.getLogger(__name__)

BACKENDS = ("auto", "cpu", "gpu")


class Solver:
    """Solve shortest paths on one graph from many sources.

    Parameters
    ----------
    graph : Graph
    algorithm : {"auto", "crauser", "martin", "crauser-in", "crauser-inout", "near-far", "dijkstra"}, optional
        ``"dijkstra"`` is SciPy's, the reference (CPU only); ``"near-far"`` is Δ-stepping with
        the default Δ (:func:`sssp.cpu.nearfar.default_delta`) unless ``delta`` is given.
        ``"auto"``: on the GPU, the algorithm the tuner chose for the graph's class
        (:func:`sssp.tuned.resolve_choice`; Crauser OUT when nothing is stored), on the CPU
        SciPy's Dijkstra. Default: ``"auto"`` with ``tuned=True``, else ``"crauser"``. The
        result's ``algorithm`` names what ran, and ``stats["config_detail"]`` (also
        ``Solver.config_detail``) why.
    variant : {"successors", "predecessors"}
    backend : {"auto", "cpu", "gpu"}
        ``"auto"`` takes the GPU when pycuda and a CUDA device are usable and the algorithm has a
        GPU version, else the CPU.
    tuned : bool
        Use the tuned launch configuration stored for this device, kernel version and the graph's
        class (the nearest stored class if this one is missing; the paper's default if nothing
        fits). GPU only.
    config : LaunchConfig, optional
        An explicit launch configuration; wins over ``tuned``.
    db : str, optional
        SQLAlchemy URL of the tuning database (default: the user's database).
    device : int
        CUDA device ordinal.
    delta : float, optional
        Bucket width of ``algorithm="near-far"`` (default: the rule in :mod:`sssp.cpu.nearfar`);
        refused for the other algorithms.

    On the GPU the graph is uploaded once, at construction.
    """

    def __init__(
        self,
        graph: Graph,
        *,
        algorithm: str | None = None,
        variant: str = "successors",
        backend: str = "auto",
        tuned: bool = False,
        config: LaunchConfig | None = None,
        db: str | None = None,
        device: int = 0,
        delta: float | None = None,
        **gpu_options: Any,
    ) -> None:
        if not isinstance(graph, Graph):
            raise InvalidTypeError(f"expected an sssp.Graph, got {type(graph).__name__}")
        requested = algorithm
        if algorithm is None:
            algorithm = "crauser"
        if algorithm not in (*ALGORITHMS, "auto"):
            raise InvalidArgumentError(
                f"unknown algorithm {algorithm!r}: expected auto or one of {', '.join(ALGORITHMS)}")
        if variant not in VARIANTS:
            raise InvalidArgumentError(f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}")
        if backend not in BACKENDS:
            raise InvalidArgumentError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")
        if config is not None and not isinstance(config, LaunchConfig):
            raise InvalidTypeError(f"config must be a LaunchConfig, got {type(config).__name__}")
        if delta is not None and algorithm != "near-far":
            raise InvalidArgumentError(f"delta applies to algorithm 'near-far' only, not {algorithm!r}")
        if algorithm == "auto" and config is not None:
            raise InvalidArgumentError("algorithm 'auto' picks its own configuration: pass an algorithm with config=")
        self.graph = graph
        self.algorithm = algorithm
        self.variant = variant
        self.delta = delta
        self.backend = self._resolve_backend(backend, "crauser" if algorithm == "auto" else algorithm)
        if requested is None and tuned and config is None and self.backend == "gpu":
            self.algorithm = algorithm = "auto"
        if algorithm == "auto" and self.backend == "cpu":
            self.algorithm = algorithm = "dijkstra"
        self.config: LaunchConfig | None = None
        self.config_source: ConfigSource | None = None
        self.config_detail = ""
        self._gpu = None
        if self.backend == "gpu":
            from .gpu import device_info, make_solver

            if config is not None:
                self.config, self.config_source = config, ConfigSource.EXPLICIT
            elif algorithm == "auto":
                from .tuned import resolve_choice

                algorithm, delta, self.config, self.config_source, self.config_detail = resolve_choice(
                    graph, device_info(device), variant=variant, db=db)
                self.algorithm, self.delta = algorithm, delta
            elif tuned:
                from .tuned import resolve_config

                self.config, self.config_source, self.config_detail = resolve_config(
                    graph, device_info(device), algorithm=algorithm, variant=variant, db=db
                )
            else:
                self.config, self.config_source = LaunchConfig.default(), ConfigSource.DEFAULT
            log.info("GPU launch configuration (%s): %s %s", self.config_source.value, self.config,
                     self.config_detail)
            if delta is not None:
                gpu_options = {**gpu_options, "delta": delta}
            self._gpu = make_solver(
                graph, algorithm=algorithm, variant=variant, config=self.config,
                config_source=self.config_source, device=device, **gpu_options,
            )
        elif tuned or config is not None:
            what = "tuned=True" if config is None else "config="
            why = ("backend 'cpu' was asked for" if backend == "cpu"
                   else f"algorithm {algorithm!r} runs on the CPU only" if algorithm in CPU_ONLY_ALGORITHMS
                   else "no GPU is usable here")
            # warnings.warn, not logging: the caller asked for something that will not happen,
            # and can filter it or assert it (pytest.warns) by its category.
            warn(f"{what} is ignored: it applies to the GPU backend only, and {why}; solving on "
                 "the CPU", ConfigIgnoredWarning)

    @staticmethod
    def _resolve_backend(backend: str, algorithm: str) -> str:
        if backend == "cpu" or algorithm in CPU_ONLY_ALGORITHMS:
            if backend == "gpu":
                # Refused before looking for a GPU: the answer would be no on any machine.
                raise BackendUnavailableError("gpu", f"algorithm {algorithm!r} runs on the CPU only", hint="")
            return "cpu"
        from .gpu import is_available

        if backend == "gpu":
            if not is_available():
                from .gpu.device import driver

                driver()  # raises BackendUnavailableError with the precise reason
            return "gpu"
        return "gpu" if is_available() else "cpu"

    def solve(self, source: int, **kwargs: Any) -> SSSPResult:
        """Distances and shortest-path tree from ``source``. GPU keyword options (``profile``)
        are ignored on the CPU.

        Raises
        ------
        InvalidTypeError
            ``source`` is not an integer (``1.7``, ``"3"`` and ``True`` are refused, never
            rounded or parsed). A ``TypeError``.
        InvalidGraphError
            ``source`` is outside ``[0, n)``. A ``ValueError``.
        """
        from .cpu.reference import check_source

        # bool is an int subclass, but True as a node id is almost surely a mistake.
        if isinstance(source, bool) or not isinstance(source, int | np.integer):
            raise InvalidTypeError(f"source {source!r} is not an integer node id")
        source = check_source(self.graph, source)
        if self._gpu is not None:
            res = self._gpu.solve(source, **kwargs)
            if self.config_detail:  # why this algorithm and configuration (tuned look-ups)
                res = dataclasses.replace(res, stats={**res.stats, "config_detail": self.config_detail})
            return res
        unknown = sorted(set(kwargs) - {"profile"})
        if unknown:
            raise InvalidTypeError(f"solve() got an unexpected keyword argument {unknown[0]!r}")
        from .cpu import solve_cpu

        extra = {"delta": self.delta} if self.delta is not None else {}
        return solve_cpu(self.graph, source, algorithm=self.algorithm, variant=self.variant, **extra)

    def solve_many(self, sources: Iterable[int], **kwargs: Any) -> list[SSSPResult]:
        """:meth:`solve` from each source in turn; every source is checked as there (no ``int()``
        cast, so ``1.7`` is refused rather than solved from node 1)."""
        return [self.solve(s, **kwargs) for s in sources]

    def close(self) -> None:
        if self._gpu is not None:
            self._gpu.close()
            self._gpu = None

    def __enter__(self) -> Solver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def solve(
    graph: Graph,
    source: int,
    *,
    algorithm: str = "crauser",
    variant: str = "successors",
    backend: str = "auto",
    tuned: bool = False,
    config: LaunchConfig | None = None,
    db: str | None = None,
    device: int = 0,
    delta: float | None = None,
    **kwargs: Any,
) -> SSSPResult:
    """Shortest paths from one source; see :class:`Solver` for the parameters.

    Returns
    -------
    SSSPResult
        Always the same type: ``dist`` (int64 with :data:`sssp.UNREACHABLE` for unreachable nodes
        on integer graphs, float64 with ``inf`` on real-weighted ones; ``dist_float`` is always
        float64 with ``inf``),
        ``pred`` (int32, -1 for the source and unreached nodes), iterations, timings, and on the
        GPU the launch configuration that ran and where it came from.
    """
    with Solver(graph, algorithm=algorithm, variant=variant, backend=backend, tuned=tuned,
                config=config, db=db, device=device, delta=delta) as solver:
        return solver.solve(source, **kwargs)
