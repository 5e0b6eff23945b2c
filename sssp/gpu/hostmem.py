"""Page-locked host arrays that the device writes results into, reused once the user drops them.

A solve's distances and predecessors are written by the result pass straight into page-locked,
device-mapped host memory, and the arrays the user receives are views of that memory: no decode
and no copy on the host. Allocating page-locked memory costs far more than a solve of a small
graph, so the memory comes from a pool: the user's array holds a *lease* on one block, and when
the last view of it is gone (CPython frees it at once) the block goes back to the pool for the
next solve. The pool grows only through :meth:`HostArrays.reserve`, which a solver calls while
the device works on a solve long enough to hide the allocation, so that no allocation lies on the
path from the call to the result.

The lease is an ndarray subclass between the user's array and the block. NumPy collapses a chain
of views as long as each next base has the new view's own type, so the block itself is held as a
view of a second subclass: the collapse of a plain ndarray view stops at the lease (whose base is
not a plain ndarray), every view the user derives from a result array (slices, reshapes, dtype
views) keeps the lease alive, and the block is reused only when none is left.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, overload

import numpy as np


def _block_bytes(n: int, dtype: np.dtype | type) -> int:
    """Bytes of the block for ``n`` elements of ``dtype`` (the pool's key; at least 8)."""
    return max(int(n) * np.dtype(dtype).itemsize, 8)


class _Lease(np.ndarray):
    """One block's bytes, held for as long as a result array (or any view of it) lives."""


class _Block(np.ndarray):
    """A page-locked block as the pool keeps it (a view of another type than the user's arrays,
    so that NumPy's collapse of view chains cannot skip the lease)."""


class HostArrays:
    """A pool of page-locked host blocks for result arrays, per solver.

    Parameters
    ----------
    cuda : module
        ``pycuda.driver``, initialised, with the device's context current.
    mapped : bool
        Map the blocks into the device's address space (the result pass writes them directly);
        otherwise the caller copies into them from device memory.
    keep : int or None
        Free blocks kept per size; blocks returned beyond that are released (releasing
        page-locked memory waits for the device). None keeps every returned block until
        :meth:`close`: the callers' ``limit`` bounds how many there are.
    """

    def __init__(self, cuda: Any, *, mapped: bool = True, keep: int | None = 4) -> None:
        self.cuda = cuda
        self.mapped = mapped
        self.keep = keep
        self._free: dict[int, list[tuple[np.ndarray, int]]] = {}
        self._live: dict[int, int] = {}  # blocks of each size allocated and not released
        self._lock = threading.Lock()
        self._leases: dict[int, weakref.ref] = {}  # the weak references of the blocks in use
        self._closed = False
        self.allocations = 0
        """Blocks allocated so far (a test and benchmark aid: reuse keeps it flat)."""

    @overload
    def take(
        self, n: int, dtype: np.dtype | type, *, fill: int | None = None, limit: None = None
    ) -> tuple[np.ndarray, int]: ...

    @overload
    def take(
        self, n: int, dtype: np.dtype | type, *, fill: int | None = None, limit: int
    ) -> tuple[np.ndarray, int] | None: ...

    def take(
        self, n: int, dtype: np.dtype | type, *, fill: int | None = None, limit: int | None = None
    ) -> tuple[np.ndarray, int] | None:
        """A writable array of ``n`` elements of ``dtype`` and the device address of its first
        byte (0 when the pool is not mapped). ``fill``: set every byte first (a testing aid:
        an element the device fails to write then shows). ``limit``: None instead of a new
        block when no block of this size is free and ``limit`` of them are in use (results the
        caller still holds), so that holding many results does not pin ever more memory."""
        dtype = np.dtype(dtype)
        nbytes = _block_bytes(n, dtype)
        with self._lock:
            stack = self._free.get(nbytes)
            block = stack.pop() if stack else None
            if block is None and limit is not None and self._live.get(nbytes, 0) >= limit:
                return None
        if block is None:
            block = self._allocate(nbytes)
            with self._lock:
                self._live[nbytes] = self._live.get(nbytes, 0) + 1
        raw, ptr = block
        if fill is not None:
            raw.fill(fill)
        lease = raw.view(_Lease)
        # The block comes back when the lease dies: a weak reference's callback, the reference
        # kept until then (weakref.finalize does the same with an exit hook this pool needs
        # not, at twice the cost on a solve's way to its result pass).
        ref = weakref.ref(lease, self._returner(nbytes, block))
        self._leases[id(ref)] = ref
        return np.ndarray((int(n),), dtype, buffer=lease), ptr

    def _returner(
        self, nbytes: int, block: tuple[np.ndarray, int]
    ) -> Callable[[weakref.ref], None]:
        def back(ref: weakref.ref) -> None:
            self._leases.pop(id(ref), None)
            self._give_back(nbytes, block)

        return back

    def free_blocks(self, n: int, dtype: np.dtype | type) -> int:
        """Free blocks of ``n`` elements of ``dtype`` (what the next :meth:`take` calls find)."""
        nbytes = _block_bytes(n, dtype)
        with self._lock:
            return len(self._free.get(nbytes, ()))

    def reserve(self, n: int, dtype: np.dtype | type, *, limit: int, count: int = 1) -> bool:
        """Make sure the next ``count`` :meth:`take` calls of ``n`` elements of ``dtype`` find
        free blocks: allocate the missing ones now, in one page-locked allocation (a *slab*,
        one fixed cost for all of them), without passing ``limit`` blocks of this size. A solver
        calls this when it is made, and after queueing a solve and before waiting for it, so
        that the allocation (about 1 ms, and 0.5 ms a megabyte, on the H200's host) overlaps
        the device's work instead of delaying the next result. True when blocks were
        allocated."""
        nbytes = _block_bytes(n, dtype)
        with self._lock:
            if self._closed:
                return False
            missing = min(
                count - len(self._free.get(nbytes, ())), limit - self._live.get(nbytes, 0)
            )
            if missing <= 0:
                return False
            self._live[nbytes] = self._live.get(nbytes, 0) + missing
        blocks = self._allocate_slab(nbytes, missing)
        with self._lock:
            self._free.setdefault(nbytes, []).extend(blocks)
        return True

    def _allocate(self, nbytes: int) -> tuple[np.ndarray, int]:
        cuda = self.cuda
        if self.mapped:
            raw = cuda.pagelocked_empty(nbytes, np.uint8, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
            ptr = int(raw.base.get_device_pointer())
        else:
            raw, ptr = cuda.pagelocked_empty(nbytes, np.uint8), 0
        self.allocations += 1
        return raw.view(_Block), ptr

    SLAB_ALIGN = 512
    """Bytes between the starts of a slab's blocks are a multiple of this (whole cache lines and
    memory transactions for the device's writes)."""

    def _allocate_slab(self, nbytes: int, count: int) -> list[tuple[np.ndarray, int]]:
        """``count`` blocks of ``nbytes`` carved from one allocation: each a view of the slab
        (which lives as long as any of them), with its own device address."""
        if count == 1:
            return [self._allocate(nbytes)]
        stride = -(-nbytes // self.SLAB_ALIGN) * self.SLAB_ALIGN
        raw, ptr = self._allocate(stride * count)
        self.allocations += count - 1  # counted in blocks, as the single allocations are
        return [
            (raw[i * stride : i * stride + nbytes], ptr + i * stride if ptr else 0)
            for i in range(count)
        ]

    def _give_back(self, nbytes: int, block: tuple[np.ndarray, int]) -> None:
        with self._lock:
            if self._closed:
                return
            stack = self._free.setdefault(nbytes, [])
            if self.keep is None or len(stack) < self.keep:
                stack.append(block)
            else:
                self._live[nbytes] -= 1

    def close(self) -> None:
        """Release the free blocks; blocks still leased stay valid until their arrays go."""
        with self._lock:
            self._closed = True
            self._free.clear()
            self._live.clear()
