"""Which launch configuration ``solve(..., tuned=True)`` runs, asked of a configuration provider.

``sssp`` stores no tuning results itself: a *configuration provider* (:class:`ConfigProvider`)
answers a :class:`TunedQuery` (the graph's class, the device, engine 2's kernel digest, the
algorithm and variant) with a :class:`TunedChoice`, or None. The ``tuning_db`` package
implements one over the tuning database (:class:`tuning_db.provider.StoreProvider`); ``sssp``
finds it without importing it, through the entry-point group :data:`ENTRY_POINT_GROUP`
(declared in ``pyproject.toml``, read with :mod:`importlib.metadata`), so the layers point down:
``tuning_db`` imports ``sssp``, never the other way. :func:`register_provider` puts a provider
first (tests, an application's own store).

The database provider's answer, for the device's model (records of the same GPU UUID first,
then any board with the same name and compute capability), engine 2's exact kernel sources,
algorithm and variant:

1. the graph's own class (``tuned-exact``);
2. the nearest stored class in (log2 size, log10 degree) distance of the graph's diameter class
   (``tuned-nearest``); where the model has no record of that diameter class, one of a board of
   the same chip (compute capability and SM count: an H100 SXM's query takes an H200's
   record), before one of the other diameter class;
3. nothing: the default configuration, 256 threads and L1 normal on the persistent loop
   (``default``).

``algorithm="auto"`` (``solve(tuned=True)`` without an algorithm) asks for the records of
``tune engine --algorithm auto``, whose answer also names the algorithm the search chose for the
class (Crauser OUT, IN+OUT or near-far, with near-far's Δ as a multiple of its default rule):
:func:`resolve_choice`. Without an answer it runs Crauser OUT.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Hashable
from dataclasses import dataclass, replace
from importlib import metadata
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from .classes import GraphClass
from .config import ConfigSource, LaunchConfig
from .errors import InvalidArgumentError
from .graph import Graph

if TYPE_CHECKING:
    from pathlib import Path

    from .gpu.device import DeviceInfo

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "sssp.config_providers"
"""The entry-point group a package declares its :class:`ConfigProvider` in (an object, or a
class or factory that takes no arguments)."""
SOURCE_TREE_PROVIDERS = {"tuning_db": "tuning_db.provider:StoreProvider"}
"""This distribution's own entry points of :data:`ENTRY_POINT_GROUP` (as ``pyproject.toml``
declares them; a test checks they agree), used when the group has none installed: a source tree
on ``PYTHONPATH`` has no distribution metadata, and ``tuned=True`` must not fall back to the
default configuration there without saying so."""


@dataclass(frozen=True)
class TunedQuery:
    """What a solve asks a configuration provider.

    Attributes
    ----------
    graph_class : GraphClass
        The graph's class (:meth:`sssp.Graph.graph_class`).
    device_name, device_uuid, compute_capability : str
        The GPU (``compute_capability`` as ``"9.0"``).
    kernel_digest : str
        The digest of engine 2's kernel sources (:func:`kernels.digest`): a configuration tuned
        for other sources does not apply.
    algorithm : str
        ``"auto"`` (the provider's pick of algorithm too) or the algorithm that will run.
    variant : str
    db : str or None
        The database the caller named (``Solver(db=...)``), None for the provider's default.
    sm_count : int or None
        The GPU's multiprocessor count: with the compute capability it names the chip, whose
        other boards' records may stand in for classes the model lacks (None: unknown).
    """

    graph_class: GraphClass
    device_name: str
    device_uuid: str
    compute_capability: str
    kernel_digest: str
    algorithm: str
    variant: str
    db: str | None = None
    sm_count: int | None = None


@dataclass(frozen=True)
class TunedFallback:
    """What a tuned pick that needs a preprocessing step runs until that step is done: the best
    point of the same search without it (the phast loop needs the graph's contraction
    hierarchy, :mod:`sssp.hierarchy`; seconds to build on a road network of millions of nodes).

    Attributes
    ----------
    config : LaunchConfig
    algorithm : str
    delta_scale : float or None
        Near-far's Δ as a multiple of its default rule; None for the other algorithms.
    wall_ms : float or None
        Its median wall time in the search, beside the pick's (None where not stored).
    """

    config: LaunchConfig
    algorithm: str
    delta_scale: float | None = None
    wall_ms: float | None = None


@dataclass(frozen=True)
class TunedChoice:
    """A provider's answer.

    Attributes
    ----------
    config : LaunchConfig
        What to run.
    source : ConfigSource
        ``TUNED_EXACT`` (the graph's own class) or ``TUNED_NEAREST``.
    algorithm : str
        The algorithm that runs with it (for an ``"auto"`` query the provider's pick).
    delta_scale : float or None
        Near-far's Δ as a multiple of its default rule (:func:`sssp.cpu.nearfar.scaled_delta`);
        None for the other algorithms.
    detail : str
        Why, for ``Solver.config_detail`` (e.g. ``"class 49k/deg200 -> stored class ..."``).
    graph_class : GraphClass or None
        The class the answer was tuned for (a nearest answer's is not the graph's).
    fallback : TunedFallback or None
        For a pick on the phast loop: what runs while the graph's hierarchy is not built
        (:func:`resolve_pick`).
    """

    config: LaunchConfig
    source: ConfigSource
    algorithm: str
    delta_scale: float | None = None
    detail: str = ""
    graph_class: GraphClass | None = None
    fallback: TunedFallback | None = None

    def __post_init__(self) -> None:
        assert self.source in (ConfigSource.TUNED_EXACT, ConfigSource.TUNED_NEAREST), self.source


@runtime_checkable
class ConfigProvider(Protocol):
    """Where tuned configurations come from (``tuning_db`` implements it)."""

    def lookup(self, query: TunedQuery) -> TunedChoice | None:
        """The tuned choice for ``query``, or None when nothing applies. Never raises for an
        unusable store: it warns and answers None, so the solve runs the default."""
        ...

    def state(self, db: str | None) -> Hashable | None:
        """A fingerprint of the store behind ``db``: equal fingerprints mean no answer changed
        in between (the one-shot ``solve`` keeps its tuned solvers on it); None when there is
        no cheap one."""
        ...

    # Optional: ``unavailable(db) -> str | None``, why the last lookup could not use the store
    # behind ``db`` (None when it could); a result's configuration detail then says so instead
    # of "no tuned configuration stored".


_registered: list[ConfigProvider] = []
_installed: list[ConfigProvider] | None = None
_lock = threading.Lock()


def register_provider(provider: ConfigProvider) -> None:
    """Ask ``provider`` before the installed ones (a test's or an application's own)."""
    if not isinstance(provider, ConfigProvider):
        from .errors import InvalidTypeError

        raise InvalidTypeError(
            f"provider must implement sssp.tuned.ConfigProvider (lookup, state), got "
            f"{type(provider).__name__}"
        )
    with _lock:
        _registered.insert(0, provider)


def unregister_provider(provider: ConfigProvider) -> None:
    """Undo :func:`register_provider` (nothing when it is not registered)."""
    with _lock:
        if provider in _registered:
            _registered.remove(provider)


def providers() -> list[ConfigProvider]:
    """The registered providers, then the installed ones (entry points of
    :data:`ENTRY_POINT_GROUP`, by name; loaded once per process)."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = _load_installed()
        return [*_registered, *_installed]


def _load_installed() -> list[ConfigProvider]:
    found = []
    eps = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    if not eps:
        log.info(
            "no %s entry points installed (a source tree?): this distribution's own (%s)",
            ENTRY_POINT_GROUP,
            ", ".join(SOURCE_TREE_PROVIDERS.values()),
        )
        eps = [
            metadata.EntryPoint(name, value, ENTRY_POINT_GROUP)
            for name, value in SOURCE_TREE_PROVIDERS.items()
        ]
    for ep in sorted(eps, key=lambda e: e.name):
        try:
            obj = ep.load()
            provider = (
                obj() if isinstance(obj, type) or not isinstance(obj, ConfigProvider) else obj
            )
        except Exception as err:  # a broken plug-in must not break solving: default config
            log.warning(
                "configuration provider %s (%s) cannot be loaded: %s", ep.name, ep.value, err
            )
            continue
        if not isinstance(provider, ConfigProvider):
            log.warning("configuration provider %s (%s) has no lookup/state", ep.name, ep.value)
            continue
        found.append(provider)
    if not found:
        log.info("no configuration provider is installed (group %s)", ENTRY_POINT_GROUP)
    return found


def state(db: str | None) -> tuple | None:
    """The providers' fingerprints of ``db`` together, or None when one has none."""
    parts = []
    for provider in providers():
        part = provider.state(db)
        if part is None:
            return None
        parts.append(part)
    return tuple(parts)


def _ask(query: TunedQuery, provider: ConfigProvider | None) -> TunedChoice | None:
    for p in [provider] if provider is not None else providers():
        answer = p.lookup(query)
        if answer is not None:
            return answer
    return None


def _unavailable(db: str | None, provider: ConfigProvider | None) -> str | None:
    """The first reason a provider gives for not having used the store behind ``db``."""
    for p in [provider] if provider is not None else providers():
        why = getattr(p, "unavailable", None)
        reason = why(db) if callable(why) else None
        if reason:
            return str(reason)
    return None


def resolve_choice(
    graph: Graph,
    device: DeviceInfo,
    *,
    algorithm: str = "auto",
    variant: str = "successors",
    db: str | None = None,
    provider: ConfigProvider | None = None,
    hierarchy: str = "cached",
) -> tuple[str, float | None, LaunchConfig, ConfigSource, str]:
    """(algorithm, near-far's Δ or None, configuration, where it came from, detail) for
    ``graph`` on ``device`` from the records of ``algorithm`` (``"auto"``: the records name
    the algorithm; Crauser OUT with the default configuration when there is none; another
    algorithm keeps itself, with the default configuration where nothing is stored).
    ``provider``: ask this one only (default: every provider of :func:`providers`, first
    answer wins). ``hierarchy``: when a pick on the phast loop runs (:data:`HIERARCHY_CHOICES`;
    here ``"auto"`` reads as ``"cached"``: nothing is built in the background for a caller
    that cannot switch later, :func:`resolve_pick`)."""
    return resolve_pick(
        graph,
        device,
        algorithm=algorithm,
        variant=variant,
        db=db,
        provider=provider,
        hierarchy=hierarchy,
    ).now.as_tuple()


HIERARCHY_CHOICES = ("auto", "build", "cached", "never")
"""When a tuned pick on the phast loop runs (``Solver(hierarchy=...)``); its contraction
hierarchy takes seconds to build on a road network of millions of nodes (once per graph and
machine: :func:`sssp.hierarchy.hierarchy_for` keeps it), while the solves it speeds up take
milliseconds:

- ``"auto"``: at once where the graph's hierarchy is in the cache; else the pick's fallback
  (:class:`TunedFallback`) runs and a background process builds the hierarchy into the cache
  (:class:`sssp.hierarchy.BackgroundBuild`); the solver takes the phast loop at its first solve
  after that;
- ``"build"``: the hierarchy is read or built when the solver is made;
- ``"cached"``: only where the hierarchy is in the cache, else the fallback;
- ``"never"``: the fallback."""


def check_hierarchy(rule: str) -> None:
    """Refuse a ``hierarchy`` rule outside :data:`HIERARCHY_CHOICES` in one line."""
    if rule not in HIERARCHY_CHOICES:
        raise InvalidArgumentError(
            f"hierarchy must be one of {', '.join(map(repr, HIERARCHY_CHOICES))}, got {rule!r}"
        )


@dataclass(frozen=True)
class Pick:
    """One configuration a tuned solver runs: :func:`resolve_choice`'s tuple, and the graph's
    hierarchy where it was read for a phast pick."""

    algorithm: str
    delta: float | None
    config: LaunchConfig
    source: ConfigSource
    detail: str
    hierarchy: Any = None

    def as_tuple(self) -> tuple[str, float | None, LaunchConfig, ConfigSource, str]:
        return self.algorithm, self.delta, self.config, self.source, self.detail


@dataclass(frozen=True)
class Resolved:
    """What a tuned solver runs now and, where that is a phast pick's fallback while its
    hierarchy is built in the background, the pick (``waiting``) and the cache file it waits
    for (``cache``)."""

    now: Pick
    waiting: Pick | None = None
    cache: Path | None = None


def resolve_pick(
    graph: Graph,
    device: DeviceInfo,
    *,
    algorithm: str = "auto",
    variant: str = "successors",
    db: str | None = None,
    provider: ConfigProvider | None = None,
    hierarchy: str = "cached",
) -> Resolved:
    """The pick of ``algorithm``'s records (``"auto"``: the records name the algorithm) for
    ``graph`` on ``device`` under the ``hierarchy`` rule (:data:`HIERARCHY_CHOICES`), with
    near-far's Δ from the record's scale. Only a pick on the phast loop looks at the cache
    (hashing the graph's arrays, :func:`sssp.hierarchy.cache_path`); such a pick from a record
    of the other diameter class (the nearest stored one) runs its fallback, except on a
    low-diameter graph whose cached hierarchy sweeps fewer levels than near-far takes steps
    (:func:`_fewer_levels`; the same test puts a low-diameter graph whose own record picks
    near-far on a high-diameter record's phast pick). With no record, ``"auto"`` runs Crauser
    OUT and another algorithm itself, on the default configuration."""
    check_hierarchy(hierarchy)
    choice, config, source, detail = _lookup(graph, device, algorithm, variant, db, provider)
    default = "crauser" if algorithm == "auto" else algorithm
    pick = _pick(graph, choice, config, source, detail, default)
    if choice is None:
        return Resolved(pick)
    mine = graph.graph_class().diameter
    if pick.config.loop != "phast":
        if mine != "lowdiam" or hierarchy == "never" or pick.algorithm != "near-far":
            return Resolved(pick)
        if not _cache_holds_any():  # the usual case: no second lookup, nothing hashed
            return Resolved(pick)
        highdiam = replace(graph.graph_class(), diameter="highdiam")
        other, other_config, other_source, other_detail = _lookup(
            graph, device, algorithm, variant, db, provider, highdiam
        )
        if other is None or other_config.loop != "phast":
            return Resolved(pick)
        phast = _pick(graph, other, other_config, other_source, other_detail, default)
        return Resolved(_fewer_levels(graph, pick, phast))
    if choice.graph_class is not None and choice.graph_class.diameter != mine:
        # A nearest record of the other diameter class: its pick's gain (few levels against
        # many near-far steps) is that class's, not this graph's.
        why = OTHER_DIAMETER.format(mine)
        now = _fallback(graph, choice, source, detail + why, default)
        return Resolved(now if hierarchy == "never" else _fewer_levels(graph, now, pick))
    if hierarchy == "build":
        return Resolved(pick)
    from .hierarchy import cache_path, read_cached

    path = None if hierarchy == "never" else cache_path(graph)
    found = read_cached(graph, path)
    if found is not None:
        return Resolved(replace(pick, hierarchy=found, detail=pick.detail + HIERARCHY_READ))
    if hierarchy == "never":
        why = "not used (hierarchy='never')"
    elif path is None:
        why = "not kept on this machine (no cache folder; hierarchy='build' builds it)"
    elif hierarchy == "cached":
        why = "not in the cache (hierarchy='cached' builds none)"
    else:
        why = "not in the cache yet: a background process builds it, used once there"
    now = _fallback(graph, choice, source, detail + f"; the pick is the phast loop, whose "
                    f"contraction hierarchy of this graph is {why}", default)  # fmt: skip
    waiting = pick if hierarchy == "auto" and path is not None else None
    return Resolved(now, waiting, path if waiting is not None else None)


LOW_STEP_SOURCES = 3
"""Sources of the CPU near-far solves that count a low-diameter graph's steps (:func:`_fewer_levels`)."""


def _cache_holds_any() -> bool:
    """Whether the hierarchy cache folder holds any hierarchy at all (a listing, no hashing)."""
    from .hierarchy import cache_dir

    folder = cache_dir()
    return folder is not None and folder.is_dir() and next(folder.glob("*.npz"), None) is not None


def _fewer_levels(graph: Graph, nearfar: Pick, phast: Pick) -> Pick:
    """For a low-diameter graph: ``phast`` (a high-diameter record's pick on the phast loop)
    where the graph's hierarchy is in the cache and its sweep goes through fewer levels below the
    pick's core than ``nearfar`` (the graph's near-far pick) takes steps, else ``nearfar``.

    Few meshes and stiffness matrices have a low hop diameter and yet a hierarchy of few levels
    below a core table: wing_nodal sweeps 6 levels under a core of 4 096 nodes where near-far takes
    about 50 steps (``benchmarks/results/cpu/hierarchy_levels_lowdiam.csv``); a social graph's
    hierarchy is too costly to build on the off chance, so only a hierarchy already in the cache
    (``sssp hierarchy FILE``, or an earlier phast solve) is looked at, and nothing is hashed where
    the cache holds no hierarchy at all. Near-far's steps are counted by the CPU's near-far
    (:func:`sssp.cpu.nearfar.near_far`) at the pick's Δ from :data:`LOW_STEP_SOURCES` seeded
    sources, the median; the levels are counted on the hierarchy."""
    if nearfar.algorithm != "near-far" or nearfar.delta is None or not _cache_holds_any():
        return nearfar
    from .hierarchy import cache_path, read_cached

    found = read_cached(graph, cache_path(graph))
    if found is None:
        return nearfar
    from .cpu.nearfar import near_far

    below = found.levels_below(phast.config.core)
    starts = np.flatnonzero(np.diff(graph.indptr))
    if starts.size == 0:
        return nearfar
    rng = np.random.default_rng(0)
    picked = rng.choice(starts, size=min(LOW_STEP_SOURCES, starts.size), replace=False)
    steps = int(
        np.median([near_far(graph, int(s), delta=nearfar.delta).iterations for s in picked])
    )
    counts = (
        f"; its cached hierarchy sweeps {below} levels below a core of {phast.config.core} "
        f"nodes, near-far takes {steps} steps (CPU, median of {picked.size} sources)"
    )
    if below >= steps:
        return replace(nearfar, detail=nearfar.detail + counts + ": near-far runs")
    why = "; a low-diameter graph on a high-diameter record's phast pick" + counts
    return replace(phast, hierarchy=found, detail=phast.detail + why + HIERARCHY_READ)


HIERARCHY_READ = "; the graph's contraction hierarchy read from the cache"
OTHER_DIAMETER = (
    "; the pick is the phast loop, tuned for another diameter class than this graph's ({})"
)


def _pick(
    graph: Graph,
    choice: TunedChoice | None,
    config: LaunchConfig,
    source: ConfigSource,
    detail: str,
    default: str = "crauser",
) -> Pick:
    """A provider's answer (or none: ``default``, on the default configuration) as what runs,
    Δ resolved."""
    algorithm = choice.algorithm if choice is not None else default
    delta = None
    if algorithm == "near-far":
        from .cpu.nearfar import scaled_delta

        scale = 1.0 if choice is None or choice.delta_scale is None else choice.delta_scale
        if wide_beyond(graph, choice, source):
            config, scale = replace(config, loop="wide", shortcuts=0, core=0), WIDE_DELTA_SCALE
            detail += WIDE_DETAIL
        delta = scaled_delta(graph, scale)
        detail += f"; near-far, delta {delta} ({scale:g} x the default rule)"
    elif choice is not None:
        detail += f"; {algorithm}"
    return Pick(algorithm, delta, config, source, detail)


def _fallback(
    graph: Graph, choice: TunedChoice, source: ConfigSource, detail: str, default: str
) -> Pick:
    """What runs instead of ``choice``'s phast pick: its stored fallback, or (records without
    one) the default configuration with ``default``'s algorithm (Crauser OUT for ``"auto"``)."""
    fb = choice.fallback
    if fb is None:
        detail += "; the record stores no fallback: the default configuration runs"
        return _pick(graph, None, LaunchConfig.default(), source, detail, default)
    measured = "" if fb.wall_ms is None else f", {fb.wall_ms:.3g} ms in the search"
    detail += f"; meanwhile the search's best on another loop runs ({fb.config}{measured})"
    stand_in = replace(
        choice, config=fb.config, algorithm=fb.algorithm, delta_scale=fb.delta_scale, fallback=None
    )
    return _pick(graph, stand_in, fb.config, source, detail)


WIDE_MIN_NODES = 2**20
"""Low-diameter graphs of at least this many nodes run near-far on the wide loop when no stored
class is within a factor of :data:`WIDE_SIZE_GAP` of their size (:func:`wide_beyond`)."""
WIDE_SIZE_GAP = 4
WIDE_DELTA_SCALE = 0.5
"""Δ of such a solve, times the default rule (:func:`sssp.cpu.nearfar.default_delta`). With the
wide loop's light/heavy split (a heavy edge pushed once per bucket) a smaller Δ re-pushes fewer
light edges: on GAP's scale-22 Kronecker and uniform graphs 0.5 x took 10.2 and 9.7 ms of device
time against 11.2 and 10.2 at 1 x, and 2 x was slower still (H200, run 94)."""
WIDE_DETAIL = "; the wide loop (a low-diameter graph of 1M+ nodes beyond the stored classes' sizes)"


def wide_beyond(graph: Graph, choice: TunedChoice | None, source: ConfigSource) -> bool:
    """Whether a near-far solve of ``graph`` takes the wide loop (:mod:`sssp.gpu.wide`) instead of
    a stored class's loop: the graph has low diameter and at least :data:`WIDE_MIN_NODES` nodes,
    and the answer is not for its own class but for one :data:`WIDE_SIZE_GAP` or more times
    smaller (or there is none). Measured on the H200 (``benchmarks/results/h200/wide_probe_run62.csv``,
    ``wide_variants_run63.csv``): GAP's scale-22 graphs took 11-23 ms on the wide loop at Δ = the
    default rule against 38-71 ms on the persistent loop of the nearest stored class (98k/deg20);
    Δ is :data:`WIDE_DELTA_SCALE` x the rule; a tuned class keeps its own loop and Δ."""
    if source is ConfigSource.TUNED_EXACT or graph.n < WIDE_MIN_NODES:
        return False
    if choice is not None and choice.graph_class is not None:
        from .classes import parse_size

        if parse_size(choice.graph_class.size) * WIDE_SIZE_GAP > graph.n:
            return False
    return graph.graph_class().diameter == "lowdiam"


def resolve_config(
    graph: Graph,
    device: DeviceInfo,
    *,
    algorithm: str = "crauser",
    variant: str = "successors",
    db: str | None = None,
    provider: ConfigProvider | None = None,
) -> tuple[LaunchConfig, ConfigSource, str]:
    """(configuration, where it came from, a human-readable detail) for ``graph`` on ``device``:
    :func:`resolve_choice`'s for ``algorithm`` without its Δ (a near-far caller wants that
    too: :func:`resolve_choice`)."""
    _, _, config, source, detail = resolve_choice(
        graph, device, algorithm=algorithm, variant=variant, db=db, provider=provider
    )
    return config, source, detail


def _lookup(
    graph: Graph,
    device: DeviceInfo,
    algorithm: str,
    variant: str,
    db: str | None,
    provider: ConfigProvider | None,
    graph_class: GraphClass | None = None,
) -> tuple[TunedChoice | None, LaunchConfig, ConfigSource, str]:
    """The provider's answer for ``graph`` (as of ``graph_class``, default the graph's own)."""
    import kernels

    # Engine 2's configurations (the solver runs engine 2); the paper kernels' per-kernel
    # records describe the paper's loop and serve Table 1.
    digest = kernels.digest(kernels.ENGINE_SOURCE_FILE)
    query = TunedQuery(
        graph_class or graph.graph_class(),
        device.name,
        device.uuid,
        device.cc_string,
        digest,
        algorithm,
        variant,
        db,
        device.sm_count,
    )
    choice = _ask(query, provider)
    if choice is None:
        reason = _unavailable(db, provider)
        detail = (
            f"tuned configuration unavailable ({reason}); using the default configuration"
            if reason
            else f"no tuned configuration stored for {device.name} (kernels {digest}, "
            f"{algorithm}/{variant}); using the default configuration"
        )
        log.info(detail)
        return None, LaunchConfig.default(), ConfigSource.DEFAULT, detail
    return choice, choice.config, choice.source, choice.detail
