"""sssp asks configuration providers for tuned configurations (sssp.tuned.ConfigProvider); the
tuning database's is found through the package's entry point, never imported by sssp."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from importlib import metadata

import pytest

import sssp
import sssp.tuned as tuned
from sssp.classes import GraphClass
from sssp.config import ConfigSource, KernelConfig, LaunchConfig
from sssp.errors import InvalidTypeError
from sssp.gpu.device import DeviceInfo

pytestmark = pytest.mark.timeout(300)

H200 = DeviceInfo(0, "NVIDIA H200", "GPU-1234", (9, 0), 132, 143 << 30, "580", "13.0", "0:0:0.0")
GRAPH = sssp.generate("random", size=2000, degree=2, seed=0)
TUNED = LaunchConfig(KernelConfig(512, "A", 2), loop="persistent", blocks_per_sm=1)


class FakeProvider:
    """Answers every query with one choice and records what it was asked."""

    def __init__(self, choice: tuned.TunedChoice | None) -> None:
        self.choice = choice
        self.queries: list[tuned.TunedQuery] = []

    def lookup(self, query: tuned.TunedQuery) -> tuned.TunedChoice | None:
        self.queries.append(query)
        return self.choice

    def state(self, db: str | None) -> str:
        return f"fake:{db}"


def test_the_tuning_database_is_an_installed_provider():
    names = {ep.name: ep.value for ep in metadata.entry_points(group=tuned.ENTRY_POINT_GROUP)}
    assert names.get("tuning_db") == "tuning_db.provider:StoreProvider", (
        "the installed package lacks the entry point: run scripts/bootstrap.sh"
    )
    from tuning_db.provider import StoreProvider

    assert any(isinstance(p, StoreProvider) for p in tuned.providers())
    assert isinstance(StoreProvider(), tuned.ConfigProvider)


def test_a_source_tree_without_metadata_still_finds_the_store(monkeypatch):
    """From a source tree on PYTHONPATH (no installed metadata, as on a GPU host that runs the
    checkout) the group is empty: the distribution's own entry points, as pyproject.toml declares
    them, are loaded instead of silently solving with the default configuration."""
    import tomllib
    from pathlib import Path

    declared = tomllib.loads(Path(__file__).parents[1].joinpath("pyproject.toml").read_text())
    group = declared["project"]["entry-points"][tuned.ENTRY_POINT_GROUP]
    assert group == tuned.SOURCE_TREE_PROVIDERS
    monkeypatch.setattr(tuned.metadata, "entry_points", lambda **kw: [])
    monkeypatch.setattr(tuned, "_installed", None)
    from tuning_db.provider import StoreProvider

    assert any(isinstance(p, StoreProvider) for p in tuned.providers())


def test_importing_sssp_does_not_import_tuning_db():
    code = "import sys, sssp, sssp.tuned, sssp.solve; print('tuning_db' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_an_explicit_provider_answers_the_query():
    choice = tuned.TunedChoice(TUNED, ConfigSource.TUNED_NEAREST, "near-far", 4.0, "fake class")
    fake = FakeProvider(choice)
    algorithm, delta, config, source, detail = tuned.resolve_choice(
        GRAPH, H200, db="sqlite:///x", provider=fake
    )
    from sssp.cpu.nearfar import scaled_delta

    assert (algorithm, config, source) == ("near-far", TUNED, ConfigSource.TUNED_NEAREST)
    assert delta == scaled_delta(GRAPH, 4.0) and detail.startswith("fake class; near-far")
    # A second query, of the graph's size and degree at high diameter, comes only where the
    # hierarchy cache holds a hierarchy (sssp.tuned._fewer_levels): other tests may leave one.
    query, *more = fake.queries
    high = replace(GRAPH.graph_class(), diameter="highdiam")
    assert len(more) <= 1 and all(q.graph_class == high for q in more)
    assert query.graph_class == GRAPH.graph_class() and query.algorithm == "auto"
    assert (query.device_name, query.device_uuid, query.compute_capability) == (
        "NVIDIA H200",
        "GPU-1234",
        "9.0",
    )
    import kernels

    assert query.kernel_digest == kernels.digest(kernels.ENGINE_SOURCE_FILE)
    assert query.db == "sqlite:///x"


def test_a_registered_provider_is_asked_first_and_none_means_the_default(monkeypatch):
    monkeypatch.setattr(tuned, "_installed", [])  # not the user's own database
    none = FakeProvider(None)
    tuned.register_provider(none)
    try:
        config, source, detail = tuned.resolve_config(GRAPH, H200, algorithm="crauser")
        assert (config, source) == (LaunchConfig.default(), ConfigSource.DEFAULT)
        assert "no tuned configuration stored" in detail and none.queries
        assert tuned.state("sqlite:///y")[0] == "fake:sqlite:///y"
        answer = tuned.TunedChoice(TUNED, ConfigSource.TUNED_EXACT, "crauser")
        first = FakeProvider(answer)
        tuned.register_provider(first)
        try:
            assert tuned.resolve_config(GRAPH, H200, algorithm="crauser")[:2] == (
                TUNED,
                ConfigSource.TUNED_EXACT,
            )
        finally:
            tuned.unregister_provider(first)
    finally:
        tuned.unregister_provider(none)
    assert none not in tuned.providers()


def test_register_refuses_what_is_not_a_provider():
    with pytest.raises(InvalidTypeError, match="must implement sssp.tuned.ConfigProvider"):
        tuned.register_provider(object())  # type: ignore[arg-type]


def test_the_store_provider_answers_from_the_database(tmp_path):
    """The tuning database's provider: the record of the graph's class, with what it runs."""
    import dataclasses

    from tuning_db import DeviceRecord, Store
    from tuning_db.provider import StoreProvider

    gc = GRAPH.graph_class()
    device = DeviceRecord("NVIDIA H200", "GPU-1234", "9.0", 132, "580", "13.0")
    rec = engine_record(device, gc, TUNED, "near-far", delta_scale=8.0)
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        store.put_best(rec)
    provider = StoreProvider()
    query = tuned.TunedQuery(
        gc, "NVIDIA H200", "GPU-1234", "9.0", rec.kernel_version.digest, "auto", "successors", url
    )
    choice = provider.lookup(query)
    assert choice is not None
    assert (choice.config, choice.source, choice.algorithm, choice.delta_scale) == (
        TUNED,
        ConfigSource.TUNED_EXACT,
        "near-far",
        8.0,
    )
    assert "carried" not in choice.detail
    assert provider.lookup(dataclasses.replace(query, kernel_digest="other")) is None
    assert provider.lookup(dataclasses.replace(query, algorithm="crauser")) is None
    far = dataclasses.replace(query, graph_class=GraphClass("98k", "deg200"))
    assert provider.lookup(far).source is ConfigSource.TUNED_NEAREST
    assert provider.state(url) is not None

    # A record carried to these kernels without re-measuring says so.
    from tuning_db.records import MEASURED_ON

    carried = dataclasses.replace(
        rec, options={**rec.options, MEASURED_ON: "0123456789abcdef"}, updated_at=later(rec)
    )
    with Store(url, seed=False) as store:
        store.put_best(carried)
    detail = provider.lookup(query).detail
    assert "measured on kernels 0123456789abcdef, carried" in detail


def engine_record(device, graph_class, config, algorithm, delta_scale=1.0):
    """A ``tune engine --algorithm auto`` record of engine 2's current kernels on ``device``
    (``delta_scale`` only where ``algorithm`` is near-far)."""
    import kernels
    from tuning_db import BestRecord, KernelVersionRecord

    return BestRecord(
        device=device,
        kernel_version=KernelVersionRecord(kernels.digest(kernels.ENGINE_SOURCE_FILE)),
        graph_class=graph_class,
        algorithm="auto",
        variant="successors",
        config=config,
        tuned_config=config,
        tuned_median_ms=1.0,
        default_median_ms=2.0,
        speedup=2.0,
        n_sources=3,
        kept_default=False,
        options=config.options(),
        chosen_algorithm=algorithm,
        delta_scale=delta_scale if algorithm == "near-far" else None,
    )


def later(rec):
    import datetime as dt

    return rec.updated_at + dt.timedelta(seconds=1)


def test_a_board_of_the_same_chip_answers_for_a_diameter_class_the_model_lacks(tmp_path):
    """An H100 whose records are all of road networks and meshes (high diameter) solves a random
    graph on the H200's low-diameter record: one chip (compute capability, SM count), a class of
    the graph's kind; its own model's record of that kind wins wherever there is one, and a board
    of another chip or an unknown SM count is never asked."""
    import dataclasses

    import kernels
    from tuning_db import DeviceRecord, Store
    from tuning_db.provider import StoreProvider

    h100 = DeviceRecord("NVIDIA H100 80GB HBM3", "GPU-h100", "9.0", 132, "580", "13.0")
    h200 = DeviceRecord("NVIDIA H200", "GPU-h200", "9.0", 132, "580", "13.0")
    pcie = DeviceRecord("NVIDIA H100 PCIe", "GPU-pcie", "9.0", 114, "580", "13.0")
    crauser = LaunchConfig(KernelConfig(1024, "A", 2), loop="persistent", blocks_per_sm=1)
    phast = LaunchConfig(KernelConfig(256, "A", 2), loop="phast", core=8192)
    pcie_config = LaunchConfig(KernelConfig(128, "A", 2), loop="persistent", blocks_per_sm=2)

    road = GraphClass("24k", "deg2", "highdiam")
    dense = GraphClass("49k", "deg1000")
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    with Store(url, seed=False) as store:
        store.put_best(engine_record(h100, road, phast, "near-far"))
        store.put_best(engine_record(h200, dense, crauser, "crauser"))
        store.put_best(engine_record(h200, road, crauser, "crauser"))
        store.put_best(engine_record(pcie, GraphClass("24k", "deg1000"), pcie_config, "crauser"))
    provider = StoreProvider()
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    query = tuned.TunedQuery(
        GraphClass("24k", "deg1000"), h100.name, h100.uuid, "9.0", digest, "auto", "successors",
        url, 132,
    )  # fmt: skip
    choice = provider.lookup(query)
    assert choice is not None
    assert (choice.config, choice.algorithm, choice.graph_class) == (crauser, "crauser", dense)
    assert choice.source is ConfigSource.TUNED_NEAREST
    assert "of NVIDIA H200 (the same compute capability and SM count" in choice.detail
    assert "no NVIDIA H100 80GB HBM3 record is of the lowdiam class" in choice.detail
    # The graph's own class on the sibling is still not this model's: nearest, not exact.
    exact = provider.lookup(dataclasses.replace(query, graph_class=dense))
    assert exact.graph_class == dense and exact.source is ConfigSource.TUNED_NEAREST
    # Of the graph's diameter class, the model's own record wins over the sibling's exact one.
    own = provider.lookup(dataclasses.replace(query, graph_class=road))
    assert (own.config, own.source) == (phast, ConfigSource.TUNED_EXACT)
    assert "NVIDIA H200" not in own.detail
    # No SM count (a provider's caller that does not know it): the model's records only.
    blind = provider.lookup(dataclasses.replace(query, sm_count=None))
    assert (blind.config, blind.graph_class) == (phast, road)
    # Another chip (the PCIe board's 114 SMs) is never a sibling, whatever its classes.
    other = provider.lookup(
        dataclasses.replace(query, device_name=pcie.name, device_uuid="GPU-x", sm_count=114)
    )
    assert (other.config, other.source) == (pcie_config, ConfigSource.TUNED_EXACT)
    unknown = dataclasses.replace(query, device_name="NVIDIA H800 PCIe", sm_count=114)
    assert provider.lookup(unknown).config == pcie_config
    assert provider.lookup(dataclasses.replace(unknown, sm_count=100)) is None


@pytest.mark.parametrize("model", ["NVIDIA H200", "NVIDIA H100 80GB HBM3"])
def test_on_the_shipped_records_every_class_takes_a_record_of_its_own_diameter(tmp_path, model):
    """The shipped files with the look-up, as a new default database holds them: on either board
    every paper class (low diameter) and every high-diameter class gets a tuned record of its
    own diameter class (run 199: an H100 whose records were all of high diameter ran random
    graphs of degree 200-2 000 on a road record's fallback, 4-20x slower)."""
    import kernels
    from sssp.classes import high_diameter_classes, paper_classes
    from tuning_db import Store
    from tuning_db.provider import StoreProvider

    url = f"sqlite:///{tmp_path / 'shipped.sqlite'}"
    Store(url, seed=True).close()
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    provider = StoreProvider()
    for gc in paper_classes() + high_diameter_classes():
        query = tuned.TunedQuery(gc, model, "GPU-x", "9.0", digest, "auto", "successors", url, 132)
        choice = provider.lookup(query)
        assert choice is not None, (model, str(gc))
        assert choice.graph_class.diameter == gc.diameter, (model, str(gc), choice.detail)
