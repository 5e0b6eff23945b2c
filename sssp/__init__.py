"""Crauser's parallel Dijkstra on CPU and GPU, with auto-tuned CUDA kernels.

``import sssp`` never imports pycuda: the GPU runtime in :mod:`sssp.gpu` loads it lazily.
"""

from .classes import GraphClass, paper_classes, parse_size
from .config import ConfigSource, KernelConfig, LaunchConfig
from .errors import (
    BackendUnavailableError,
    GraphFormatError,
    InvalidGraphError,
    KernelCompileError,
    SSSPError,
    StoreError,
    TuningError,
    UnknownClassError,
)
from .graph import Graph, GraphFeatures
from .result import UNREACHABLE, SSSPResult

__all__ = [
    "UNREACHABLE",
    "BackendUnavailableError",
    "ConfigSource",
    "Graph",
    "GraphClass",
    "GraphFeatures",
    "GraphFormatError",
    "InvalidGraphError",
    "KernelCompileError",
    "KernelConfig",
    "LaunchConfig",
    "SSSPError",
    "SSSPResult",
    "StoreError",
    "TuningError",
    "UnknownClassError",
    "paper_classes",
    "parse_size",
]
__version__ = "0.1.0"
