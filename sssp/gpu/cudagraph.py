"""The CUDA-graph loop of engine 2: relax and settle as the body of a WHILE conditional node.

pycuda has no graph API, so this is the one module that uses NVIDIA's ``cuda-bindings`` (driver
API). It loads the same cubin into the same (primary) context, so the device buffers that the
pycuda runtime allocated are used as they are. The settle kernel's last block clears the loop's
condition when a phase settles nothing; the host launches the graph once per solve.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

from kernels import ENGINE_KERNELS

from ..config import L1_STATES
from ..errors import BackendUnavailableError, SolverError
from .base import compile_cubin

if TYPE_CHECKING:
    from .engine import EngineSolver


def _driver() -> Any:
    try:
        from cuda.bindings import driver as cu
    except ImportError as err:
        raise BackendUnavailableError(
            "gpu",
            f"the CUDA-graph loop needs NVIDIA's cuda-bindings ({err})",
            hint="pip install cuda-bindings, or use loop='persistent' or loop='host'",
        ) from err
    return cu


def _check(result: Any) -> Any:
    """cuda-bindings calls return (status, *values): raise on a failed status."""
    cu = _driver()
    status, *values = result if isinstance(result, tuple) else (result,)
    if status != cu.CUresult.CUDA_SUCCESS:
        name = cu.cuGetErrorName(status)[1]
        raise SolverError(
            f"CUDA driver call failed: {name.decode() if isinstance(name, bytes) else name}"
        )
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def occupancy(
    cubin: bytes, name: str, block: int, dynamic_smem: int, pref: str, carveout: int | None
) -> int | None:
    """Blocks of kernel ``name`` resident per multiprocessor, from the driver's occupancy
    calculator with the same cache preference, carveout and dynamic shared memory as the launch;
    None when cuda-bindings is not installed (the caller then uses its own rule)."""
    try:
        cu = _driver()
    except BackendUnavailableError:
        return None
    _check(cu.cuInit(0))
    module = _check(cu.cuModuleLoadData(cubin))
    try:
        f = _check(cu.cuModuleGetFunction(module, name.encode()))
        _check(cu.cuFuncSetCacheConfig(f, getattr(cu.CUfunc_cache, f"CU_FUNC_CACHE_{pref}")))
        attr = cu.CUfunction_attribute
        if carveout is not None:
            _check(
                cu.cuFuncSetAttribute(
                    f, attr.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carveout
                )
            )
        if dynamic_smem:
            _check(
                cu.cuFuncSetAttribute(
                    f, attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic_smem
                )
            )
        return int(_check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, block, dynamic_smem)))
    finally:
        cu.cuModuleUnload(module)


class PhaseGraph:
    """An instantiated graph ``WHILE (phases remain) { relax; settle }`` for one solver."""

    def __init__(self, solver: EngineSolver) -> None:
        cu = self.cu = _driver()
        _check(cu.cuInit(0))
        ctx = _check(cu.cuCtxGetCurrent())
        cubin = compile_cubin(solver.params, solver.info.arch)
        self.module = _check(cu.cuModuleLoadData(cubin))
        self._keep: list[Any] = []  # argument storage must outlive the instantiated graph
        funcs = {}
        for name in ("relax", "settle"):
            f = _check(
                cu.cuModuleGetFunction(
                    self.module, ENGINE_KERNELS[name].cuda_name(solver.variant).encode()
                )
            )
            pref, carveout = L1_STATES[solver._kernel_config(name).l1]
            _check(cu.cuFuncSetCacheConfig(f, getattr(cu.CUfunc_cache, f"CU_FUNC_CACHE_{pref}")))
            if carveout is not None:
                _check(
                    cu.cuFuncSetAttribute(
                        f,
                        cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                        carveout,
                    )
                )
            funcs[name] = f

        self.graph = _check(cu.cuGraphCreate(0))
        handle = _check(
            cu.cuGraphConditionalHandleCreate(self.graph, ctx, 1, cu.CU_GRAPH_COND_ASSIGN_DEFAULT)
        )
        params = cu.CUgraphNodeParams()
        params.type = cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = handle
        params.conditional.type = cu.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE
        params.conditional.size = 1
        params.conditional.ctx = ctx
        try:  # CUDA 13's cuGraphAddNode takes per-edge data
            _check(cu.cuGraphAddNode(self.graph, None, None, 0, params))
        except TypeError:
            _check(cu.cuGraphAddNode(self.graph, None, 0, params))
        body = params.conditional.phGraph_out[0]

        base = [int(a) for a in solver.args()[:-1]]
        n = int(solver.args()[-1])
        relax = self._kernel_node(body, funcs["relax"], solver._shapes["relax"], base, n, None, [])
        self._kernel_node(
            body, funcs["settle"], solver._shapes["settle"], base, n, int(handle), [relax]
        )
        self.exec = _check(cu.cuGraphInstantiate(self.graph, 0))

    def _kernel_node(
        self,
        body: Any,
        func: Any,
        shape: tuple,
        pointers: list[int],
        n: int,
        cond: int | None,
        deps: list,
    ) -> Any:
        cu = self.cu
        values: list[Any] = [ctypes.c_void_p(p) for p in pointers] + [ctypes.c_int(n)]
        if cond is not None:
            values.append(ctypes.c_ulonglong(cond))
        array = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        self._keep += [values, array]
        p = cu.CUDA_KERNEL_NODE_PARAMS()
        p.func = func
        (p.gridDimX, p.gridDimY, p.gridDimZ), (p.blockDimX, p.blockDimY, p.blockDimZ) = shape
        p.sharedMemBytes = 0
        p.kernelParams = ctypes.addressof(array)
        p.extra = 0
        return _check(cu.cuGraphAddKernelNode(body, deps or None, len(deps), p))

    def launch(self, stream: Any) -> None:
        """Launch on a pycuda stream (by its handle)."""
        handle = getattr(stream, "handle", 0)
        _check(self.cu.cuGraphLaunch(self.exec, self.cu.CUstream(int(handle))))

    def close(self) -> None:
        cu = self.cu
        for call, obj in (
            (cu.cuGraphExecDestroy, "exec"),
            (cu.cuGraphDestroy, "graph"),
            (cu.cuModuleUnload, "module"),
        ):
            if getattr(self, obj, None) is not None:
                call(getattr(self, obj))
                setattr(self, obj, None)
