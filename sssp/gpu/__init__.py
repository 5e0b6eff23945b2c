"""GPU runtime (pycuda). Importing this package does not import pycuda; using it does.

Without pycuda or a CUDA device, :func:`is_available` is False and building a solver raises
:class:`sssp.BackendUnavailableError` with the install hint.
"""

from .device import DeviceInfo, device_info, is_available

__all__ = ["DeviceInfo", "EngineSolver", "GPUSolver", "device_info", "is_available", "make_solver"]


def __getattr__(name: str):
    # Lazy: these modules import pycuda when used.
    if name == "GPUSolver":
        from .runtime import GPUSolver

        return GPUSolver
    if name == "make_solver":
        from .factory import make_solver

        return make_solver
    if name == "EngineSolver":
        from .engine import EngineSolver

        return EngineSolver
    raise AttributeError(name)
