"""Whether the cluster loop's lanes run at once: device time per source of ``solve_rows`` on one
graph, with every lane or one, with and without the result pass, with the result pass at the
solve kernel's carveout, and with non-blocking streams.

    python benchmarks/lanes_probe.py random-24k-deg2 [--k 256]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from result_path import build  # noqa: E402


def per_source(solver, sources, out) -> float:
    solver.solve_rows(sources[:8], out[:8])  # warm
    times = [solver.solve_rows(sources, out) for _ in range(3)]
    return 1e3 * float(np.median(times)) / len(sources)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--graphs-dir", type=Path)
    args = ap.parse_args(argv)
    from sssp.gpu import device_info
    from sssp.gpu.engine import EngineSolver
    from sssp.tuned import resolve_choice

    for name in args.graphs:
        graph = build(name, args.graphs_dir, None, Path("/tmp"), 0)
        algorithm, delta, cfg, _, _ = resolve_choice(graph, device_info(0))
        sources = np.resize(np.flatnonzero(graph.out_degree() > 0)[::7], args.k)
        out = np.empty((args.k, graph.n), np.int64)
        with EngineSolver(graph, algorithm=algorithm, config=cfg, delta=delta) as s:
            cuda = s.cuda
            s._batch = "the probe measures the lanes"  # not the batch kernel
            all_lanes = s.lanes()
            rows = {"lanes": len(all_lanes), "cluster": s.cluster, "loop": s.loop}
            rows["all lanes"] = per_source(s, sources, out)
            s._lanes = all_lanes[:1]
            rows["one lane"] = per_source(s, sources, out)
            s._lanes = all_lanes
            fa = cuda.function_attribute
            s._result_func.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
            rows["result carveout 100"] = per_source(s, sources, out)
            for lane in all_lanes[1:]:
                lane.stream = cuda.Stream(flags=1)  # CU_STREAM_NON_BLOCKING
            rows["non-blocking streams"] = per_source(s, sources, out)
            real, finish = s._result_pass, s._finish_chunk
            s._result_pass = lambda *a, **k: None
            s._finish_chunk = lambda *a, **k: []  # nothing written to check or copy
            try:
                rows["no result pass, all lanes"] = per_source(s, sources, out)
                s._lanes = all_lanes[:1]
                rows["no result pass, one lane"] = per_source(s, sources, out)
            finally:
                s._result_pass, s._finish_chunk = real, finish
                s._lanes = all_lanes
            single = [s.solve(int(x)).timings["gpu"] for x in sources[:16]]
            rows["single solve gpu"] = 1e3 * float(np.median(single))
        print(
            f"LANES {name} n={graph.n} "
            + " | ".join(
                f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}" for k, v in rows.items()
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("lanes_probe", main)
