"""The pool of result arrays (sssp.gpu.hostmem) without a GPU: a stand-in for pycuda's
page-locked allocations, so the lease rules are checked where CI runs."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from sssp.gpu.hostmem import HostArrays


class _Allocation:
    """Like pycuda's page-locked allocation: a plain ndarray (``np.asarray``) is made over it, so
    that array's ``.base`` is this object, which names the block's device address."""

    def __init__(self, nbytes: int) -> None:
        self._memory = np.empty(nbytes, np.uint8)
        self.__array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "version": 3,
            "data": (self._memory.ctypes.data, False),
        }

    def get_device_pointer(self) -> int:
        return self._memory.ctypes.data


class _FakeCuda:
    class host_alloc_flags:  # noqa: N801 (pycuda's name)
        DEVICEMAP = 2

    def __init__(self) -> None:
        self.flags: list[int] = []

    def pagelocked_empty(self, nbytes, dtype, mem_flags=0):
        self.flags.append(mem_flags)
        assert np.dtype(dtype) == np.uint8
        return np.asarray(_Allocation(nbytes))


@pytest.fixture
def pool():
    return HostArrays(_FakeCuda(), mapped=True, keep=2)


def test_a_dropped_result_array_returns_its_block(pool):
    a, ptr = pool.take(1000, np.int64)
    assert a.shape == (1000,) and a.dtype == np.int64 and a.flags.writeable
    assert ptr == a.ctypes.data  # the device writes where the array reads
    assert len(pool._leases) == 1
    del a  # CPython frees it at once: no collection needed for the block to come back
    assert pool.free_blocks(1000, np.int64) == 1 and not pool._leases
    b, ptr2 = pool.take(1000, np.int64)
    assert ptr2 == ptr and pool.allocations == 1
    del b
    gc.collect()
    assert pool.free_blocks(1000, np.int64) == 1 and not pool._leases


def test_a_view_of_a_result_keeps_its_block_leased(pool):
    a, ptr = pool.take(1000, np.int64)
    a[:] = np.arange(1000)
    part = a[10:20].reshape(2, 5)
    as_bytes = part.view(np.uint8)
    del a, part
    gc.collect()
    b, ptr2 = pool.take(1000, np.int64)  # the first block is still in use: a new one
    assert ptr2 != ptr and pool.allocations == 2
    b[:] = -1
    np.testing.assert_array_equal(as_bytes.view(np.int64).ravel(), np.arange(10, 20))
    del as_bytes
    gc.collect()
    c, ptr3 = pool.take(1000, np.int64)
    assert ptr3 == ptr and pool.allocations == 2


def test_blocks_are_kept_per_size_and_at_most_keep(pool):
    arrays = [pool.take(100, np.int32)[0] for _ in range(4)]
    del arrays
    gc.collect()
    assert pool.allocations == 4
    again = [pool.take(100, np.int32)[0] for _ in range(4)]  # two kept, two new
    assert pool.allocations == 6
    other = pool.take(101, np.int32)[0]  # another size: never a block of the wrong size
    assert other.nbytes == 404 and pool.allocations == 7
    del again, other


def test_fill_poisons_a_reused_block(pool):
    a, _ = pool.take(64, np.int64)
    a[:] = 7
    del a
    gc.collect()
    b, _ = pool.take(64, np.int64, fill=0xA5)
    assert (b.view(np.uint8) == 0xA5).all()


def test_unmapped_pool_gives_no_device_address():
    cuda = _FakeCuda()
    pool = HostArrays(cuda, mapped=False)
    a, ptr = pool.take(10, np.float64)
    assert ptr == 0 and cuda.flags == [0]


def test_a_closed_pool_keeps_leased_arrays_valid(pool):
    a, _ = pool.take(10, np.int64)
    a[:] = 3
    pool.close()
    assert (a == 3).all()
    del a
    gc.collect()
    assert pool._free == {}


def test_a_limit_refuses_new_blocks_while_results_are_held(pool):
    held = [pool.take(50, np.int64, limit=2) for _ in range(2)]
    assert all(h is not None for h in held) and pool.allocations == 2
    assert pool.take(50, np.int64, limit=2) is None  # both held: the caller copies instead
    assert pool.take(60, np.int64, limit=2) is not None  # another size has its own count
    held.pop()
    gc.collect()
    again = pool.take(50, np.int64, limit=2)  # the dropped block comes back
    assert again is not None and pool.allocations == 3
    del held, again
    gc.collect()
    for _ in range(5):  # blocks returned beyond `keep` are released and no longer count
        blocks = [pool.take(70, np.int64) for _ in range(4)]
        del blocks
        gc.collect()
    assert pool.take(70, np.int64, limit=2) is not None


def test_reserve_allocates_the_next_block_ahead_within_the_limit(pool):
    first = pool.take(40, np.int64, limit=3)
    assert pool.free_blocks(40, np.int64) == 0
    assert pool.reserve(40, np.int64, limit=3) and pool.allocations == 2
    assert pool.free_blocks(40, np.int64) == 1 and pool.free_blocks(40, np.int32) == 0
    assert not pool.reserve(40, np.int64, limit=3)  # one is free already
    second = pool.take(40, np.int64, limit=3)  # the reserved block: nothing allocated here
    assert pool.allocations == 2
    assert pool.reserve(40, np.int64, limit=3) and pool.allocations == 3
    third = pool.take(40, np.int64, limit=3)
    assert not pool.reserve(40, np.int64, limit=3)  # three held: the limit
    assert pool.take(40, np.int64, limit=3) is None and pool.allocations == 3
    del first, second, third
    gc.collect()
    pool.close()
    assert not pool.reserve(40, np.int64, limit=3)  # a closed pool allocates nothing


def test_a_slab_reserves_many_blocks_in_one_allocation():
    """reserve(count=...) carves the blocks from one page-locked allocation: each its own
    aligned device address and bytes, none overlapping, the slab alive while any is leased."""
    cuda = _FakeCuda()
    pool = HostArrays(cuda, mapped=True, keep=None)
    assert pool.reserve(1001, np.int32, limit=8, count=5)
    assert len(cuda.flags) == 1 and pool.allocations == 5  # one allocation, five blocks
    assert not pool.reserve(1001, np.int32, limit=8, count=5)  # five are free already
    got = [pool.take(1001, np.int32, limit=8) for _ in range(5)]
    assert len(cuda.flags) == 1
    ptrs = [ptr for _, ptr in got]
    assert len(set(ptrs)) == 5 and all((p - ptrs[0]) % HostArrays.SLAB_ALIGN == 0 for p in ptrs)
    for i, (a, ptr) in enumerate(got):
        assert a.ctypes.data == ptr and a.shape == (1001,) and a.dtype == np.int32
        a[...] = i
    for i, (a, _) in enumerate(got):
        assert (a == i).all()  # no block wrote into another
    # Within the limit: three more at most, in a second slab; then none.
    assert pool.reserve(1001, np.int32, limit=8, count=5) and len(cuda.flags) == 2
    more = [pool.take(1001, np.int32, limit=8) for _ in range(3)]
    assert all(m is not None for m in more) and pool.take(1001, np.int32, limit=8) is None
    keep = got[2][0]
    del got, more, a
    gc.collect()
    pool.close()
    assert (keep == 2).all()  # a leased block of a closed pool stays valid


def test_an_unbounded_pool_keeps_every_returned_block():
    pool = HostArrays(_FakeCuda(), mapped=True, keep=None)
    arrays = [pool.take(30, np.int32)[0] for _ in range(6)]
    del arrays
    gc.collect()
    again = [pool.take(30, np.int32)[0] for _ in range(6)]
    assert pool.allocations == 6
    del again


def test_batched_rows_reuse_any_kept_staging_that_holds_the_chunk():
    """EngineSolver._stages (no GPU needed for the rule): a kept staging of the same dtype and
    tree flag with enough rows is reused; otherwise new ones of the rounded size are made."""
    from types import SimpleNamespace

    from sssp.gpu.engine import EngineSolver

    made = []
    fake = SimpleNamespace(_stage_cache={}, _stats=None)
    fake._stage = lambda rows, dtype, want_pred: made.append(rows) or {"rows": rows}
    take = EngineSolver._stages
    first = take(fake, 64, 43, np.int64, False, 3)
    assert [s["rows"] for s in first] == [64, 64, 64] and made == [64, 64, 64]
    again = take(fake, 32, 30, np.int64, False, 2)  # fits in the kept 64-row stagings
    assert again == first[:2] and made == [64, 64, 64]
    bigger = take(fake, 128, 100, np.int64, False, 1)
    assert bigger[0]["rows"] == 128 and made[-1] == 128
    other = take(fake, 64, 43, np.int32, False, 1)  # another dtype: its own
    tree = take(fake, 64, 43, np.int64, True, 1)  # with predecessors: its own
    assert other[0] is not first[0] and tree[0] is not first[0] and made[-2:] == [64, 64]
