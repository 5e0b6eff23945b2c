"""The PHAST loop (``kernels/sssp_phast.cu``): near-far's answer by one sweep of a contraction
hierarchy, one dependent step per level (``LaunchConfig(loop="phast")``).

At construction the solver builds the graph's hierarchy on the host (or reads the one an earlier
build of the same graph left in the cache: :func:`sssp.hierarchy.hierarchy_for`) and uploads it
by sweep position, below its core where it keeps a core table (``LaunchConfig.core``), and,
where they fit, every node's upward search (its label: :func:`sssp.hierarchy.upward_labels`).
A solve's seeds are then its source's label, read on the device; else the host runs the search
over the upward edges from the source per solve (a few hundred nodes on a road network,
compiled code; through the core table, if any) and sends the seeds. One persistent launch
sweeps the levels: the top ones in block 0 alone, their
distances in shared memory, the others by the whole grid with no barrier between them (a node
waits for its tails' distances to be published). The kernel leaves the keys as near-far does,
so the engine's predecessor pass and result pass follow unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import kernels

from ..cpu.parallel import INF
from ..hierarchy import Hierarchy, core_table, hierarchy_for, upward_labels
from .base import OwnerRef, PackedLaunch

if TYPE_CHECKING:
    from .engine import EngineSolver, _Lane


def device_table(dist: np.ndarray, val: np.dtype, inf: int) -> np.ndarray:
    """A core table's distances (:attr:`sssp.hierarchy.CoreTable.dist`: int32 or int64, -1 for
    no path) as the device reads them: flat, in the unsigned distance type ``val``, every bit
    set where there is no path or the distance reaches ``inf``. No int64 copy of the table is
    made (512 MiB at 8 192 nodes)."""
    none = (dist < 0) | (dist >= inf)
    table = dist.astype(val)  # the entries past infinity are overwritten next
    table[none] = np.iinfo(val).max
    return table.reshape(-1)


class PhastSweep:
    """The PHAST loop of one :class:`~sssp.gpu.engine.EngineSolver` (integer distances).

    Parameters
    ----------
    solver : EngineSolver
        Owns the graph, the keys and control words this loop writes, and the allocations; its
        module has the sweep kernel (``solver.funcs["sweep"]``).
    blocks_per_sm : callable
        ``blocks_per_sm(func, block, dynamic_smem)``: the resident blocks of a kernel (the
        engine's occupancy rule); the sweep runs at that grid (its waits need every block
        resident).
    hierarchy : Hierarchy, optional
        The graph's, where the caller has it (else :func:`sssp.hierarchy.hierarchy_for`).
    """

    solver: OwnerRef[EngineSolver] = OwnerRef()
    """The solver that owns this sweep (held weakly: :class:`~sssp.gpu.base.OwnerRef`)."""

    stage_edges = True
    """Whether block 0 copies the in-edges of its top levels into shared memory first (as many
    levels as fit beside their distances without lowering the sweep's occupancy), so that a top
    level reads no L2. Measured against reading them from L2 (runs 121-122, the ``+stage``
    points of ``benchmarks/bench_nearfar.py``, whose ``+unstaged`` labels now turn it off): 7-25 %
    faster a thread a node on the record's 7 meshes and COL, 2-4 % at 32 lanes a node (4elt 2 %
    slower)."""

    nap_ns = 256
    """The longest nap, in ns, of a thread between two polls of a tail not yet published (its
    naps double from 32 ns): a thread that waits for a level far above its own polls less
    often, so those polls leave the L2 to the levels being swept. Not measured yet."""

    early_launch = True
    """Whether a single solve launches the sweep before the host's upward search, the seeds
    then written into host memory mapped into the device, which block 0 reads once the host
    has stored the solve's generation (``seed_flag``, kernels/sssp_phast.cu): the launch's
    latency and block 0's staging then pass while the host searches, and no copy is queued.
    Many sources always copy (their sweeps queue one behind another). Measured on an H200 (run
    141, six meshes, without a core and with cores of 1 024 and 2 048 nodes, same call): less
    wall time on 14 of 18 points of ``bench_nearfar.py`` (cs4 0.441 -> 0.404 ms, COL 0.553 ->
    0.524, at a core of 2 048 cs4 0.313 -> 0.268, t60k 0.377 -> 0.292; 1.5-29 % more on four)
    and on 11 of 12 of ``phast_probe.py``'s (the search no longer before the launch)."""

    device_search = False
    """Whether, under a core table (``LaunchConfig.core``), block 0 of the sweep searches upward
    from the source itself (``source`` of ``kernels.PHAST_ARGS``) before its top levels: no
    search on the host, no seeds to copy or map, and a solve is a launch (many sources too). The
    search takes a block barrier per level of the source's climb to the core, and the core's
    distances one pass over the table rows of the core nodes it reached (all of them: the host
    skips those an earlier one reaches sooner). Without a core the host always searches (an
    H100, run 148: a climb through all of cs4's 110 levels on the device, 0.56 ms wall). Off:
    on H100s, with cores of 1 024 and 2 048 nodes, it gave less wall time than the early launch
    on all 12 points of ``bench_nearfar.py`` (six meshes; cs4 0.428 -> 0.332 ms, fe_body 0.373
    -> 0.312), where the host's caches are cold between solves, but more on 5 of 6 meshes of
    ``phast_probe.py`` (run 149, solves back to back: fe_body 147 -> 153 us, cs4 194 -> 208;
    4elt 125 -> 108), whose split puts the device's search at 24-84 us (about 3 us a level)
    against the host's 16-49. Its GPU test passed on H100s (runs 150-153). With the search off
    and :attr:`labels` on, no solve searches at all where the labels fit."""

    labels = True
    """Whether the solver keeps every position's upward search on the device (its label:
    :func:`sssp.hierarchy.upward_labels`, built at construction on the host's cores, where the
    labels hold at most :data:`sssp.hierarchy.LABEL_ITEMS_MAX` items): a solve then launches
    the sweep with its source's label as the seeds and the core's distances through the table
    (``nentries`` of ``kernels.PHAST_ARGS``), so neither the host nor the device searches, and
    no seed is written or copied (many sources too). Measured on an H100 (run 151,
    ``phast_probe.py``, five meshes and COL under a core of 1 024 nodes, solves back to back):
    less wall time than the host's search with the early launch on all six (fe_body 204 -> 138
    us, cs4 258 -> 154, cti 182 -> 123, 4elt 178 -> 97, t60k 181 -> 146, COL 300 -> 284); the
    label's read and the table merge take 1-5 us of the launch (``empty - bare``) where the host's
    search took 21-91 us. Where the labels do not fit (a road network of 436 000 nodes without a
    core) the host searches."""

    def __init__(
        self, solver: EngineSolver, blocks_per_sm: Any, hierarchy: Hierarchy | None = None
    ) -> None:
        self.solver = s = solver
        cuda = s.cuda
        if hierarchy is None:
            self.hierarchy, self.cached = hierarchy_for(s.graph)
        else:  # the caller's (read from the cache, or built in the background)
            self.hierarchy, self.cached = hierarchy, True
        h = self.hierarchy
        val = np.dtype(s.val_dtype)
        # The hierarchy's int64 weights and distances, capped at the distance type's infinity
        # (all of int64 for 64-bit distances): a weight past it can give no finite distance
        # and is stored as infinity (the kernel adds in 64 bits, so nothing wraps).
        self._inf = inf = min(int(np.iinfo(val).max), int(np.iinfo(np.int64).max))
        self._no_path = np.iinfo(val).max  # the kernel's infinity (every bit set)
        down_w = np.minimum(h.down_w, inf).astype(val)
        self._cuda = cuda  # for the per-solve path, not looked up through the weak owner
        func = s.funcs["sweep"]
        fa = cuda.function_attribute
        attr = cuda.device_attribute
        dev = cuda.Device(s.info.ordinal)
        static = func.get_attribute(fa.SHARED_SIZE_BYTES)
        room = dev.get_attribute(attr.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) - static
        width = val.itemsize
        # The core table (LaunchConfig.core): the core's distances (and its row offsets,
        # unused) take block 0's shared memory first, at most a quarter of it. Why it may pay:
        # the top of a hierarchy is a chain of small dense levels, each a block barrier of
        # 1.0-1.4 us on the H100 (run 127), and the upward search spends most of its time
        # there; at 1 024 nodes (4 MiB of table) cs4 keeps 21 of its 110 levels and cti 17 of
        # 92, their seeds found in 28 and 20 us on this project's 2-core host against 51 and
        # 37 without (benchmarks/results/cpu/phast_core_int32.csv). On an H100 (run 138) cs4's
        # sweep kernel fell from 181 to 87 us and its wall time 1.48x; the 2-D meshes gained
        # nothing (benchmarks/results/h200/README.md). The tuner measures it per class. Half
        # of the room: a core of 8 192 at 32 or 64 bits (64 or 96 KiB), which still leaves the
        # sweep's two blocks of 1 024 threads a multiprocessor where it stages nothing more;
        # against 4 096 it cut the sweep of every mesh of the record (H100, run 186).
        self.core = core_table(h, min(s.config.core, room // 2 // (width + 4)))
        k, nodes = self.core.levels, self.core.nodes
        first = int(h.down_ptr[nodes])  # the first in-edge below the core
        # The device's hierarchy starts below the core: level_ptr from the core's end (still
        # positions of the whole graph), the in-edges of positions below it with their offsets
        # counted from the first of them (a core position's offsets, below 0, are not read).
        lp, dp = h.level_ptr[k:], h.down_ptr - first
        self.d_order = s._upload(h.order)
        self.d_level_ptr = s._upload(lp.astype(np.int32))
        self.d_down_ptr = s._upload(dp)
        self.d_down_pos = s._upload(h.down_src[first:])
        self.d_down_w = s._upload(down_w[first:])
        # Distances as published (kernels/sssp_phast.cu, "pword"), and for 64-bit distances
        # their generations: every stamp starts at 0, a generation no solve has.
        self.d_pword = s._alloc(8 * h.n)
        self.d_pgen = s._alloc(4 * h.n) if val.itemsize == 8 else self.d_pword
        # One word past the seeds' marks: the generation whose seeds are out.
        self.d_seed_gen = s._alloc(4 * (h.n + 1))
        self._clear_stamps(cuda.memset_d8)
        self.d_seed_val = s._alloc(val.itemsize * h.n)
        self._val = val
        self._last = (1, 0)  # (buffer, count) of the last solve's seeds; (3, position): a label
        # The device's own upward search (device_search): the upward edges by tail position,
        # each position's level counted below the core, the search's distances (all ones
        # between solves) and lists.
        self.searching = self.device_search and nodes > 0
        if self.searching:
            self.d_up_ptr = s._upload(h.up_ptr)
            self.d_up_pos = s._upload(h.up_dst)
            self.d_up_w = s._upload(np.minimum(h.up_w, inf).astype(val))
            self.d_slevel = s._upload((h.sweep_level - k).astype(np.int32))
            self.d_sdist = s._alloc(8 * h.n)
            cuda.memset_d8(self.d_sdist, 0xFF, 8 * h.n)
            self.d_bag = s._alloc(4 * h.n)
        # Every position's upward search kept (labels), their distances capped at the
        # distance type's infinity as the host's seeds are (the kernel adds in 64 bits).
        self._labels = None
        if self.labels and not self.searching:
            self._labels = upward_labels(h, self.core)
        if self._labels is not None:
            self.d_label_pos = s._upload(self._labels.pos)
            self.d_label_d = s._upload(np.minimum(self._labels.dist, inf).astype(val))
        # The core table in the distance type (infinity: no path), for the device's search
        # and for the labels' entries.
        if nodes and (self.searching or self._labels is not None):
            self.d_table = s._upload(device_table(self.core.dist, val, inf))
        self.host_search = not self.searching and self._labels is None
        # Where the host searches, a solve's seeds go in one copy: their distances, then their
        # positions right after the last of them (the kernel gets both addresses), from one of
        # two page-locked buffers in turn. Many sources queue sweep after sweep without
        # waiting (the engine's chunks), so a buffer is written again only once its copy has
        # run (its event): the host searches for the next source while the device sweeps for
        # this one.
        if self.host_search:
            self.d_seeds = s._alloc((val.itemsize + 4) * h.n)
            self._h_seeds = [
                cuda.pagelocked_empty((val.itemsize + 4) * h.n, np.uint8) for _ in range(2)
            ]
            self._copied = [cuda.Event(), cuda.Event()]
            self._queued = [False, False]  # whether a buffer's copy was queued (its event)
            self._turn = 0  # the buffer of the next copy
        # A single solve's seeds written after its launch (early_launch), into host memory
        # mapped into the device: the distances, the positions, and two words (the generation
        # the host stores last, the count).
        self._mapped = self._flag = None
        if self.early_launch and s.plan.mapped and self.host_search:
            nbytes = (val.itemsize + 4) * h.n
            raw = cuda.pagelocked_empty(
                nbytes + 8, np.uint8, mem_flags=cuda.host_alloc_flags.DEVICEMAP
            )
            base = int(raw.base.get_device_pointer())
            self._mapped, self._flag = raw[:nbytes], raw[nbytes:].view(np.uint32)
            self._flag[:] = 0  # a generation no solve has
            self.d_mapped_d = base
            self.d_mapped_pos = base + val.itemsize * h.n
            self.d_flag = base + nbytes
        if self.host_search:
            self._dist = np.full(h.n, INF, dtype=np.int64)  # the upward search's, by position
            self._scratch = h.scratch(self.core)
        if self._mapped is not None:  # the search compiled (or read from the compile cache)
            h.upward(0, self._dist, self._scratch)  # now, not while a launch waits for seeds
        self.gen = 0
        block = kernels.PHAST_BLOCK
        limit = block if s.config.local_limit < 0 else s.config.local_limit
        # The search's counts: one a level below the core, one for the core.
        self.counters = h.levels - k + 1 if self.searching else 0
        # Beside the top levels' distances: the core's, one row offset (none staged) and the
        # search's counts.
        self.small = kernels.phast_top_levels(
            np.diff(lp), width, room - 4 * (1 + self.counters) - width * nodes, limit
        )
        # A label's core merged by the whole grid (no top level in block 0): no core distance
        # in shared memory (kernels/sssp_phast.cu, "labels").
        self.grid_core = self._labels is not None and nodes > 0 and self.small == 0
        func.set_attribute(fa.MAX_DYNAMIC_SHARED_SIZE_BYTES, room)
        # Every block asks for block 0's shared memory, and all must be resident at once (the
        # grid barrier): the most shared memory the multiprocessor can give, not a carveout the
        # driver might choose smaller than the occupancy rule assumed.
        func.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
        base = kernels.phast_smem_bytes(
            lp, dp, self.small, 0, width, self.counters, grid_core=self.grid_core
        )
        fits = max(1, blocks_per_sm(func, block, base))
        self.staged = 0
        if self.stage_edges:
            # Staged edges may take what the multiprocessor has left at the same occupancy
            # (the driver keeps 1 KiB a block).
            per_sm = dev.get_attribute(attr.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            budget = min(room, per_sm // fits - 1024 - static)
            self.staged = kernels.phast_staged_levels(
                lp, dp, self.small, width, budget, self.counters
            )
        self.smem = kernels.phast_smem_bytes(
            lp, dp, self.small, self.staged, width, self.counters, grid_core=self.grid_core
        )
        fits = max(1, blocks_per_sm(func, block, self.smem))
        self.grid = ((s.info.sm_count * fits, 1, 1), (block, 1, 1))
        # The sweep's arguments packed once; a launch writes the few that change
        # (:class:`~sssp.gpu.base.PackedLaunch`).
        spec = kernels.PHAST_KERNELS["sweep"]
        self._packed = PackedLaunch(spec.args, spec.arg_format)
        self._packed.set(
            order=self.d_order,
            level_ptr=self.d_level_ptr,
            down_ptr=self.d_down_ptr,
            down_pos=self.d_down_pos,
            down_w=self.d_down_w,
            pword=self.d_pword,
            pgen=self.d_pgen,
            seed_gen=self.d_seed_gen,
            seed_val=self.d_seed_val,
            levels=h.levels - k,
            small=self.small,
            staged=self.staged,
            width=s.config.relax.lanes,
            nap=self.nap_ns,
            source=-1,
        )
        if self.searching:
            self._packed.set(
                up_ptr=self.d_up_ptr,
                up_pos=self.d_up_pos,
                up_w=self.d_up_w,
                slevel=self.d_slevel,
                sdist=self.d_sdist,
                bag=self.d_bag,
                table=self.d_table,
                ncore=nodes,
                nlev=h.levels - k,
            )
        # What a launch writes: the lane's words where the lane changed, the seeds and the
        # generation every time, the rest where it changed (run 170: the sweep's launch was
        # 4.4 us of a solve's 14.6 us in run_phases on an H100's host, the rest Python).
        self._put_seeds = self._packed.writer("seed_pos", "seed_d", "nseeds", "gen")
        self._put_call = self._packed.writer("seed_flag", "source", "table", "ncore", "nentries")
        searched = (int(self.d_table), nodes) if self.searching else (0, 0)
        self._call: tuple[int, ...] = (0, -1, *searched, 0)  # as packed above
        self._packed_lane: Any = None
        self._table_ptr = int(self.d_table) if self._labels is not None and nodes else 0
        if self._labels is not None:
            self._label_at = (int(self.d_label_pos), int(self.d_label_d))
        self.seeds = 0
        """Seeds of the last solve below the core (nodes the upward search reached and did not
        stall), where the host searched (else the device counts them: :meth:`seeds_of`)."""

    def seeds_of(self, info: np.ndarray) -> int:
        """The seeds below the core of the solve whose summary words are ``info``
        (``kernels.RESULT_WORDS``)."""
        if self.searching:
            return int(info[kernels.RES_CTRL + kernels.CTRL_SEEDS])
        return self.seeds

    def _clear_stamps(self, memset: Any, *stream: Any) -> None:
        """Every generation stamp back to 0 (at the start, and when the number wraps):
        ``memset`` is ``memset_d8`` or ``memset_d8_async``."""
        n = self.hierarchy.n
        memset(self.d_seed_gen, 0, 4 * (n + 1), *stream)
        if self.d_pgen is self.d_pword:  # the stamp is each word's upper half
            memset(self.d_pword, 0, 8 * n, *stream)
        else:
            memset(self.d_pgen, 0, 4 * n, *stream)

    def stats(self) -> dict[str, Any]:
        """What every result's ``stats["phast"]`` shows (its own ``stats["upward_settled"]``: the
        seeds of its upward search)."""
        h = self.hierarchy
        return {
            "levels": h.levels,
            "top_levels": self.small,
            "staged_levels": self.staged,
            "core_levels": self.core.levels,
            "core_nodes": self.core.nodes,
            "device_search": self.searching,
            "labels": self._labels is not None,
            "label_items": 0 if self._labels is None else self._labels.items,
            "label_seconds": 0.0 if self._labels is None else self._labels.seconds,
            "hierarchy_edges": h.edges,
            "hierarchy_seconds": h.seconds,
            "hierarchy_cached": self.cached,
        }

    def sent_seeds(self) -> tuple[np.ndarray, np.ndarray]:
        """(positions, distances): the last solve's seeds as its copy sends them, views of the
        page-locked buffer."""
        (i, count), val = self._last, self._val
        if i == 3:  # a label: ``count`` is its position
            lab = self._labels
            assert lab is not None  # set only where labels are kept
            a, b = int(lab.ptr[count]), int(lab.ptr[count + 1])
            return lab.pos[a:b], np.minimum(lab.dist[a:b], self._inf).astype(val)
        if i == 2:  # the mapped buffer: the distances, then the positions at a fixed offset
            assert self._mapped is not None
            buf, at = self._mapped, val.itemsize * self.hierarchy.n
        else:
            buf, at = self._h_seeds[i], val.itemsize * count
        return buf[at : at + 4 * count].view(np.int32), buf[: val.itemsize * count].view(val)

    def run(self, lane: _Lane, source: int, *, alone: bool = False) -> None:
        """The sweep of the levels below the core queued, from ``source``'s label where the
        solver keeps them (:attr:`labels`), else from the upward search on the host (through
        the core table), its seeds sent. ``alone``: no other sweep is queued behind this one
        before the caller waits for it (a single solve), so with :attr:`early_launch` the
        sweep may be launched before the host's search."""
        cuda = self._cuda
        self.gen += 1
        if self.gen == 2**32:  # every stamp could be taken for this solve's: clear them
            self._clear_stamps(cuda.memset_d8_async, lane.stream)
            self.gen = 1
        if self.searching:  # the device searches: nothing to send
            self._launch(lane, 0, 0, 0, 0, int(self.hierarchy.position[source]))
            return
        lab = self._labels
        if lab is not None:  # the label on the device: nothing to search or send
            p = int(self.hierarchy.position[source])
            a, b = int(lab.ptr[p]), int(lab.ptr[p + 1])
            entries = int(lab.entries[p])
            self.seeds = b - a - entries
            self._last = (3, p)
            pos, d = self._label_at
            self._launch(lane, pos + 4 * a, d + self._val.itemsize * a, b - a, 0, entries=entries)
            return
        if alone and self._mapped is not None:
            self._launch(lane, self.d_mapped_pos, self.d_mapped_d, 0, self.d_flag)
            flag = self._flag
            assert flag is not None  # made with the mapped buffer
            try:
                flag[1] = self._write_seeds(source, 2)
            except BaseException:
                flag[1] = 0  # no seeds: the launch ends, the caller gets the error
                raise
            finally:
                flag[0] = self.gen  # last: the kernel waits for it, then reads the rest
            return
        i = self._turn
        self._turn = 1 - i
        if self._queued[i]:  # its last copy may still wait behind earlier sweeps
            self._copied[i].synchronize()
        count = self._write_seeds(source, i)
        at = self._val.itemsize * count  # the positions' offset in both buffers
        cuda.memcpy_htod_async(self.d_seeds, self._h_seeds[i][: at + 4 * count], lane.stream)
        self._copied[i].record(lane.stream)
        self._queued[i] = True
        self._launch(lane, int(self.d_seeds) + at, int(self.d_seeds), count, 0)

    def _write_seeds(self, source: int, buffer: int) -> int:
        """The upward search from ``source``, its seeds written into ``buffer`` (0, 1: the
        copies' page-locked buffers; 2: the mapped one); returns their count."""
        positions, dists = self.hierarchy.upward(source, self._dist, self._scratch)
        count = int(positions.size)
        self.seeds = count - self.core.nodes
        self._last = (buffer, count)
        seed_pos, seed_d = self.sent_seeds()
        seed_pos[:] = positions
        # A seed past the distance type's infinity is never the top of a shortest up-down path
        # (that one is a true distance): it is no seed.
        np.minimum(dists, self._inf, out=seed_d, casting="unsafe")
        k_nodes = self.core.nodes
        if k_nodes:  # a core node the source does not reach: the kernel's infinity, which for
            # 64-bit distances lies past int64's
            seed_d[:k_nodes][dists[:k_nodes] == INF] = self._no_path
        return count

    def _launch(
        self,
        lane: _Lane,
        seed_pos: int,
        seed_d: int,
        count: int,
        flag: int,
        source: int = -1,
        *,
        entries: int = 0,
    ) -> None:
        """The sweep queued on ``lane`` (addresses as ints): the seeds' arrays and count,
        ``seed_flag``, the device's search from position ``source``, or a label's ``entries``
        (its first seeds, core nodes, whose table rows give the core's distances)."""
        packed = self._packed
        if lane is not self._packed_lane:
            packed.set(key=lane.d_key, ctrl=lane.d_ctrl)
            self._packed_lane = lane
        self._put_seeds(seed_pos, seed_d, count, self.gen)
        call = self._call
        if self._labels is not None:  # the table with every label (a label of no entries
            # reaches no core node: the kernel then publishes the core as no path)
            table, ncore = self._table_ptr, self.core.nodes
        else:
            table, ncore = call[2], call[3]
        if (flag, source, table, ncore, entries) != call:
            self._call = call = (flag, source, table, ncore, entries)
            self._put_call(*call)
        grid, block = self.grid
        packed.launch(self.solver.funcs["sweep"], grid, block, lane.stream, self.smem)
