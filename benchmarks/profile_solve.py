"""Where one GPU solve's time goes, on the paper's random classes (needs a CUDA GPU).

    python benchmarks/profile_solve.py phases 24kx200 98kx2000
    python benchmarks/profile_solve.py fixed 24kx200 98kx2

``phases``: Crauser's cost per phase on engine 2 with Crauser's own tuned configuration. The
solve runs with the phase limit L = 2, 3, ... (the control word ``CTRL_LIMIT``: the loop stops
after phase L - 1), and phase p costs time(L = p + 1) - time(L = p); the first line, L = 2, holds
the solve's fixed cost too. CUDA-event time of the whole solve (``timings["total"]``), the median
of 7 after a warm-up, from one source; beside it the frontier that phase relaxes and its fringe.

``fixed``: the pieces of ``EngineSolver.solve`` outside the phase loop, each queued alone between
two CUDA events (median of 20 after two warm-ups), with the class's ``solve(tuned=True)`` pick,
then the initialisation and one phase together (the phase limit applies to Crauser's loops; the
cluster loop takes its own step limit, so there it is the whole loop).

Graphs are ``SIZExDEGREE`` (``24kx200``), ``sssp.generate("random", ...)`` with seed 0, so the
classes are the record's (``benchmarks/bench_sssp.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

import kernels
import sssp
from sssp.gpu.device import device_info
from sssp.gpu.engine import EngineSolver
from sssp.tuned import resolve_choice, resolve_config


def random_graph(spec: str) -> sssp.Graph:
    size, _, degree = spec.partition("x")
    if not degree.isdigit():
        raise sssp.InvalidArgumentError(f"bad graph {spec!r}: expected SIZExDEGREE, e.g. 24kx200")
    return sssp.generate("random", size=size, degree=int(degree), seed=0)


def a_source(graph: sssp.Graph) -> int:
    return int(np.flatnonzero(graph.out_degree() > 0)[7])


def phases(spec: str) -> None:
    graph = random_graph(spec)
    cfg, source_kind, _ = resolve_config(graph, device_info(0), algorithm="crauser")
    with EngineSolver(graph, algorithm="crauser", config=cfg) as solver:
        source = a_source(graph)
        full = solver.solve(source)
        count = full.iterations
        cnt = np.empty(2 * (count + 2), np.uint32)
        solver.cuda.memcpy_dtoh(cnt, solver.d_cnt)
        print(f"PROFILE {spec} config={cfg} src={source_kind} phases={count} total_ms={full.timings['total'] * 1e3:.3f}")
        before = 0.0
        for limit in range(2, count + 2):
            solver.ctrl0[kernels.CTRL_LIMIT] = limit
            times = [solver.solve(source).timings["total"] * 1e3 for _ in range(8)]
            now = float(np.median(times[1:]))
            p = limit - 1
            print(f"  phase {p:3d}: cum {now:.4f} ms  this {1e3 * (now - before):7.1f} us  "
                  f"|F_prev|={cnt[2 * (p - 1)]:6d} |R|={cnt[2 * p + 1]:6d}")
            before = now
        solver.ctrl0[kernels.CTRL_LIMIT] = kernels.engine_phase_limit(graph.n)


def timed(solver: EngineSolver, queue: Callable[[], None], reps: int = 20) -> float:
    """Median CUDA-event time in µs of what ``queue`` puts on the solver's stream."""
    times = []
    for _ in range(reps + 2):
        a, b = solver.cuda.Event(), solver.cuda.Event()
        a.record(solver.stream)
        queue()
        b.record(solver.stream)
        b.synchronize()
        times.append(b.time_since(a) * 1e3)
    return float(np.median(times[2:]))


def fixed(spec: str) -> None:
    graph = random_graph(spec)
    algorithm, delta, cfg, _, _ = resolve_choice(graph, device_info(0))
    with EngineSolver(graph, algorithm=algorithm, config=cfg, delta=delta) as s:
        source = a_source(graph)
        full = s.solve(source)
        print(f"FIXED {spec} alg={algorithm} config={cfg} phases={full.iterations} "
              f"total={full.timings['total'] * 1e3:.3f} ms loop={full.timings['loop'] * 1e3:.3f} ms")
        parts = {
            "events only": lambda: None,
            "ctrl to device": lambda: s.cuda.memcpy_htod_async(s.d_ctrl, s.ctrl0, s.stream),
            "start (ctrl + init)": lambda: s.start(source),
            "key to host": lambda: s.cuda.memcpy_dtoh_async(s.h_key, s.d_key, s.stream),
            "ctrl to host": lambda: s.cuda.memcpy_dtoh_async(s.h_ctrl, s.d_ctrl, s.stream),
        }
        for name, queue in parts.items():
            print(f"  {name:22s} {timed(s, queue):7.1f} us")
        s.ctrl0[kernels.CTRL_LIMIT] = 2

        def one_phase() -> None:
            s.start(source)
            s.run_phases()

        print(f"  {'start + 1 phase':22s} {timed(s, one_phase):7.1f} us")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("what", choices=("phases", "fixed"))
    ap.add_argument("graphs", nargs="+", metavar="SIZExDEGREE")
    args = ap.parse_args(argv)
    for spec in args.graphs:
        (phases if args.what == "phases" else fixed)(spec)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
