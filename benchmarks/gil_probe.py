"""Does a CPU solver hold the GIL? A pure-Python counter thread runs beside each solve; its rate
during the solve, against its rate alone, says how much of the interpreter the solve left it.

Near 0 %: the solve holds the GIL (threads cannot run two of them at once); far above: it
releases it. On a machine with a free core the releasing solver leaves the counter close to
100 %; on a loaded one, less. Why ``sssp.cpu.many`` runs the compiled solvers in threads and
SciPy's Dijkstra on one core.

Usage::

    python benchmarks/gil_probe.py
"""

from __future__ import annotations

import threading
import time

import numpy as np


def probe(fn) -> tuple[float, float]:
    """(seconds of ``fn()``, the counter's rate during it as a share of its rate alone)."""
    stop = False
    ticks = [0]

    def counter() -> None:
        while not stop:
            ticks[0] += 1

    t = threading.Thread(target=counter)
    t.start()
    time.sleep(0.2)
    c0 = ticks[0]
    time.sleep(0.3)
    alone = (ticks[0] - c0) / 0.3
    c1, t1 = ticks[0], time.perf_counter()
    fn()
    dt = time.perf_counter() - t1
    during = (ticks[0] - c1) / dt
    stop = True
    t.join()
    return dt, during / alone


def main() -> int:
    from scipy.sparse.csgraph import dijkstra

    import sssp
    from sssp.cpu.many import CPURows
    from sssp.cpu.reference import min_weight_csr

    g = sssp.generate("random", size="98k", degree=20, seed=0)
    mat = min_weight_csr(g)
    src = np.arange(4, dtype=np.int64)
    nf = CPURows(g, algorithm="near-far", workers=1)
    rows = np.empty((4, g.n), dtype=np.int64)
    nf.fill(src[:1], rows[:1], None, None, lambda c: None)  # compiled code in place
    for name, fn in (
        ("scipy dijkstra", lambda: dijkstra(mat, indices=src)),
        ("near-far (compiled)", lambda: nf.fill(src, rows, None, None, lambda c: None)),
    ):
        dt, share = probe(fn)
        print(
            f"{name:22s} {dt * 1e3:7.0f} ms for 4 sources; a Python thread beside it ran at "
            f"{100 * share:3.0f} % of its rate alone"
        )
    nf.close()
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("gil_probe", main)
