"""Where a PHAST solve's device time goes: CUDA events around the sweep's launch alone.

    python benchmarks/phast_probe.py --graphs-dir G --generated grid-512 --sources 5 \\
        --configs phast-x4 phast-grid-x32 phast-x4+core1024 --out OUT.csv

A solve's ``loop`` time (``bench_nearfar.py``) runs from the event before its first copy to the
event after the sweep, so it holds the host's upward search and the launches' host calls too.
This probe records two more events on the solver's stream, right before and after the sweep's
launch, in three forms per source:

- ``full``: the solve as it runs (its distances checked against SciPy's);
- ``top``: the same launch with ``levels`` cut to the top levels block 0 sweeps alone (no grid
  level; a probe, not an answer);
- ``empty``: ``levels``, ``small`` and ``staged`` cut to 0 (the launch, the seeds' copy to the
  grid positions and nothing else);
- ``again``: the empty launch twice in a row, the second timed (no other kernel between them,
  so no change of the multiprocessors' shared-memory carveout either);
- ``bare``: the empty launch with no seeds and no search (``source`` -1, no seed count, no
  mapped flag): the launch and block 0's staging alone;
- ``bare1``: ``bare`` on a grid of one block (``bare - bare1``: what launching the whole grid
  costs).

With ``--levels-out FILE``, two more families of forms per source, one row each in FILE
(medians, us): ``block J``, block 0 alone sweeping the first J top levels (``small`` and
``levels`` cut to J, ``staged`` to at most J), and ``grid J``, the top levels and the first J
of the grid's (``levels`` cut to ``small + J``): the differences between neighbours are what
one level adds, block 0's and the grid's.

``--variants`` runs each configuration again with the result path changed: ``copies``, the
result pass writes device buffers and copies bring them to the host (``host_mapped=False``);
``notree``, no predecessor tree (``return_predecessors=False``: no tree pass, the distances
alone cross to the host); ``pull`` and ``push``, the tree found by the result pass from the
reverse graph's edges or by the tree pass (``EngineSolver.RESULT_PASS_TREE`` on and off).
A variant may be named more than once, to interleave them on a noisy host.
``gpu_us - loop_us`` is the passes after the sweep.

So ``full - top`` is what the grid's levels add, ``top - empty`` block 0's top levels and,
with ``+dsearch`` (the device searches upward itself), ``empty - bare`` that search; with
``+labels`` (the source's kept upward search read on the device), ``empty - bare`` reading the
label and taking the core's distances through the table. Medians
over the sources, in microseconds; the sweep's levels and top levels beside them (and the
core's, with a ``+coreN`` label: ``bench_nearfar.py``'s labels and suffixes).

The host's side of a ``full`` solve, by ``time.perf_counter``: ``search_us`` the upward search
(:meth:`sssp.hierarchy.Hierarchy.upward`), ``to_launch_us`` from the call of ``solve`` until the
sweep's launch call began (the checks, the first copies' calls and the search),
``launch_call_us`` the launch call itself, ``after_us`` from its return until ``solve``
returned (the later passes' calls, the wait for the device and the result). The probe's own
work on a launch's arguments falls between the first two (in neither) and in ``wall_us``.
Where the device waits for the host, ``loop_us`` is about ``to_launch_us + launch_call_us``
plus the sweep.
With ``+early`` (the sweep launched before the search) the launch comes first, so ``full`` and
the other forms' events hold the wait for the host's search, and ``to_launch_us`` no search.
With ``+dsearch`` or ``+labels`` the host does not search (``search_us`` 0).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import struct
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_nearfar import config_for, graphs, phast_sweep  # noqa: E402

import kernels  # noqa: E402
import sssp  # noqa: E402
from sssp.cpu.reference import dijkstra  # noqa: E402
from sssp.verify import check_tree  # noqa: E402

FORMS = ("full", "top", "empty", "again", "bare", "bare1")
HOST = ("search", "to_launch", "launch_call", "after")
COLUMNS = (
    "graph",
    "n",
    "config",
    "levels",
    "top_levels",
    "staged_levels",
    "core_levels",
    "core_nodes",
    "full_us",
    "top_us",
    "empty_us",
    "again_us",
    "bare_us",
    "bare1_us",
    "loop_us",
    "gpu_us",
    "wall_us",
    *(f"{h}_us" for h in HOST),
    "verified",
)
LEVEL_COLUMNS = ("graph", "config", "form", "j", "us")
VARIANTS = {
    "copies": ({"host_mapped": False}, True, None),
    "notree": ({}, False, None),
    "pull": ({}, True, True),
    "push": ({}, True, False),
}
"""``--variants``: the solver's extra options, whether a solve returns the tree, and where the
tree is found (``EngineSolver.RESULT_PASS_TREE``: True the result pass, False the tree pass,
None as the solver ships)."""


class _Timed:
    """The sweep function of a solver, its launches timed between two events and, for a probe
    form, some arguments replaced. It launches as the solver does: from the packed argument
    buffer (``_launch_kernel``, :class:`sssp.gpu.base.PackedLaunch`) where the function has
    that method, else by ``prepared_async_call``."""

    FORMAT = "@" + kernels.PHAST_KERNELS["sweep"].arg_format

    def __init__(self, func, cuda) -> None:
        self.func, self.cuda = func, cuda
        self.before, self.after = cuda.Event(), cuda.Event()
        self.form: str | tuple[str, int] = "full"
        # The host's clock when the solver's launch reached this wrapper, and around the launch
        # call itself (the form's changes between: the probe's own work).
        self.entered = self.called = self.returned = 0.0
        if hasattr(func, "_launch_kernel"):
            self._launch_kernel = self._packed

    def _form(self, named: dict) -> dict:
        if isinstance(self.form, tuple):  # ("block" | "grid", J): a prefix of the levels
            kind, j = self.form
            if kind == "block":
                named.update(levels=j, small=j, staged=min(named["staged"], j))
            else:
                named["levels"] = named["small"] + j
        elif self.form == "top":
            named["levels"] = named["small"]
        elif self.form in ("empty", "again", "bare", "bare1"):
            named.update(levels=0, small=0, staged=0)
        if self.form in ("bare", "bare1"):
            named.update(source=-1, nseeds=0, seed_flag=0, nentries=0)
        return named

    def _timed(self, launch, stream) -> None:
        if self.form == "again":
            launch()
        self.before.record(stream)
        self.called = time.perf_counter()
        launch()
        self.returned = time.perf_counter()
        self.after.record(stream)

    def _packed(self, grid, block, buf, shared, stream):
        self.entered = time.perf_counter()
        named = self._form(
            dict(zip(kernels.PHAST_ARGS, struct.unpack(self.FORMAT, buf), strict=True))
        )
        buf = struct.pack(self.FORMAT, *named.values())
        grid = (1, 1, 1) if self.form == "bare1" else grid
        self._timed(lambda: self.func._launch_kernel(grid, block, buf, shared, stream), stream)

    def prepared_async_call(self, grid, block, stream, *args, **kw):
        self.entered = time.perf_counter()
        named = self._form(dict(zip(kernels.PHAST_ARGS, args, strict=True)))
        grid = (1, 1, 1) if self.form == "bare1" else grid
        self._timed(
            lambda: self.func.prepared_async_call(grid, block, stream, *named.values(), **kw),
            stream,
        )

    def microseconds(self) -> float:
        self.after.synchronize()
        return 1e3 * self.after.time_since(self.before)


@contextlib.contextmanager
def _result_pass_tree(pull: bool | None):
    """``EngineSolver.RESULT_PASS_TREE`` set to ``pull`` for the solvers made inside (None:
    unchanged)."""
    from sssp.gpu.engine import EngineSolver

    was = EngineSolver.RESULT_PASS_TREE
    if pull is not None:
        EngineSolver.RESULT_PASS_TREE = pull
    try:
        yield
    finally:
        EngineSolver.RESULT_PASS_TREE = was


def probe(
    graph: sssp.Graph,
    sources,
    label: str,
    *,
    variant: str = "",
    levels: list[dict] | None = None,
) -> dict:
    """One row of :data:`COLUMNS` for ``graph`` under the phast configuration ``label`` (with
    a :data:`VARIANTS` name, its result path changed); with ``levels``, the level prefixes'
    rows appended to it."""
    refs = {s: dijkstra(graph, s).dist for s in sources}
    config = config_for(label)
    options, tree, pull = VARIANTS[variant] if variant else ({}, True, None)
    with (
        phast_sweep(label),
        _result_pass_tree(pull),
        sssp.Solver(graph, backend="gpu", algorithm="near-far", config=config, **options) as sv,
    ):
        engine = sv._gpu
        ph = engine._phast
        if ph is None:
            raise sssp.SSSPError(f"{label} does not run the phast loop on this graph")
        timed = _Timed(engine.funcs["sweep"], engine.cuda)
        engine.funcs["sweep"] = timed
        searches: list[float] = []
        upward = ph.hierarchy.upward

        def timed_upward(*a, **kw):
            t = time.perf_counter()
            got = upward(*a, **kw)
            searches.append(time.perf_counter() - t)
            return got

        object.__setattr__(ph.hierarchy, "upward", timed_upward)  # this instance only
        sv.solve(sources[0])  # the module's first launch
        small, grid_levels = ph.small, ph.hierarchy.levels - ph.core.levels - ph.small
        prefixes = (
            [("block", j) for j in range(small + 1)] + [("grid", j) for j in range(grid_levels + 1)]
            if levels is not None
            else []
        )
        got: dict = {f: [] for f in (*FORMS, *prefixes)}
        loop, gpu, wall = [], [], []
        host: dict[str, list[float]] = {h: [] for h in HOST}
        ok = True
        for s in sources:
            for form in (*FORMS, *prefixes):
                timed.form = form
                t_call = time.perf_counter()
                r = sv.solve(s, return_predecessors=tree)
                t_back = time.perf_counter()
                got[form].append(timed.microseconds())
                if form == "full":
                    host["search"].append(searches[-1] if searches else 0.0)
                    host["to_launch"].append(timed.entered - t_call)
                    host["launch_call"].append(timed.returned - timed.called)
                    host["after"].append(t_back - timed.returned)
                    ok &= bool(np.array_equal(r.dist, refs[s]))
                    if tree:
                        check_tree(graph, r)  # raises on a wrong predecessor
                    loop.append(1e6 * r.timings["loop"])
                    gpu.append(1e6 * r.timings["gpu"])
                    wall.append(1e6 * r.timings["wall"])
        stats = ph.stats()
    name = f"{label} {variant}".strip()
    if levels is not None:
        levels += [
            {"graph": graph.name, "config": name, "form": k, "j": j, "us": float(np.median(t))}
            for (k, j), t in ((f, got[f]) for f in prefixes)
        ]
    return {
        "graph": graph.name,
        "n": graph.n,
        "config": name,
        "levels": stats["levels"],
        "top_levels": stats["top_levels"],
        "staged_levels": stats["staged_levels"],
        "core_levels": stats["core_levels"],
        "core_nodes": stats["core_nodes"],
        **{f"{f}_us": round(float(np.median(got[f])), 1) for f in FORMS},
        "loop_us": round(float(np.median(loop)), 1),
        "gpu_us": round(float(np.median(gpu)), 1),
        "wall_us": round(float(np.median(wall)), 1),
        **{f"{h}_us": round(1e6 * float(np.median(host[h])), 1) for h in HOST},
        "verified": "yes" if ok else "no",
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=Path("phast_probe.csv"))
    ap.add_argument("--sources", type=int, default=5)
    ap.add_argument("--graphs-dir")
    ap.add_argument("--random", nargs="*", default=[], metavar="SIZExDEG")
    ap.add_argument("--generated", nargs="*", default=[], metavar="NAME")
    ap.add_argument("--configs", nargs="*", default=["phast-x4"], metavar="LABEL")
    ap.add_argument(
        "--variants",
        nargs="*",
        default=[],
        choices=sorted(VARIANTS),
        help="also run each configuration with this result path (see above)",
    )
    ap.add_argument(
        "--levels-out", type=Path, help="the level prefixes' times, one row a prefix (CSV)"
    )
    args = ap.parse_args()
    levels: list[dict] | None = [] if args.levels_out else None
    with args.out.open("w", newline="") as fh:
        out = csv.DictWriter(fh, COLUMNS)
        out.writeheader()
        for name, make in graphs(args):
            graph = make()
            graph.name = name
            rng = np.random.default_rng(0)
            sources = [int(s) for s in rng.choice(graph.n, args.sources, replace=False)]
            for label in args.configs:
                for variant in ("", *args.variants):
                    row = probe(  # the level prefixes on the configuration's own path
                        graph, sources, label, variant=variant, levels=None if variant else levels
                    )
                    out.writerow(row)
                    fh.flush()
                    print(" ".join(str(row[c]) for c in COLUMNS), flush=True)
                    if levels and args.levels_out:
                        _write_levels(args.levels_out, levels)
    return 0


def _write_levels(path: Path, rows: list[dict]) -> None:
    """Every level prefix measured so far, with what each adds to the one before it."""
    with path.open("w", newline="") as fh:
        out = csv.DictWriter(fh, (*LEVEL_COLUMNS, "adds_us"))
        out.writeheader()
        before = None
        for row in rows:
            key = (row["graph"], row["config"], row["form"])
            adds = "" if before is None or before[0] != key else f"{row['us'] - before[1]:.2f}"
            out.writerow({**row, "us": f"{row['us']:.2f}", "adds_us": adds})
            before = (key, row["us"])


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("phast_probe", main)
