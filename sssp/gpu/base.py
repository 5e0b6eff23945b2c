"""The bottom of the GPU layer: compiled modules (cached by source digest, parameters and
architecture), L1 states applied to loaded functions, and counted device buffers. The legacy
solver (:mod:`sssp.gpu.runtime`), engine 2 (:mod:`sssp.gpu.engine`), its wide loop and its
CUDA-graph loop all build on it; it imports none of them."""

from __future__ import annotations

import struct
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

import numpy as np

import kernels
from kernels import NVCC_OPTIONS, CompileParams

from ..config import L1_STATES
from ..errors import KernelCompileError, SolverError
from .device import driver
from .plan import MIN_ALLOC_BYTES

_cubins: dict[tuple[str, str, str], bytes] = {}

_Owner = TypeVar("_Owner")


class OwnerRef(Generic[_Owner]):
    """A helper's reference to the solver that owns it (a class attribute: ``solver:
    OwnerRef[EngineSolver] = OwnerRef()``, then ``self.solver = solver``), held weakly. A strong
    one would make a cycle that only the garbage collector breaks, at a time and in a thread of
    its choosing, where pycuda can no longer free the solver's streams, events, modules and
    page-locked memory (it warns "out-of-thread context could not be cleaned up" and leaks
    them); so a solver is freed when its last reference goes."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_ref"

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> OwnerRef[_Owner]: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> _Owner: ...
    def __get__(self, obj: object | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        owner = getattr(obj, self._slot)()
        if owner is None:
            raise SolverError(f"the solver that owned this {type(obj).__name__} is gone")
        return owner

    def __set__(self, obj: object, value: _Owner) -> None:
        setattr(obj, self._slot, weakref.ref(value))


def compile_cubin(
    params: CompileParams | kernels.EngineParams | kernels.ResultParams | kernels.WideParams,
    arch: str,
) -> bytes:
    """Compile the kernel source of ``params`` once per (digest, params, arch) in this process;
    pycuda's on-disk cache keeps them across processes."""
    key = (kernels.digest(params.source_file), params.key, arch)
    if key not in _cubins:
        driver()
        from pycuda.compiler import compile as nvcc_compile
        from pycuda.driver import CompileError

        options = [*NVCC_OPTIONS, *params.nvcc_flags()]
        text = kernels.source(params.source_file)
        try:
            _cubins[key] = nvcc_compile(text, options=options, no_extern_c=True, arch=arch)
        except CompileError as err:
            raise KernelCompileError(
                f"the kernels failed to compile for {params.key} on {arch}",
                source=text,
                options=tuple(options),
                log=str(getattr(err, "stderr", err)),
            ) from err
    return _cubins[key]


def apply_l1(func: Any, l1: str) -> str:
    """Apply an L1 state (see :mod:`sssp.config`) to a loaded function; return what the driver
    reports back for the carveout preference, e.g. ``"PREFER_L1 carveout=0"``."""
    cuda = driver()
    pref, carveout = L1_STATES[l1]
    func.set_cache_config(getattr(cuda.func_cache, pref))
    attr = cuda.function_attribute.PREFERRED_SHARED_MEMORY_CARVEOUT
    func.set_attribute(attr, -1 if carveout is None else carveout)
    return f"{pref} carveout={func.get_attribute(attr)}"


class DeviceBuffers:
    """Device allocations of one solver, counted and freed together (``self.cuda`` is
    ``pycuda.driver``; ``self._buffers`` and ``self._nbytes`` start empty and zero)."""

    cuda: Any
    _buffers: list
    _nbytes: int

    def _alloc(self, nbytes: int) -> Any:
        nbytes = max(int(nbytes), MIN_ALLOC_BYTES)
        buf = self.cuda.mem_alloc(nbytes)
        self._buffers.append(buf)
        self._nbytes += nbytes
        return buf

    def _upload(self, array: np.ndarray) -> Any:
        array = np.ascontiguousarray(array)
        buf = self._alloc(array.nbytes)
        if array.nbytes:
            self.cuda.memcpy_htod(buf, array)
        return buf

    def _free(self) -> None:
        for buf in self._buffers:
            buf.free()
        self._buffers.clear()


class PackedLaunch:
    """A kernel's argument buffer, packed once in the layout ``prepared_async_call`` packs (a
    field at a multiple of its size), with the arguments that change between launches written
    into it in place (:meth:`set`, or a :meth:`writer`'s function). pycuda's
    ``prepared_async_call`` packs every argument again on each call and then hands the buffer to
    the function's ``_launch_kernel``: 11-28 us for the phast sweep's 38 arguments on an H100's
    host (run 151; 5-8 us through this, run 152), on a solve's critical path where the launch
    starts the device's work. :meth:`launch` calls ``_launch_kernel`` with the kept buffer (the
    driver copies the arguments at the launch, so the next write may follow at once), or
    ``prepared_async_call`` with the arguments unpacked from it where a function has no such
    method (another pycuda, a test's stand-in, a probe's wrapper).

    Parameters
    ----------
    names : tuple of str
        The kernel's arguments in order (a spec's ``args``).
    fmt : str
        Their struct codes, one a name (a spec's ``arg_format``: ``P``, ``i``, ``I``, ...).
    """

    def __init__(self, names: tuple[str, ...], fmt: str) -> None:
        if len(names) != len(fmt):
            raise SolverError(f"{len(names)} argument names for a format of {len(fmt)} codes")
        self._fmt = struct.Struct("@" + fmt)
        # Each argument's struct code and offset in the buffer: the end of the packed prefix that
        # ends with it, less its size.
        self._at: dict[str, tuple[str, int]] = {}
        for i, (name, code) in enumerate(zip(names, fmt, strict=True)):
            self._at[name] = (code, struct.calcsize("@" + fmt[: i + 1]) - struct.calcsize(code))
        self._put = {
            name: (struct.Struct(code).pack_into, at) for name, (code, at) in self._at.items()
        }
        self._buf = bytearray(self._fmt.size)

    def set(self, **values: Any) -> None:
        """Arguments by name (ints, NumPy scalars or device allocations)."""
        buf, put = self._buf, self._put
        for name, value in values.items():
            write, at = put[name]
            write(buf, at, int(value))

    def writer(self, *names: str) -> Callable[..., None]:
        """A function that writes the arguments ``names`` (Python ints, in this order) in one
        call: one struct write for each run of them that lies in the buffer as a packed struct
        of their codes would (neighbours in the argument list, no padding between them that
        ``@`` packing would not add), for a launch that changes the same few arguments every
        time, where :meth:`set` looks up and converts each one."""
        runs: list[tuple[Any, int, int, int]] = []  # (pack_into, offset, first, end) in names
        i = 0
        while i < len(names):
            code, at = self._at[names[i]]
            j = i + 1
            while j < len(names):
                nxt, nat = self._at[names[j]]
                if nat - at != struct.calcsize("@" + code + nxt) - struct.calcsize(nxt):
                    break
                code += nxt
                j += 1
            runs.append((struct.Struct("@" + code).pack_into, at, i, j))
            i = j
        buf = self._buf
        if len(runs) == 1:
            write, at, _, _ = runs[0]
            return lambda *values: write(buf, at, *values)

        def put(*values: int) -> None:
            for write, at, a, b in runs:
                write(buf, at, *values[a:b])

        return put

    def launch(self, func: Any, grid: tuple, block: tuple, stream: Any, shared: int = 0) -> None:
        """Queue ``func`` on ``stream`` with the arguments set so far."""
        direct = getattr(func, "_launch_kernel", None)
        if direct is not None:
            direct(grid, block, self._buf, shared, stream)
        else:
            args = self._fmt.unpack(self._buf)
            func.prepared_async_call(grid, block, stream, *args, shared_size=shared)

    @property
    def buffer(self) -> bytes:
        """The packed arguments as the next launch sends them."""
        return bytes(self._buf)
