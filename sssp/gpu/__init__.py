"""GPU runtime (pycuda). Importing this package does not import pycuda; using it does.

Without pycuda or a CUDA device, :func:`is_available` is False and building a solver raises
:class:`sssp.BackendUnavailableError` with the install hint.
"""

from .device import DeviceInfo, device_info, is_available

__all__ = ["DeviceInfo", "GPUSolver", "device_info", "is_available"]


def __getattr__(name: str):
    if name == "GPUSolver":
        from .runtime import GPUSolver

        return GPUSolver
    raise AttributeError(name)
