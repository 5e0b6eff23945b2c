"""Kernel sources, their digest and compile-time parameters; every combination the runtime can
request is compiled with nvcc for sm_90 (no GPU needed)."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

import kernels
from kernels import CompileParams, runtime_params, widths_for
from sssp.errors import InvalidGraphError, KernelCompileError


def test_source_is_package_data_and_digest_is_stable():
    src = kernels.source()
    for name in set(kernels.KERNEL_NAMES.values()):
        assert f'extern "C" __global__ void {name}(' in src
    assert kernels.digest() == kernels.digest() and len(kernels.digest()) == 16


def test_defines_cannot_collide():
    for p in runtime_params():
        assert all(k.startswith("SSSP_") for k in p.defines())


@pytest.mark.parametrize(
    "n,wmax,expected",
    [
        (10, 100, (32, 32)),
        (2**20, 10, (32, 32)),
        (49_152, 87_000, (32, 32)),  # (n + 1) * wmax = 4.28e9 < 2^32 - 1
        (49_152, 88_000, (64, 32)),
        (100, 2**32 - 1, (64, 64)),
        (100, 2**32 - 2, (64, 32)),
    ],
)
def test_distance_width_rule(n, wmax, expected):
    assert widths_for(n, wmax) == expected


def test_overflowing_graph_is_rejected():
    with pytest.raises(InvalidGraphError, match="do not fit in 64 bits"):
        widths_for(2**31, 2**40)


def test_bad_params_rejected():
    with pytest.raises(ValueError):
        CompileParams(dist_bits=16)
    with pytest.raises(ValueError):
        CompileParams(dist_bits=32, weight_bits=64)
    with pytest.raises(ValueError):
        CompileParams(relax_lanes=3)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_every_runtime_combination_compiles_for_sm90():
    params = runtime_params()
    assert len(params) == 36
    with ThreadPoolExecutor(max_workers=2) as pool:
        cubins = list(pool.map(kernels.nvcc_compile, params))
    for p, cubin in zip(params, cubins, strict=True):
        assert cubin[:4] == b"\x7fELF", p.key  # a cubin is an ELF image
        for name in set(kernels.KERNEL_NAMES.values()):
            assert name.encode() in cubin, (p.key, name)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_compile_error_keeps_log(monkeypatch):
    monkeypatch.setattr(kernels, "source", lambda: "this is not CUDA")
    with pytest.raises(KernelCompileError) as info:
        kernels.nvcc_compile(CompileParams())
    assert info.value.log and "-arch=sm_90" in info.value.options
