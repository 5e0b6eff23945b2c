"""Where one GPU solve's time goes, on the paper's random classes (needs a CUDA GPU).

    python benchmarks/profile_solve.py phases 24kx200 98kx2000
    python benchmarks/profile_solve.py fixed 24kx200 98kx2
    python benchmarks/profile_solve.py nearfar 98kx2 GRAPH_FILE ...

``phases``: Crauser's cost per phase on engine 2 with Crauser's own tuned configuration. The
solve runs with the phase limit L = 2, 3, ... (the control word ``CTRL_LIMIT``: the loop stops
after phase L - 1), and phase p costs time(L = p + 1) - time(L = p); the first line, L = 2, holds
the solve's fixed cost too. CUDA-event time of the whole solve (``timings["total"]``), the median
of 7 after a warm-up, from one source; beside it the frontier that phase relaxes and its fringe.

``fixed``: the pieces of ``EngineSolver.solve`` outside the phase loop, each queued alone between
two CUDA events (median of 20 after two warm-ups), with the class's ``solve(tuned=True)`` pick,
then the initialisation and one phase together (phase limit 2; on the cluster loop, which reads
the same control word as its step limit, that is its start and two steps).

``nearfar``: where a near-far solve's time goes, for graphs that ``solve(tuned=True)`` runs with
near-far, over the record's sources (``bench_sssp.pick_sources``, 5): the whole solve
(``timings["total"]`` and the loop), and queued alone between CUDA events (medians of 20 after two
warm-ups, first source): the loop kernel with step limit 0 (on the cluster loop: its start, the
copy of the graph into shared memory, and the keys written back), with step limit 1, the
predecessor pass, and the copies to the host.

Graphs are ``SIZExDEGREE`` (``24kx200``), ``sssp.generate("random", ...)`` with seed 0, so the
classes are the record's (``benchmarks/bench_sssp.py``); ``nearfar`` also takes graph files, as the
record reads them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kernels  # noqa: E402
import sssp  # noqa: E402
from sssp.gpu.device import device_info  # noqa: E402
from sssp.gpu.engine import EngineSolver  # noqa: E402
from sssp.tuned import resolve_choice, resolve_config  # noqa: E402


def random_graph(spec: str) -> sssp.Graph:
    size, _, degree = spec.partition("x")
    if not degree.isdigit():
        raise sssp.InvalidArgumentError(f"bad graph {spec!r}: expected SIZExDEGREE, e.g. 24kx200")
    return sssp.generate("random", size=size, degree=int(degree), seed=0)


def graph_of(spec: str) -> sssp.Graph:
    """A graph file (read as the record reads it) or a ``SIZExDEGREE`` random graph."""
    if Path(spec).is_file():
        import bench_sssp as bench

        return bench.build(bench.Spec(Path(spec).name.split(".")[0], "file", spec), 0)
    return random_graph(spec)


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
        print(
            f"PROFILE {spec} config={cfg} src={source_kind} phases={count} total_ms={full.timings['gpu'] * 1e3:.3f}"
        )
        before = 0.0
        for limit in range(2, count + 2):
            solver.ctrl0[kernels.CTRL_LIMIT] = limit
            times = [solver.solve(source).timings["gpu"] * 1e3 for _ in range(8)]
            now = float(np.median(times[1:]))
            p = limit - 1
            print(
                f"  phase {p:3d}: cum {now:.4f} ms  this {1e3 * (now - before):7.1f} us  "
                f"|F_prev|={cnt[2 * (p - 1)]:6d} |R|={cnt[2 * p + 1]:6d}"
            )
            before = now
        solver.ctrl0[kernels.CTRL_LIMIT] = kernels.engine_phase_limit(graph.n)


def timed_on(cuda, stream, queue: Callable[[], object], reps: int = 20, warm: int = 2) -> float:
    """Median CUDA-event time in µs of what ``queue`` puts on ``stream``, after ``warm`` warm-ups."""
    times = []
    for _ in range(reps + warm):
        a, b = cuda.Event(), cuda.Event()
        a.record(stream)
        queue()
        b.record(stream)
        b.synchronize()
        times.append(b.time_since(a) * 1e3)
    return float(np.median(times[warm:]))


def timed(solver: EngineSolver, queue: Callable[[], object], reps: int = 20) -> float:
    """:func:`timed_on` the solver's stream."""
    return timed_on(solver.cuda, solver.stream, queue, reps)


def result_pass(s: EngineSolver, source: int) -> Callable[[], None]:
    """Queue the result pass alone (distances, predecessors and the summary into host memory)."""
    dist, dist_ptr = s._host.take(s.n, s._dist_dtype)
    pred, pred_ptr = s._host.take(s.n, np.int32)
    return lambda: s._deliver(source, dist, dist_ptr, pred, pred_ptr)


def fixed(spec: str) -> None:
    graph = random_graph(spec)
    algorithm, delta, cfg, _, _ = resolve_choice(graph, device_info(0))
    with EngineSolver(graph, algorithm=algorithm, config=cfg, delta=delta) as s:
        source = a_source(graph)
        full = s.solve(source)
        print(
            f"FIXED {spec} alg={algorithm} config={cfg} phases={full.iterations} "
            f"total={full.timings['gpu'] * 1e3:.3f} ms loop={full.timings['loop'] * 1e3:.3f} ms"
        )
        parts = {
            "events only": lambda: None,
            "ctrl to device": lambda: s.cuda.memcpy_htod_async(s.d_ctrl, s.ctrl0, s.stream),
            "start (ctrl + init)": lambda: s.start(source),
            "result pass": result_pass(s, source),
        }
        for name, queue in parts.items():
            print(f"  {name:22s} {timed(s, queue):7.1f} us")
        s.ctrl0[kernels.CTRL_LIMIT] = 2

        def one_phase() -> None:
            s.start(source)
            s.run_phases()

        print(f"  {'start + 1 phase':22s} {timed(s, one_phase):7.1f} us")


def nearfar(spec: str) -> None:
    import bench_sssp as bench

    graph = graph_of(spec)
    algorithm, delta, cfg, _, _ = resolve_choice(graph, device_info(0))
    if algorithm != "near-far":
        print(f"NEARFAR {spec}: solve(tuned=True) runs {algorithm}, not near-far")
        return
    with EngineSolver(graph, algorithm=algorithm, config=cfg, delta=delta) as s:
        sources = bench.pick_sources(graph, 5, 0)
        s.solve(sources[0])
        runs = [s.solve(x) for x in sources for _ in range(3)]
        total = float(np.median([r.timings["gpu"] for r in runs])) * 1e6  # µs
        loop = float(np.median([r.timings["loop"] for r in runs])) * 1e6
        steps = float(np.median([r.iterations for r in runs]))
        print(
            f"NEARFAR {spec} n={graph.n} m={graph.m} loop={s.loop} blocks={s.cluster} "
            f"resident={bool(s.cluster_mb)} fused={bool(s.cluster_lq)} config={cfg} delta={delta} "
            f"steps={steps:.0f} total={total:.1f} us loop={loop:.1f} us ({loop / max(steps, 1):.2f} us a step)"
        )
        full = int(s.ctrl0[kernels.CTRL_LIMIT])
        source = sources[0]

        def loop_with(limit: int) -> Callable[[], None]:
            def queue() -> None:
                s.ctrl0[kernels.CTRL_LIMIT] = limit
                s.start(source)
                s.run_phases()
                s.ctrl0[kernels.CTRL_LIMIT] = full

            return queue

        parts = {
            "events only": lambda: None,
            "loop, limit 0": loop_with(0),
            "loop, limit 1": loop_with(1),
            "loop, full": loop_with(full),
            "tree pass": lambda: s._launch("tree"),
            "result pass": result_pass(s, source),
        }
        for name, queue in parts.items():
            print(f"  {name:22s} {timed(s, queue):8.1f} us")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    ap.add_argument("what", choices=("phases", "fixed", "nearfar"))
    ap.add_argument(
        "graphs", nargs="+", metavar="SIZExDEGREE", help="or, for nearfar, a graph file"
    )
    args = ap.parse_args(argv)
    for spec in args.graphs:
        {"phases": phases, "fixed": fixed, "nearfar": nearfar}[args.what](spec)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("profile_solve", main)
