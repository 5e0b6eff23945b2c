"""GPU solver against SciPy and the CPU versions, on a real CUDA device (marker ``gpu``).

Every solve poisons the device outputs first, so an element the kernels fail to write shows up
as a wrong distance or predecessor. Distances must equal SciPy's exactly; predecessor trees and
iteration counts must equal the CPU version's (same settled_at rule), and the tree is checked on
its own (each node's distance recomputed from its predecessor's).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu import solve_cpu
from sssp.cpu.reference import dijkstra
from sssp.verify import check_against, check_tree

try:
    from tests.strategies import graph_and_source
except ImportError:  # pragma: no cover
    from strategies import graph_and_source

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module", autouse=True)
def _need_gpu():
    from sssp.gpu import is_available

    if not is_available():
        pytest.skip("no usable CUDA device (pycuda missing or no GPU)")


ALGOS = list(itertools.product(("crauser", "martin"), ("successors", "predecessors")))
BLOCKS = (32, 96, 256, 1024)
L1S = ("N", "A", "S")
LANES = (1, 8, 32)


def configs_for(key: int, count: int) -> list[LaunchConfig]:
    """``count`` configurations cycling through block size x L1 x lanes, offset by ``key``, so
    the whole cross product is covered across the graphs of a test."""
    space = list(itertools.product(BLOCKS, L1S, LANES))
    out = []
    for j in range(count):
        bs, l1, lanes = space[(key * count + j) % len(space)]
        other = space[(key * count + j + 7) % len(space)]
        out.append(LaunchConfig(KernelConfig(bs, l1, lanes), KernelConfig(other[0], other[1]),
                                KernelConfig(bs, other[1])))
    return out


def run_and_check(graph: sssp.Graph, sources, algorithm, variant, config, *, ref_cache=None):
    from sssp.gpu import GPUSolver

    with GPUSolver(graph, algorithm=algorithm, variant=variant, config=config) as solver:
        for s in sources:
            solver.poison()
            res = solver.solve(int(s))
            ref = ref_cache[s] if ref_cache is not None and s in ref_cache else dijkstra(graph, int(s)).dist
            if ref_cache is not None:
                ref_cache[s] = ref
            check_against(ref, res)
            check_tree(graph, res)
            key = (algorithm, variant, int(s))
            if ref_cache is not None and key in ref_cache:
                cpu = ref_cache[key]
            else:
                cpu = solve_cpu(graph, int(s), algorithm=algorithm, variant=variant)
                if ref_cache is not None:
                    ref_cache[key] = cpu
            assert res.iterations == cpu.iterations, (algorithm, variant, config, s)
            np.testing.assert_array_equal(res.pred, cpu.pred)
            assert 0.0 < res.stats["relax_active_share"] <= 1.0


PAPER_GRAPHS = {
    # name: (kind, size, degree)
    "random-2k-deg2": ("random", 2048, 2),
    "random-3k-deg20": ("random", 3072, 20),
    "random-3k-deg200": ("random", 3072, 200),
    "random-2k-deg1000": ("random", 2048, 1000),
    "random-98k-deg20": ("random", "98k", 20),
    "martin-1M": ("martin", "1M", None),
    "kronecker-s14": ("kronecker", 2**14, None),
}


@pytest.mark.parametrize("name", list(PAPER_GRAPHS))
def test_paper_graphs(name):
    index = list(PAPER_GRAPHS).index(name)
    kind, size, degree = PAPER_GRAPHS[name]
    extra = {} if degree is None else {"degree": degree}
    graph = sssp.generate(kind, size=size, seed=index + 1, **extra)
    rng = np.random.default_rng(index)
    sources = rng.integers(0, graph.n, size=2)
    refs: dict = {}
    big = graph.m > 5_000_000
    for algo_i, (algorithm, variant) in enumerate(ALGOS):
        count = 1 if big else 3
        for config in [LaunchConfig.default(), *configs_for(index * 4 + algo_i, count)]:
            run_and_check(graph, sources[:1] if big else sources, algorithm, variant, config, ref_cache=refs)


def test_full_cross_product_small_graph():
    """Every block size x L1 state x lanes on every kernel position, on one graph."""
    graph = sssp.generate("random", size=1500, degree=20, seed=11)
    refs: dict = {}
    for bs, l1, lanes in itertools.product(BLOCKS, L1S, LANES):
        kc = KernelConfig(bs, l1, lanes)
        cfg = LaunchConfig(kc, KernelConfig(bs, l1), KernelConfig(bs, l1))
        for algorithm, variant in ALGOS:
            run_and_check(graph, [0, 777], algorithm, variant, cfg, ref_cache=refs)


def shared_graph_files() -> list[Path]:
    root = Path(os.environ.get("SSSP_GRAPHS_DIR", Path(__file__).resolve().parents[2] / "shared" / "graphs"))
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name not in ("README.md", "SOURCES.tsv"))
    assert files, f"no graphs found under {root}"
    return files


@pytest.mark.parametrize("path", shared_graph_files(), ids=lambda p: p.name)
def test_real_graphs(path):
    graph = sssp.load(path)
    key = sum(path.name.encode())
    sources = np.random.default_rng(key).integers(0, graph.n, size=2)
    refs: dict = {}
    for algo_i, (algorithm, variant) in enumerate(ALGOS):
        for config in configs_for(key + algo_i, 1):
            run_and_check(graph, sources, algorithm, variant, config, ref_cache=refs)


def test_64bit_distances():
    """(n + 1) * max_weight overflows 32 bits: the runtime must switch to 64-bit distances, and
    to 64-bit weights when a weight does not fit in 32 bits."""
    rng = np.random.default_rng(3)
    n = 3000
    src = rng.integers(0, n, 20_000)
    dst = rng.integers(0, n, 20_000)
    w = rng.integers(1_000_000, 3_000_000_000, 20_000)
    g32w = sssp.Graph.from_edges(n, src, dst, w)
    w64 = w.copy()
    w64[::7] = 6_000_000_000
    g64w = sssp.Graph.from_edges(n, src, dst, w64)
    for graph, bits in ((g32w, 32), (g64w, 64)):
        from sssp.gpu import GPUSolver

        with GPUSolver(graph) as solver:
            assert solver.params.dist_bits == 64 and solver.params.weight_bits == bits
        run_and_check(graph, [0, 5], "crauser", "successors", LaunchConfig.default())
        run_and_check(graph, [1], "martin", "predecessors", configs_for(bits, 1)[0])
        res = sssp.solve(graph, 0, backend="gpu")
        assert res.dist.max() > 2**32 - 1 or res.dist[res.reached].max() > 2**32 - 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_and_source())
def test_hypothesis_graphs(gs):
    graph, source = gs
    for k, (algorithm, variant) in enumerate(ALGOS):
        run_and_check(graph, [source], algorithm, variant, configs_for(graph.n + k, 1)[0])


def test_source_without_out_edges():
    graph = sssp.Graph.from_edges(4, np.array([0, 1]), np.array([1, 2]), np.array([3, 4]))
    res = sssp.solve(graph, 3, backend="gpu")
    assert res.dist[3] == 0 and np.all(res.dist[:3] == sssp.UNREACHABLE)
    assert res.iterations == 0 and np.all(res.pred == -1)


def test_solve_front_door_reports_config():
    graph = sssp.generate("random", size=2048, degree=20, seed=9)
    res = sssp.solve(graph, 0, backend="gpu", profile=True)
    assert res.backend == "gpu" and res.config == LaunchConfig.default()
    assert res.config_source == sssp.ConfigSource.DEFAULT
    assert {"relax", "min", "update", "tree", "total"} <= set(res.timings)
    explicit = LaunchConfig.uniform(128, "A")
    res = sssp.solve(graph, 0, backend="gpu", config=explicit)
    assert res.config == explicit and res.config_source == sssp.ConfigSource.EXPLICIT
    assert "PREFER_L1" in res.stats["l1_applied"]["relax"]
