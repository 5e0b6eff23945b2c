"""What a kernel launch costs by itself on this GPU, and what the cluster loop's start costs with
and without its resident copy of the graph (needs a CUDA GPU of compute capability 9.0+).

    python benchmarks/launch_cost.py 24kx2 GRAPH_FILE ...

``LAUNCH`` lines: three probe kernels that do nothing but (optionally) write ``touch`` words of
their dynamic shared memory, launched alone between two CUDA events (median of 40 after three
warm-ups): 16 plain blocks, a cluster of 4 and one of 16 (``__cluster_dims__``), 1024 threads a
block, at 0, 48 and 200 KB of dynamic shared memory, with the default carveout and with 100 %.
The time between the events includes the host's submission of the launch: this is what one
kernel queued alone costs, not what it adds inside a queue of commands. ``PAIR``: the 200 KB
cluster kernel then a plain 528-block kernel (as the solve kernel then the tree pass).

``START`` lines, per graph, with ``solve(tuned=True)``'s near-far configuration on the cluster
loop: the loop kernel with step limit 0 (its launch, the shared-memory set-up, the resident copy
of rows and edges when the layout has one, the keys written back), and the whole solve's median
``timings["gpu"]`` over 3 sources x 3 (after a warm-up), once as shipped and once with the
resident copy switched off (``mb = 0``: degrees in shared memory, rows and edges read from global
memory in every step); the last line says whether both gave the same distances.

Graphs are ``SIZExDEGREE`` (``sssp.generate("random", ...)``, seed 0) or files, as
``benchmarks/bench_sssp.py`` reads them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sssp as bench  # noqa: E402
from profile_solve import graph_of, timed_on  # noqa: E402

import kernels  # noqa: E402
from sssp.gpu.device import activate, device_info, driver  # noqa: E402
from sssp.gpu.engine import EngineSolver, _non_portable_clusters  # noqa: E402
from sssp.tuned import resolve_choice  # noqa: E402

PROBE = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define BODY                                                                     \
    extern __shared__ int s[];                                                   \
    if (touch) { for (int i = threadIdx.x; i < touch; i += blockDim.x) s[i] = i; __syncthreads(); } \
    if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = touch ? s[touch - 1] : 1;
extern "C" __global__ void __cluster_dims__(16, 1, 1) __launch_bounds__(1024, 1) k_c16(int *out, int touch) {
    BODY
    cg::this_cluster().sync();
}
extern "C" __global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(1024, 1) k_c4(int *out, int touch) {
    BODY
    cg::this_cluster().sync();
}
extern "C" __global__ void __launch_bounds__(1024, 1) k_plain(int *out, int touch) {
    BODY
}
"""


def timed(cuda, stream, queue: Callable[[], object], reps: int = 40) -> float:
    """Median CUDA-event time in µs of what ``queue`` puts on ``stream`` (three warm-ups)."""
    return timed_on(cuda, stream, queue, reps, warm=3)


def launches(cuda) -> None:
    from pycuda.compiler import compile as nvcc_compile

    mod = cuda.module_from_buffer(
        nvcc_compile(PROBE, options=["-O3"], no_extern_c=True, arch=device_info(0).arch)
    )
    out, fa, stream = cuda.mem_alloc(64), cuda.function_attribute, cuda.Stream()
    funcs = {n: mod.get_function(n) for n in ("k_plain", "k_c4", "k_c16")}
    funcs["k_c16"].set_attribute(_non_portable_clusters(cuda), 1)
    blocks = {"k_plain": 16, "k_c4": 4, "k_c16": 16}
    print(f"events only {timed(cuda, stream, lambda: None):.1f} us")
    for carve in (-1, 100):
        for name, f in funcs.items():
            for smem in (0, 48 * 1024, 200 * 1024):
                f.set_attribute(fa.MAX_DYNAMIC_SHARED_SIZE_BYTES, smem)
                f.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, carve)
                for touch in (0, smem // 4) if smem else (0,):
                    launch = partial(
                        f,
                        out,
                        np.int32(touch),
                        block=(1024, 1, 1),
                        grid=(blocks[name], 1, 1),
                        shared=smem,
                        stream=stream,
                    )
                    t = timed(cuda, stream, launch)
                    print(
                        f"LAUNCH carveout={carve:4d} {name:8s} blocks={blocks[name]:2d} smem={smem // 1024:3d}K "
                        f"touch={touch:6d} words  {t:6.1f} us",
                        flush=True,
                    )
    c16, plain = funcs["k_c16"], funcs["k_plain"]
    c16.set_attribute(fa.MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 * 1024)
    c16.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
    plain.set_attribute(fa.MAX_DYNAMIC_SHARED_SIZE_BYTES, 0)
    plain.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, -1)

    def a() -> None:
        c16(out, np.int32(0), block=(1024, 1, 1), grid=(16, 1, 1), shared=200 * 1024, stream=stream)

    def b() -> None:
        plain(out, np.int32(0), block=(256, 1, 1), grid=(528, 1, 1), shared=0, stream=stream)

    alone_a, alone_b, pair = (timed(cuda, stream, q) for q in (a, b, lambda: (a(), b())))
    print(
        f"PAIR c16 200K alone {alone_a:.1f}, plain 528x256 alone {alone_b:.1f}, c16 then plain {pair:.1f} us"
    )
    plain.set_attribute(fa.PREFERRED_SHARED_MEMORY_CARVEOUT, 100)
    pair = timed(cuda, stream, lambda: (a(), b()))
    print(f"PAIR with plain at carveout 100: c16 then plain {pair:.1f} us", flush=True)


def starts(spec: str) -> None:
    g = graph_of(spec)
    alg, delta, cfg, _, _ = resolve_choice(g, device_info(0))
    with EngineSolver(g, algorithm=alg, config=cfg, delta=delta) as s:
        if not s.cluster:
            print(
                f"START {spec}: solve(tuned=True) does not run the cluster loop ({alg}, {s.loop})"
            )
            return
        srcs = bench.pick_sources(g, 3, 0)
        mb, full = s.cluster_mb, int(s.ctrl0[kernels.CTRL_LIMIT])
        s.start(srcs[0])
        res = {}
        for label, m in (("resident", mb), ("mb=0", 0)):
            s.cluster_mb = m
            s._cluster_tail = None  # the solver keeps the launch's arguments after the first solve
            s.ctrl0[kernels.CTRL_LIMIT] = 0
            t0 = timed(s.cuda, s.stream, s.run_phases, reps=20)
            s.ctrl0[kernels.CTRL_LIMIT] = full
            s.solve(srcs[0])
            rs = [s.solve(x) for x in srcs for _ in range(3)]
            res[label] = [r.dist for r in rs]
            print(
                f"START {spec} {label:8s} blocks={s.cluster} fused={bool(s.cluster_lq)} limit0 {t0:6.1f} us  "
                f"solve {1e6 * np.median([r.timings.get('gpu', r.timings['total']) for r in rs]):7.1f} us  "
                f"steps {np.median([r.iterations for r in rs]):.0f}",
                flush=True,
            )
        s.cluster_mb = mb
        s._cluster_tail = None
        same = all(np.array_equal(x, y) for x, y in zip(res["resident"], res["mb=0"], strict=True))
        print(f"START {spec} same distances: {same}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    cuda = driver()
    activate(0)  # the primary context, which the solver uses too
    launches(cuda)
    for spec in args:
        starts(spec)
    return 0


if __name__ == "__main__":
    from sssp.cliutil import run_script

    run_script("launch_cost", main)
