"""The one error family of the project.

Every error a user can cause derives from :class:`SSSPError`, so callers (and the CLIs) can catch
one type. Messages name the offending file, line or value; the same condition is always worded
the same way.

As in SciPy and NetworkX, errors about a bad value also derive from :class:`ValueError`
(:class:`GraphFormatError`, :class:`InvalidGraphError`, :class:`InvalidArgumentError`,
:class:`UnknownClassError`) and errors about a value of the wrong type from :class:`TypeError`
(:class:`InvalidTypeError`), so code written for those libraries catches them unchanged.
:class:`BackendUnavailableError` is also an :class:`ImportError`, as NetworkX's "backend is not
installed" and Numba's ``CudaSupportError`` are: ``except ImportError`` is how Python code falls
back when an optional accelerator cannot be used.

Warnings about requests that are honoured differently than asked (``tuned=True`` on the CPU)
are of the category :class:`SSSPWarning`, issued through :mod:`warnings` so that ``warnings.filterwarnings``
and ``pytest.warns`` see them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from pathlib import Path
from types import FrameType


class SSSPError(Exception):
    """Root of every error raised on purpose by ``sssp``, ``kernels``, ``tuner`` and ``tuning_db``."""


class GraphFormatError(SSSPError, ValueError):
    """A graph file is malformed. Carries the file and, where known, the 1-based line."""

    def __init__(self, path: str | Path | None, message: str, *, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


class InvalidGraphError(SSSPError, ValueError):
    """Arrays or parameters do not describe a valid graph (negative weight, id out of range...)."""


class InvalidArgumentError(SSSPError, ValueError):
    """A parameter has a value outside its domain (unknown algorithm, variant, backend...)."""


class InvalidTypeError(SSSPError, TypeError):
    """A parameter has the wrong type (a source node that is not an integer, a config that is
    not a :class:`~sssp.config.LaunchConfig`...)."""


class UnknownClassError(SSSPError, ValueError):
    """A size or degree label that is not one of the known graph classes."""


class BackendUnavailableError(SSSPError, ImportError):
    """A requested backend cannot run here (no pycuda, no CUDA device, ...).

    An :class:`ImportError` rather than a :class:`RuntimeError`: the condition is an optional
    component that cannot be used on this machine, and ``except ImportError`` is the fallback
    idiom for those (NetworkX raises ``ImportError`` for a backend that is not installed, Numba's
    ``CudaSupportError`` derives from it for a missing driver or device). CuPy's
    ``CUDARuntimeError(RuntimeError)`` reports a CUDA call that failed, which is a different
    thing: here nothing was run.
    """

    # sssp-tune is installed from its repository (it is not on PyPI): the extra is named there.
    INSTALL_HINT = (
        "install the GPU extra on a CUDA host, from the sssp-tune checkout: pip install -e '.[gpu]'"
    )

    def __init__(self, backend: str, reason: str, *, hint: str | None = None):
        self.backend = backend
        self.reason = reason
        self.hint = self.INSTALL_HINT if hint is None else hint
        msg = f"backend {backend!r} is unavailable: {reason}"
        if self.hint:
            msg += f" ({self.hint})"
        super().__init__(msg)


class KernelCompileError(SSSPError):
    """``nvcc``/NVRTC rejected a kernel source. Keeps source, options and the compiler log."""

    def __init__(
        self, message: str, *, source: str = "", options: tuple[str, ...] = (), log: str = ""
    ):
        self.source = source
        self.options = tuple(options)
        self.log = log
        text = message
        if options:
            text += f"\noptions: {' '.join(options)}"
        if log:
            text += f"\ncompiler log:\n{log.strip()}"
        super().__init__(text)


class TuningError(SSSPError):
    """The tuning pipeline cannot proceed (no workload, bad search space, ...)."""


class StoreError(SSSPError):
    """The tuning database is unreachable, corrupt or of another schema version."""


class SolverError(SSSPError, RuntimeError):
    """A solve failed on the device without a fault in the input: a grid barrier timed out (the
    grid was not resident) or the loop passed its step guard (a defect, reported instead of a
    hung device), or the device solver asked was closed."""


class SSSPWarning(UserWarning):
    """Root of the project's warnings: filter them all with
    ``warnings.filterwarnings("ignore", category=sssp.SSSPWarning)``."""


class ConfigIgnoredWarning(SSSPWarning):
    """A GPU-only request (``tuned=True``, ``config=``) is ignored because the solve runs on the
    CPU; the message says why."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PASS_THROUGH = (_PACKAGE_DIR, os.path.abspath(contextlib.__file__))
"""Frames a warning is not attributed to: the package's own, and the context managers it
enters on the caller's behalf."""


def warn(message: str, category: type[Warning] = SSSPWarning) -> None:
    """:func:`warnings.warn`, attributed to the first caller outside the ``sssp`` package (so the
    warning names the user's line, whichever public entry point it went through)."""
    level = 2  # 1 is this function, 2 its caller
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PASS_THROUGH):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
