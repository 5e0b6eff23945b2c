"""Crauser's parallel Dijkstra on CPU and GPU, with auto-tuned CUDA kernels.

``import sssp`` never imports pycuda: the GPU runtime in :mod:`sssp.gpu` loads it lazily.
"""

from .classes import GraphClass, paper_classes, parse_size
from .config import ConfigSource, KernelConfig, LaunchConfig
from .convert import as_graph
from .errors import (
    BackendUnavailableError,
    ConfigIgnoredWarning,
    GraphFormatError,
    InvalidArgumentError,
    InvalidGraphError,
    InvalidTypeError,
    KernelCompileError,
    SolverError,
    SSSPError,
    SSSPWarning,
    StoreError,
    TuningError,
    UnknownClassError,
)
from .formats import load, save
from .generators import generate
from .graph import Graph, GraphFeatures
from .result import UNREACHABLE, MultiSourceResult, NearestSourceResult, SSSPResult
from .solve import Solver, clear_solver_cache, solve

__all__ = [
    "UNREACHABLE",
    "BackendUnavailableError",
    "ConfigIgnoredWarning",
    "ConfigSource",
    "Graph",
    "GraphClass",
    "GraphFeatures",
    "GraphFormatError",
    "InvalidArgumentError",
    "InvalidGraphError",
    "InvalidTypeError",
    "KernelCompileError",
    "KernelConfig",
    "LaunchConfig",
    "MultiSourceResult",
    "NearestSourceResult",
    "SSSPError",
    "SSSPResult",
    "SSSPWarning",
    "Solver",
    "SolverError",
    "StoreError",
    "TuningError",
    "UnknownClassError",
    "as_graph",
    "clear_solver_cache",
    "generate",
    "load",
    "paper_classes",
    "parse_size",
    "save",
    "solve",
]
__version__ = "0.1.0"
