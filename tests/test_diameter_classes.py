"""The diameter class as the third key of a graph class: the class itself, the high-diameter
generators behind its instances, its storage and its look-up (no GPU)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sssp
from sssp.classes import DIAMETER_PENALTY, GraphClass, high_diameter_classes, size_label
from sssp.config import KernelConfig, LaunchConfig
from sssp.errors import UnknownClassError
from sssp.gpu.device import DeviceInfo
from tuner import class_search, engine_space
from tuning_db import Store
from tuning_db.records import DeviceRecord

H200 = DeviceRecord("NVIDIA H200", "GPU-1234", "9.0", 132, "580.159.04", "13.0")
INFO = DeviceInfo(
    0, "NVIDIA H200", "GPU-1234", (9, 0), 132, 143 << 30, "580", "13.0", "0000:00:00.0"
)


def test_class_key_text_and_distance():
    low, high = GraphClass("98k", "deg2"), GraphClass("98k", "deg2", "highdiam")
    assert str(low) == "98k/deg2" and str(high) == "98k/deg2/highdiam"
    assert (
        GraphClass.from_text("98k/deg2/highdiam") == high
        and GraphClass.from_text("98k/deg2") == low
    )
    assert low != high and low.distance(high) == DIAMETER_PENALTY
    # any class of the same diameter is nearer than the same size and degree of the other one
    assert GraphClass("24k", "deg2", "highdiam").distance(high) < low.distance(high)
    with pytest.raises(UnknownClassError, match="diameter class 'wide'"):
        GraphClass("98k", "deg2", "wide")
    with pytest.raises(UnknownClassError, match="SIZE/DEGREE"):
        GraphClass.from_text("98k")
    assert {str(c) for c in high_diameter_classes()} >= {"24k/deg2/highdiam", "393k/deg20/highdiam"}


def test_graph_class_carries_the_estimate_for_sparse_graphs_only():
    grid = sssp.generate("grid", size=10_000, seed=0)
    assert grid.graph_class() == GraphClass("12k", "deg2", "highdiam")
    rnd = sssp.generate("random", size=10_000, degree=4, seed=0)
    assert rnd.graph_class().diameter == "lowdiam"
    dense = sssp.generate("random", size=3072, degree=300, seed=0)
    assert dense.graph_class() == GraphClass("3k", "deg200")
    assert dense._diameter is None  # no search on dense classes


def test_grid_and_geometric_generators():
    g = sssp.generate("grid", size="24k", seed=3)
    side = g.meta["side"]
    assert side == round(24_576**0.5) and g.n == side * side and g.m == 4 * side * (side - 1)
    assert set(np.unique(g.weights)) <= set(range(1, 101))
    assert sssp.generate("grid", size="24k", seed=3) == g
    h = sssp.generate("geometric", size=20_000, degree=12, seed=1)
    assert 10.5 < h.m / h.n < 12.1 and h.graph_class().diameter == "highdiam"
    src, dst, w = h.edges()
    fwd = dict(zip(zip(src.tolist(), dst.tolist(), strict=True), w.tolist(), strict=True))
    assert all(fwd[(v, u)] == x for (u, v), x in list(fwd.items())[:2000])  # one weight per edge
    with pytest.raises(sssp.InvalidGraphError, match="takes no degree"):
        sssp.generate("grid", size=100, degree=4)
    with pytest.raises(sssp.InvalidGraphError, match="needs size"):
        sssp.generate("geometric")
    with pytest.raises(sssp.InvalidGraphError, match="degree must be"):
        sssp.generate("geometric", size=100, degree=-1)


def test_road_generator_is_a_connected_planar_like_road_network():
    """``road``: connected (a spanning tree inside), mean degree 2.6, mostly degree 2-3, one
    weight per undirected edge growing with its length, high diameter, seeded."""
    from scipy.sparse.csgraph import connected_components

    g = sssp.generate("road", size=20_000, seed=2)
    assert g.n == 20_000 and g.m == 2 * round(2.6 * 20_000 / 2)
    assert connected_components(g.to_scipy(), directed=False)[0] == 1
    deg = np.bincount(g.out_degree())
    assert deg[0] == 0 and (deg[2] + deg[3]) / g.n > 0.6 and deg.size <= 12
    assert g.weights.min() >= 1 and g.weights.max() == 100
    src, dst, w = g.edges()
    fwd = dict(zip(zip(src.tolist(), dst.tolist(), strict=True), w.tolist(), strict=True))
    assert all(fwd[(v, u)] == x for (u, v), x in fwd.items())  # both directions, one weight
    assert g.graph_class() == GraphClass("24k", "deg2", "highdiam")
    assert g.meta["kind"] == "road" and "length" in g.meta["weights"]
    assert sssp.generate("road", size=20_000, seed=2) == g
    assert sssp.generate("road", size=20_000, seed=3) != g
    # a denser one keeps the tree and adds short edges
    h = sssp.generate("road", size=5000, degree=4, seed=1)
    assert h.m == 2 * 10_000 and connected_components(h.to_scipy())[0] == 1
    for bad in (1.5, 6, float("nan")):
        with pytest.raises(
            sssp.InvalidGraphError, match=r"mean degree must be a number in \[2, 5\]"
        ):
            sssp.generate("road", size=1000, degree=bad)
    with pytest.raises(sssp.InvalidGraphError, match="at least 4 nodes"):
        sssp.generate("road", size=3)
    with pytest.raises(sssp.InvalidGraphError, match="weight_range"):
        sssp.generate("road", size=100, weight_range=(5, 1))


def test_road_weight_range_is_scaled_and_every_node_reached():
    from sssp.spatial import road_graph

    g = road_graph(4000, seed=5, weight_range=(10, 1000))
    assert g.weights.min() >= 10 and g.weights.max() == 1000
    dist = sssp.solve(g, 0, backend="cpu").dist
    assert (dist > 0).sum() == g.n - 1


def test_high_diameter_class_instances():
    from tuner.workload import class_instance

    g, what = class_instance(GraphClass("24k", "deg2", "highdiam"))
    assert what.startswith("road") and g.graph_class() == GraphClass("24k", "deg2", "highdiam")
    g, what = class_instance(GraphClass("24k", "deg20", "highdiam"))
    assert what.startswith("geometric") and g.graph_class() == GraphClass(
        "24k", "deg20", "highdiam"
    )
    with pytest.raises(UnknownClassError, match="deg2 and deg20"):
        class_instance(GraphClass("24k", "deg200", "highdiam"))


def test_deg2_high_diameter_classes_are_searched_on_a_road_and_a_grid():
    """Roads and 2-D meshes share the deg2 high-diameter classes: the search scores both a
    road-like network and a grid of the class's size; every other class has its one instance."""
    from tuner.workload import class_instances, instance_label

    gc = GraphClass("24k", "deg2", "highdiam")
    parts = class_instances(gc, seed=3)
    assert [label.split()[0] for _, label in parts] == ["road", "grid"]
    assert all(g.graph_class() == gc for g, _ in parts)
    grid = parts[1][0]
    assert abs(grid.n - gc.nodes) / gc.nodes < 0.01 and grid.m / grid.n > 3.9
    assert instance_label(parts) == f"{parts[0][1]} + {parts[1][1]}"
    assert instance_label(class_instances(gc, seed=3)) == instance_label(parts)  # seeded
    for one in (GraphClass("24k", "deg20", "highdiam"), GraphClass("24k", "deg2")):
        ((g, label),) = class_instances(one, seed=3)
        assert g.graph_class() == one and instance_label([(g, label)]) == label


def _record(gc: GraphClass, algorithm_pick: str, loop: str = "persistent"):
    cfg = LaunchConfig(KernelConfig(512, "N", 4), loop=loop, blocks_per_sm=1, local_limit=2048)
    point = {
        **engine_space.from_config(cfg),
        "algorithm": algorithm_pick,
        "delta_scale": 16.0 if algorithm_pick == "near-far" else 1,
    }
    result = class_search.SearchResult(
        graph_class=gc,
        algorithm="auto",
        variant="successors",
        best_point=point,
        best_ms=1.0,
        default_ms=5.0,
        spread=0.0,
        n_sources=5,
    )
    return class_search.to_best(result, H200)


def test_stored_and_looked_up_by_diameter(tmp_path):
    """A high-diameter graph takes the high-diameter record even when a low-diameter record of
    its exact size and degree exists; without high-diameter records it takes the nearest
    low-diameter one."""
    from sssp.tuned import resolve_choice

    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    grid = sssp.generate("grid", size="98k", seed=0)
    with Store(url, seed=False) as store:
        store.put_best(_record(GraphClass("98k", "deg2"), "crauser"))
    algorithm, _, _, source, detail = resolve_choice(grid, INFO, db=url)
    assert (algorithm, source.value) == ("crauser", "tuned-nearest") and "98k/deg2" in detail
    with Store(url, seed=False) as store:
        store.put_best(_record(GraphClass("24k", "deg2", "highdiam"), "near-far"))
        assert {b.graph_class for b in store.all_best()} == {
            GraphClass("98k", "deg2"),
            GraphClass("24k", "deg2", "highdiam"),
        }
    algorithm, delta, _, source, detail = resolve_choice(grid, INFO, db=url)
    assert algorithm == "near-far" and delta is not None and "24k/deg2/highdiam" in detail
    rnd = sssp.generate("random", size="98k", degree=2, seed=0)
    assert resolve_choice(rnd, INFO, db=url)[0] == "crauser"


def test_export_keeps_the_diameter_and_reads_old_documents(tmp_path):
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        store.put_best(_record(GraphClass("49k", "deg20", "highdiam"), "near-far"))
        store.put_best(_record(GraphClass("49k", "deg20"), "crauser"))
        store.export_json(tmp_path / "out.json")
    doc = json.loads((tmp_path / "out.json").read_text())
    classes = sorted(json.dumps(b["graph_class"], sort_keys=True) for b in doc["best"])
    assert classes == [
        '{"degree": "deg20", "diameter": "highdiam", "size": "49k"}',
        '{"degree": "deg20", "size": "49k"}',
    ]  # low-diameter documents as before
    with Store("sqlite://", seed=False) as fresh:
        fresh.import_json(tmp_path / "out.json")
        assert {b.graph_class for b in fresh.all_best()} == {
            GraphClass("49k", "deg20", "highdiam"),
            GraphClass("49k", "deg20"),
        }


def test_tune_engine_diameter_options(capsys):
    from tuner.cli import _classes, build_parser

    args = build_parser().parse_args(["engine", "--all", "--high-diameter"])
    classes = _classes(args)
    assert len(classes) == 12 + len(high_diameter_classes())
    args = build_parser().parse_args(
        ["engine", "--graph-class", "deg2", "--size", "196k", "--diameter", "highdiam"]
    )
    assert _classes(args) == [GraphClass("196k", "deg2", "highdiam")]
    args = build_parser().parse_args(
        ["engine", "--graph-class", "deg200", "--size", "98k", "--diameter", "highdiam"]
    )
    with pytest.raises(SystemExit):
        _classes(args)
    assert "--diameter highdiam goes with deg2 or deg20" in capsys.readouterr().err


def test_fusion_gate_runs_fused_only_where_the_bands_keep_the_edges_local():
    """A configuration that asks for the fused cluster loop runs it only where the band order
    keeps at least FUSE_MIN_LOCALITY of the edges inside one block (CPU only: the gate is
    decided before any kernel runs); a grid passes, a random graph of the same size does not,
    and the reason names the share and the block count."""
    from sssp.bands import FUSE_MIN_LOCALITY, band_locality, fusion_gate

    grid = sssp.generate("grid", size="24k", seed=1)
    fused, why = fusion_gate(grid, 8)
    assert fused and band_locality(grid, 8) >= FUSE_MIN_LOCALITY
    assert why.startswith(f"band locality {band_locality(grid, 8):.3f} at 8 blocks")
    rand = sssp.generate("random", size="24k", degree=2, seed=1)
    fused, why = fusion_gate(rand, 8)
    assert not fused and band_locality(rand, 8) < 0.5 and why.endswith(": ran unfused")
    empty = sssp.Graph(indptr=[0, 0, 0], indices=[], weights=[])
    assert fusion_gate(empty, 4) == (
        False,
        f"band locality undefined (no edges) at 4 blocks < {FUSE_MIN_LOCALITY}: ran unfused",
    )


def test_large_classes_reach_gap_scale():
    from sssp.classes import large_classes
    from tuner import cli

    large = large_classes()
    assert (
        GraphClass("3145k", "deg20") in large and GraphClass("3145k", "deg2", "highdiam") in large
    )
    assert len(set(large)) == len(large)
    assert not set(large) & set(high_diameter_classes())  # no class twice with --high-diameter
    # GAP's scale-22 graphs (2**22 nodes, degree 16) look up the largest low-diameter class
    kron = sssp.generate("kronecker", scale=12, edge_factor=16, seed=1)  # degree 16
    assert kron.graph_class().degree == "deg20"
    gap = GraphClass(size_label(2**22), "deg20")
    assert min(large, key=gap.distance) == GraphClass("3145k", "deg20")
    args = cli.build_parser().parse_args(["engine", "--all", "--high-diameter", "--large"])
    classes = cli._classes(args)
    assert len(classes) == 12 + len(high_diameter_classes()) + len(large)
    args = cli.build_parser().parse_args(["engine", "--all"])
    assert len(cli._classes(args)) == 12
