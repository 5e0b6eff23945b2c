"""CUDA device discovery and context handling. The only module that imports pycuda.driver;
it does so lazily, so importing it on a machine without CUDA is harmless."""

from __future__ import annotations

import atexit
import logging
import shutil
import subprocess
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..errors import BackendUnavailableError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceInfo:
    """What identifies a GPU for compile caches and the tuning database."""

    ordinal: int
    name: str
    uuid: str
    compute_capability: tuple[int, int]
    sm_count: int
    total_memory: int
    driver_version: str
    cuda_version: str
    pci_bus_id: str

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    @property
    def cc_string(self) -> str:
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"


def driver() -> Any:
    """``pycuda.driver``, initialised; :class:`BackendUnavailableError` if that is impossible."""
    try:
        import pycuda.driver as cuda
    except ImportError as err:
        raise BackendUnavailableError("gpu", f"pycuda cannot be imported ({err})") from err
    try:
        cuda.init()
        count = cuda.Device.count()
    except Exception as err:  # pycuda raises its own LogicError/RuntimeError subclasses
        raise BackendUnavailableError(
            "gpu", f"the CUDA driver failed to initialise ({err})"
        ) from err
    if count == 0:
        raise BackendUnavailableError("gpu", "no CUDA device is visible")
    return cuda


# CUDA keeps a stack of current contexts per thread, so what this thread has pushed is kept
# per thread too: a device thread of sssp.multidevice pushes its own device's context.
_local = threading.local()


def _pushed() -> dict[int, Any]:
    pushed = getattr(_local, "contexts", None)
    if pushed is None:
        pushed = _local.contexts = {}
    return pushed


def activate(ordinal: int = 0) -> Any:
    """Make device ``ordinal``'s primary context current on this thread and return it.

    The primary context is the one Kernel Tuner's pycuda backend also uses, so device memory of
    the runtime and of the tuner live in one context. It is pushed once per thread; the main
    thread's is popped at exit, another thread's by :func:`deactivate`.
    """
    cuda = driver()
    pushed = _pushed()
    if ordinal in pushed:
        return pushed[ordinal]
    if not 0 <= ordinal < cuda.Device.count():
        raise BackendUnavailableError(
            "gpu", f"device {ordinal} does not exist ({cuda.Device.count()} visible)", hint=""
        )
    ctx = cuda.Device(ordinal).retain_primary_context()
    ctx.push()
    pushed[ordinal] = ctx
    if threading.current_thread() is threading.main_thread():

        def _pop() -> None:
            try:
                ctx.pop()
            except Exception:  # interpreter shutdown: nothing useful left to do
                pass

        atexit.register(_pop)
    return ctx


def adopt(context: Any, ordinal: int) -> Any:
    """Make ``context``, the one another thread's solver was built in (its ``context``), current
    on this thread too, so that what this thread allocates for that solver belongs to it.

    pycuda frees a buffer, stream or event in the context object that was current when it was
    made, and only in a thread where that object is current or that created it. A device thread
    of :mod:`sssp.multidevice` that drives the caller's own solver therefore pushes the caller's
    context object rather than a new one of its own (:func:`activate`): the solver's close, on
    the caller's thread, then frees what the device thread staged, instead of warning that it
    "could not be cleaned up" and leaking it until exit. :func:`deactivate` pops it.
    """
    pushed = _pushed()
    if ordinal in pushed:
        return pushed[ordinal]
    context.push()
    pushed[ordinal] = context
    return context


def deactivate() -> None:
    """Pop the contexts that :func:`activate` pushed on this thread (a device thread's last
    call, so the primary contexts it retained are released)."""
    pushed = _pushed()
    while pushed:
        _, ctx = pushed.popitem()  # the last pushed first: pop() takes the top of the stack
        try:
            ctx.pop()
        except Exception as err:  # a context already gone: nothing left to release
            log.debug("context pop failed: %s", err)


def device_count() -> int:
    """CUDA devices visible to this process (:class:`BackendUnavailableError` without CUDA)."""
    return int(driver().Device.count())


def _uuid(pci_bus_id: str) -> str:
    """GPU UUID through NVML (or nvidia-smi); pycuda does not expose it."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode())
        uuid = pynvml.nvmlDeviceGetUUID(handle)
        return uuid.decode() if isinstance(uuid, bytes) else str(uuid)
    except Exception:
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run(
                [smi, f"--id={pci_bus_id}", "--query-gpu=uuid", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
                check=True,
            )
            if out.stdout.strip():
                return out.stdout.strip()
        except (subprocess.SubprocessError, OSError):
            pass
    return f"PCI-{pci_bus_id}"


def _driver_string(cuda: Any) -> str:
    try:
        import pynvml

        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)
    except Exception:
        v = cuda.get_driver_version()
        return f"cuda-driver-api {v // 1000}.{(v % 1000) // 10}"


@cache
def device_info(ordinal: int = 0) -> DeviceInfo:
    """Describe device ``ordinal``."""
    cuda = driver()
    activate(ordinal)
    dev = cuda.Device(ordinal)
    attr = cuda.device_attribute
    bus = dev.pci_bus_id()
    drv = cuda.get_driver_version()
    return DeviceInfo(
        ordinal=ordinal,
        name=dev.name(),
        uuid=_uuid(bus),
        compute_capability=tuple(dev.compute_capability()),
        sm_count=int(dev.get_attribute(attr.MULTIPROCESSOR_COUNT)),
        total_memory=int(dev.total_memory()),
        driver_version=_driver_string(cuda),
        cuda_version=f"{drv // 1000}.{(drv % 1000) // 10}",
        pci_bus_id=bus,
    )


@cache
def is_available(ordinal: int = 0) -> bool:
    """True when pycuda imports and device ``ordinal`` exists (cached; never raises)."""
    try:
        cuda = driver()
        return ordinal < cuda.Device.count()
    except BackendUnavailableError as err:
        log.debug("GPU backend unavailable: %s", err)
        return False
