"""Which launch settings of engine 2 give SciPy's distances on a few awkward graphs (GPU).

    python benchmarks/engine_diagnose.py

Prints one line per (graph, configuration): the number of sources whose distances differ from
SciPy's (0 is right). A debugging aid for the engine: each knob is varied alone around the
default configuration.
"""

from __future__ import annotations

import numpy as np

import sssp
from sssp.config import KernelConfig, LaunchConfig
from sssp.cpu.reference import dijkstra


def configs() -> list[tuple[str, LaunchConfig]]:
    d = LaunchConfig.default()
    out = [("default", d)]
    out += [
        (f"local{v}", LaunchConfig(d.relax, d.min, d.update, local_limit=v)) for v in (0, 100_000)
    ]
    out += [("bps1", LaunchConfig(d.relax, d.min, d.update, blocks_per_sm=1))]
    out += [
        (f"bs{b}", LaunchConfig(KernelConfig(b, "N"), KernelConfig(b, "N"), KernelConfig(b, "N")))
        for b in (128, 512, 1024)
    ]
    out += [(f"lanes{x}", LaunchConfig(KernelConfig(256, "N", x))) for x in (4, 32)]
    out += [
        (f"l1{x}", LaunchConfig(KernelConfig(256, x), KernelConfig(256, x), KernelConfig(256, x)))
        for x in "AS"
    ]
    out += [(loop, LaunchConfig(loop=loop)) for loop in ("graph", "host", "legacy")]
    return out


def main() -> None:
    graphs = {
        "random-3k-deg20": sssp.generate("random", size=3072, degree=20, seed=2),
        "random-2k-deg1000": sssp.generate("random", size=2048, degree=1000, seed=4),
        "kronecker-s14": sssp.generate("kronecker", size=2**14, seed=7),
        "random-4k-deg4": sssp.generate("random", size=4096, degree=4, seed=2),
    }
    for name, g in graphs.items():
        sources = [int(s) for s in np.random.default_rng(0).integers(0, g.n, 3)]
        refs = {s: dijkstra(g, s).dist for s in sources}
        for label, cfg in configs():
            try:
                with sssp.Solver(g, backend="gpu", config=cfg) as solver:
                    bad = sum(not np.array_equal(solver.solve(s).dist, refs[s]) for s in sources)
                print(f"{name:18s} {label:10s} wrong={bad}", flush=True)
            except Exception as err:  # a configuration that cannot run is reported, not fatal
                print(f"{name:18s} {label:10s} error {type(err).__name__}: {err}", flush=True)


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("engine_diagnose", main)
