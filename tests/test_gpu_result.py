"""The result path on a real CUDA device (markers ``gpu`` and ``smoke``): the result pass writes
distances and predecessors straight into page-locked host arrays the result owns.

Every distance kind the engine keeps (packed 32-bit keys, 64-bit integers, float64), Crauser and
near-far, the persistent and the cluster loop, mapped host memory and the copying fallback; each
solve after poisoning the device state and the host arrays, every answer equal to SciPy's and
every tree checked edge by edge.
"""

from __future__ import annotations

import gc
import itertools
import sys

import numpy as np
import pytest

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu.reference import dijkstra
from sssp.spatial import grid_graph
from sssp.verify import check_against, check_tree

try:
    from tests.gpu_common import need_gpu  # noqa: F401  (autouse)
except ImportError:  # pragma: no cover
    from gpu_common import need_gpu  # noqa: F401

pytestmark = [pytest.mark.gpu, pytest.mark.smoke]


def _graph(kind: str, n: int = 3000, seed: int = 0) -> sssp.Graph:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, 8 * n)
    dst = rng.integers(0, n, 8 * n)
    if kind == "packed":
        w = rng.integers(0, 30, src.size)  # zero weights too: near-far's flat parents
    elif kind == "u64":
        w = rng.integers(1_000_000, 3_000_000_000, src.size)
    else:
        w = (rng.random(src.size) * 10).astype(np.float64)
    # A node without in-edges stays unreached from any other source.
    keep = dst != n - 1
    return sssp.Graph.from_edges(n, src[keep], dst[keep], w[keep])


CONFIGS = {
    "crauser": [LaunchConfig.default(), LaunchConfig(KernelConfig(256, "N", 4), loop="host")],
    "near-far": [LaunchConfig.default(), LaunchConfig(KernelConfig(1024, "N", 8), loop="cluster")],
}


@pytest.mark.parametrize("kind", ["packed", "u64", "f64"])
@pytest.mark.parametrize("algorithm", ["crauser", "near-far"])
@pytest.mark.parametrize("mapped", [True, False], ids=["mapped", "copied"])
def test_the_result_pass_matches_scipy(kind, algorithm, mapped):
    from sssp.gpu.engine import EngineSolver

    graph = _graph(kind)
    sources = [0, 17, graph.n - 1]  # the last has no in-edges: only itself is reached from others
    refs = {s: dijkstra(graph, s).dist for s in sources}
    for config in CONFIGS[algorithm]:
        with EngineSolver(graph, algorithm=algorithm, config=config, host_mapped=mapped) as solver:
            assert solver.mapped is mapped
            for s, want_tree in itertools.product(sources, (True, False)):
                solver.poison()
                res = solver.solve(s, return_predecessors=want_tree)
                check_against(refs[s], res)
                assert res.stats["reached"] == int(np.count_nonzero(res.reached))
                assert 0 < res.timings["gpu"] <= res.timings["wall"] == res.timings["total"]
                if want_tree:
                    check_tree(graph, res)
                else:
                    assert res.pred is None
                    with pytest.raises(sssp.InvalidArgumentError, match="return_predecessors"):
                        res.path_to(s)


def test_result_arrays_stay_valid_while_held_and_are_reused_once_dropped():
    graph = _graph("packed", n=5000, seed=3)
    refs = {s: dijkstra(graph, s).dist for s in (1, 2, 3)}
    with sssp.Solver(graph, backend="gpu", algorithm="near-far") as solver:
        held = solver.solve(1)
        part = held.dist[10:4000]  # a view: it alone must keep the block leased
        del held
        for s in (2, 3, 2, 3):
            check_against(refs[s], solver.solve(s))
        np.testing.assert_array_equal(part, refs[1][10:4000])
        del part
        gc.collect()
        pool = solver._gpu._host
        solver.solve(2)
        before = pool.allocations
        for _ in range(20):
            solver.solve(2)  # each result dropped at once: its blocks come back
        assert pool.allocations == before


def test_held_results_never_allocate_before_the_device_starts():
    """A caller holding every result: a solve takes a free block of the pool or the solver's
    spare (and copies out of it), so a solve itself never allocates page-locked memory before
    its result pass (where the device would wait for it); that happens at construction, for the
    spares too, or behind a solve whose device time hides it (``_grow_pool``)."""
    graph = _graph("packed", n=6000, seed=4)
    with sssp.Solver(graph, backend="gpu", algorithm="near-far") as solver:
        pool = solver._gpu._host
        taken = []
        original = pool._allocate

        def allocate(nbytes):  # record which path allocated: take() itself, or reserve()
            taken.append(sys._getframe(1).f_code.co_name)
            return original(nbytes)

        pool._allocate = allocate
        held = [solver.solve(s) for s in range(12)]
        assert "take" not in taken, taken  # the spares were made with the solver
        for s, r in enumerate(held):
            check_against(dijkstra(graph, s).dist, r)


def test_without_the_tree_less_reaches_the_host():
    """No tree pass and no predecessor array; the distances are the same."""
    graph = sssp.generate("random", size=20_000, degree=4, seed=5)
    with sssp.Solver(graph, backend="gpu", algorithm="near-far") as solver:
        a = solver.solve(7)
        b = solver.solve(7, return_predecessors=False)
    np.testing.assert_array_equal(a.dist, b.dist)
    assert a.pred is not None and b.pred is None


def test_the_documented_call_runs_the_tuned_pick():
    """``sssp.solve(g, s, tuned=True)`` is ``Solver(g, tuned=True).solve(s)``: the algorithm and
    configuration the tuner stored for the graph's class (a grid: near-far), not Crauser's."""
    from sssp.gpu import device_info
    from sssp.tuned import resolve_choice

    graph = grid_graph(256, seed=1)
    algorithm, _, config, source, _ = resolve_choice(graph, device_info(0))
    one_shot = sssp.solve(graph, 5, tuned=True)
    with sssp.Solver(graph, tuned=True) as solver:
        kept = solver.solve(5)
    assert one_shot.algorithm == kept.algorithm == algorithm
    assert one_shot.config == kept.config == config
    assert one_shot.config_source == kept.config_source == source
    np.testing.assert_array_equal(one_shot.dist, dijkstra(graph, 5).dist)


def test_many_held_results_stay_right_once_the_pool_stops_growing(monkeypatch):
    """Past ``held_results`` held results a solve returns a copy of the solver's own block: every
    held result keeps its own answer."""
    from sssp.gpu.engine import EngineSolver

    # HELD_RESULTS_MIN blocks a kind and the spare at construction (what a graph of more than
    # 1 MB a row gets), so that the copies start after four held results.
    monkeypatch.setattr(EngineSolver, "SLAB_BYTES", 0)
    graph = _graph("packed", n=4000, seed=9)
    sources = list(range(0, 40, 3))
    with sssp.Solver(graph, backend="gpu", algorithm="near-far") as solver:
        solver._gpu.held_results = 4  # the byte budget would allow thousands of this size
        held = [solver.solve(s) for s in sources]
        pool = solver._gpu._host
        assert (
            pool.allocations <= 2 * solver._gpu.held_results + 4
        )  # dist and pred blocks, the spares
    for s, r in zip(sources, held, strict=True):
        check_against(dijkstra(graph, s).dist, r)
        check_tree(graph, r)
