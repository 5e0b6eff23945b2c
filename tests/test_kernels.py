"""The kernel contract: sources, digests, compile-time parameters and launch rules; every
combination the runtime can request, of both sources, is compiled with nvcc for sm_90 (no GPU
needed)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import kernels
from kernels import (
    ENGINE_KERNELS,
    ENGINE_SOURCE_FILE,
    PAPER_KERNELS,
    CompileParams,
    EngineParams,
    KernelCompileFailure,
    KernelContractError,
    engine_params,
    runtime_params,
    widths_for,
)


def test_sources_are_package_data():
    for file, specs in (
        (kernels.SOURCE_FILE, PAPER_KERNELS),
        (ENGINE_SOURCE_FILE, ENGINE_KERNELS),
        (ENGINE_SOURCE_FILE, kernels.NEARFAR_KERNELS),
    ):
        src = kernels.source(file)
        for spec in specs.values():
            for name in set(spec.cuda_names.values()):
                assert re.search(
                    rf'extern "C" __global__ void (__launch_bounds__\([^)]*\)\s+)?{name}\(', src
                ), name


DIGESTED = (kernels.SOURCE_FILE, ENGINE_SOURCE_FILE, kernels.RESULT_SOURCE_FILE)


def test_digest_is_the_hash_of_the_source_files_and_options():
    """Recomputed here from the files on disk (every part of a source of several files) and the
    compile options, so the digest covers exactly what is compiled."""
    root = Path(kernels.__file__).parent
    for file in DIGESTED:
        text = "".join(
            (root / part).read_text(encoding="utf-8")
            for part in kernels.SOURCE_PARTS.get(file, (file,))
        )
        want = hashlib.sha256(
            text.encode() + b"\0" + " ".join(kernels.NVCC_OPTIONS).encode()
        ).hexdigest()[:16]
        assert kernels.digest(file) == want, file
    assert len({kernels.digest(file) for file in DIGESTED}) == len(DIGESTED)


def test_digest_changes_with_any_source_byte_and_with_the_options(monkeypatch):
    uncached = kernels.digest.__wrapped__  # the cached digest would answer from before the patch
    text = kernels.source(ENGINE_SOURCE_FILE)
    base = uncached(ENGINE_SOURCE_FILE)
    for pos in (0, len(text) // 2, len(text) - 1):
        changed = text[:pos] + ("x" if text[pos] != "x" else "y") + text[pos + 1 :]
        monkeypatch.setattr(kernels, "source", lambda file, changed=changed: changed)
        assert uncached(ENGINE_SOURCE_FILE) != base, pos
    monkeypatch.setattr(kernels, "source", lambda file: text + "\n")  # one trailing byte
    assert uncached(ENGINE_SOURCE_FILE) != base
    monkeypatch.setattr(kernels, "source", lambda file: text)
    assert uncached(ENGINE_SOURCE_FILE) == base
    monkeypatch.setattr(kernels, "NVCC_OPTIONS", (*kernels.NVCC_OPTIONS, "-lineinfo"))
    assert uncached(ENGINE_SOURCE_FILE) != base


def test_digest_is_the_same_in_another_process():
    """No per-process input (hash seeds, paths, time) enters the digest: a fresh interpreter,
    started elsewhere with another hash seed, computes the same values."""
    code = f"import kernels; print(' '.join(kernels.digest(f) for f in {DIGESTED!r}))"
    root = Path(kernels.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/", timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [kernels.digest(f) for f in DIGESTED]


def test_engine_argument_list_matches_the_source():
    """The contract's argument list is the source's SSSP_ARGS, in order."""
    src = kernels.source(ENGINE_SOURCE_FILE)
    block = src[src.index("#define SSSP_ARGS") : src.index("#define SSSP_PASS")]
    names = [tok.strip(" ,\\\n*").split()[-1].lstrip("*") for tok in block.split(",")]
    names = [n.split("*")[-1] for n in names]
    assert tuple(names) == kernels.ENGINE_ARGS
    extra = src[src.index("#define SSSP_NF_ARGS") : src.index("#define SSSP_NF_PASS")].split(
        "SSSP_ARGS,"
    )[1]
    assert (
        tuple(tok.split("*")[-1].strip() for tok in extra.split(","))
        == kernels.NEARFAR_ARGS[len(names) :]
    )
    for spec in (*ENGINE_KERNELS.values(), *kernels.NEARFAR_KERNELS.values()):
        assert len(spec.arg_format) == len(spec.args)


def test_kernels_package_does_not_import_sssp():
    import subprocess
    import sys

    code = "import sys, kernels; kernels.engine_params(); print('sssp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_launch_rules():
    n = 10_000
    assert kernels.blocks_for(PAPER_KERNELS["min"], n, 256) == -(-n // 512)
    assert kernels.blocks_for(PAPER_KERNELS["relax"], n, 256, 8) == -(-n * 8 // 256)
    # engine 2's per-phase kernels stride, so their grid is capped at the resident blocks
    assert kernels.blocks_for(ENGINE_KERNELS["relax"], 10**6, 256, 1, resident=1056) == 1056
    assert kernels.blocks_for(ENGINE_KERNELS["settle"], 1000, 256, resident=1056) == 4
    with pytest.raises(KernelContractError):
        kernels.blocks_for(ENGINE_KERNELS["persistent"], n, 256)
    # the row sort: a block per row, capped at the resident blocks
    assert (
        kernels.blocks_for(ENGINE_KERNELS["sort"], 10**6, kernels.SORT_BLOCK, resident=792) == 792
    )
    assert kernels.blocks_for(ENGINE_KERNELS["sort"], 100, kernels.SORT_BLOCK, resident=792) == 100
    assert kernels.local_queue_capacity(0) == 0 and kernels.local_queue_capacity(1024) == 1024
    assert kernels.local_queue_capacity(10**6) == kernels.LOCAL_CAP_MAX
    assert kernels.local_queue_bytes(2048, 4) == 2 * 2048 * 12


def test_rows_are_sorted_only_where_the_push_relax_can_stop_early():
    """The row sort (sssp_e_sort_rows) keys on 32-bit weights and holds a row in shared memory:
    push relax only, 32-bit weights, rows up to SORT_CAP, the source's own limit."""
    cap = int(
        re.search(r"#define SSSP_SORT_CAP (\d+)", kernels.source(ENGINE_SOURCE_FILE)).group(1)
    )
    assert cap == kernels.SORT_CAP
    push32 = kernels.EngineParams(32, 32)
    assert kernels.sorts_rows(push32, kernels.SORT_CAP)
    assert not kernels.sorts_rows(push32, kernels.SORT_CAP + 1)
    assert kernels.sorts_rows(kernels.EngineParams(64, 32), 10)  # 64-bit distances, 32-bit weights
    assert kernels.sorts_rows(kernels.EngineParams(64, 32, floating=True), 10)  # float32 weights
    assert not kernels.sorts_rows(kernels.EngineParams(64, 64), 10)
    assert not kernels.sorts_rows(kernels.EngineParams(64, 64, floating=True), 10)
    assert not kernels.sorts_rows(kernels.EngineParams(32, 32, pull=True), 10)


def test_engine_params_contract():
    p = EngineParams(32, 32, False, "out", 1, False)
    assert p.packed and p.dtypes() == ("uint64", "uint32", "uint32")
    assert p.defines()["SSSP_OUT"] == 1 and p.defines()["SSSP_IN"] == 0
    q = EngineParams(64, 32, True, "inout", 8, True)
    assert not q.packed and q.dtypes() == ("uint64", "float64", "float32")
    assert q.defines()["SSSP_IN"] == 1 and q.defines()["SSSP_PULL"] == 1
    assert EngineParams(criterion="martin").defines()["SSSP_OUT"] == 0
    with pytest.raises(KernelContractError):
        EngineParams(32, 32, True)  # real weights need float64 distances
    with pytest.raises(KernelContractError):
        EngineParams(criterion="fastest")


def test_defines_cannot_collide():
    for p in [*runtime_params(), *engine_params()]:
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
    with pytest.raises(KernelContractError, match="do not fit in 64 bits"):
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
@pytest.mark.timeout(1800)
def test_every_engine_combination_compiles_for_sm90():
    """Distance kind x criterion x lanes x push/pull, and the five cluster sizes with their
    one-source kernel and their batch kernel: every engine-2 build the runtime can ask for."""
    params = engine_params()
    assert len(params) == 5 * 4 * 6 * 2 + 2 * len(kernels.CLUSTER_SIZES)
    with ThreadPoolExecutor(max_workers=2) as pool:
        cubins = list(pool.map(kernels.nvcc_compile, params))
    names = {
        n
        for spec in (*ENGINE_KERNELS.values(), *kernels.NEARFAR_KERNELS.values())
        for n in spec.cuda_names.values()
    }
    solver = kernels.CLUSTER_KERNELS["solve"].cuda_name().encode()
    batch = kernels.CLUSTER_BATCH_KERNEL.cuda_name().encode()
    sweep = kernels.PHAST_KERNELS["sweep"].cuda_name().encode()
    for p, cubin in zip(params, cubins, strict=True):
        assert cubin[:4] == b"\x7fELF", p.key
        for name in names:
            assert name.encode() in cubin, (p.key, name)
        assert (sweep in cubin) == (not p.floating), p.key  # PHAST: integer distances only
        # The one-source kernel in the cluster builds, the batch kernel instead in the batch ones.
        assert (solver in cubin) == bool(p.cluster and not p.many), p.key
        assert (batch in cubin) == p.many, p.key


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_compile_error_keeps_log(monkeypatch):
    monkeypatch.setattr(kernels, "source", lambda file=kernels.SOURCE_FILE: "this is not CUDA")
    with pytest.raises(KernelCompileFailure) as info:
        kernels.nvcc_compile(CompileParams())
    assert info.value.log and "-arch=sm_90" in info.value.options


def test_cluster_placement_bands():
    """cluster_placement puts the order's nodes in consecutive runs of slots, one run per block,
    and place / slots invert each other; cluster_block_edges then counts the runs' edges."""
    import numpy as np

    n, blocks = 1000, 4
    order = np.random.default_rng(3).permutation(n)
    place, slots = kernels.cluster_placement(order, blocks)
    nb = kernels.cluster_slots(n, blocks)
    assert place.dtype == slots.dtype == np.int32 and slots.size == blocks * nb
    owner, loc = place >> 16, place & 0xFFFF
    assert np.array_equal(slots[owner * nb + loc], np.arange(n))  # every node in its slot
    assert np.array_equal(owner[order], np.arange(n) // nb)  # runs of the order, block by block
    assert np.count_nonzero(slots >= 0) == n
    degrees = np.arange(n)
    assert kernels.cluster_block_edges(degrees, blocks, order) == max(
        int(degrees[order[r * nb : (r + 1) * nb]].sum()) for r in range(blocks)
    )
    assert kernels.cluster_block_edges(degrees, blocks) == max(
        int(degrees[r::blocks].sum()) for r in range(blocks)
    )
    with pytest.raises(ValueError, match="slots"):
        kernels.cluster_placement(np.arange(2 * kernels.CLUSTER_MAX_SLOTS + 1), 1)
    # the local queue's entries (slot and distance) and its queued bits cost shared memory, so
    # fewer graphs stay resident
    assert (
        kernels.cluster_smem_bytes(n, blocks, lq=1024)
        == kernels.cluster_smem_bytes(n, blocks) + 4 * (nb // 32) + 8 * 1024
    )


def test_band_order_keeps_a_grids_edges_inside_the_blocks():
    """The fused cluster loop's order (reverse Cuthill-McKee, sssp.bands.band_order) is a
    permutation whose bands keep most of a grid's edges in one block even when the node ids are
    shuffled, where spreading the nodes v % C keeps almost none (CPU only: no GPU needed)."""
    import numpy as np

    import sssp
    from sssp.bands import band_locality, band_order

    side, blocks = 100, 16
    idx = np.random.default_rng(5).permutation(side * side).reshape(side, side)
    u = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    v = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    grid = sssp.Graph.from_edges(
        side * side, np.concatenate([u, v]), np.concatenate([v, u]), np.ones(2 * u.size, int)
    )
    order = band_order(grid)
    assert np.array_equal(np.sort(order), np.arange(grid.n))
    place, _ = kernels.cluster_placement(order, blocks)
    src = np.repeat(np.arange(grid.n), np.diff(grid.indptr))
    owner = place >> 16
    assert np.mean(owner[src] == owner[grid.indices]) > 0.85  # 16 diagonal bands of ~6 rows
    assert np.mean(src % blocks == grid.indices % blocks) < 0.2
    assert band_locality(grid, blocks, order) == np.mean(owner[src] == owner[grid.indices])
    assert np.isnan(
        band_locality(
            sssp.Graph.from_edges(3, np.array([], int), np.array([], int), np.array([], int))
        )
    )


def test_cluster_layout_prefers_the_graph_in_shared_memory():
    """The cluster solver's plan: the fewest blocks that hold distances and graph, else the fewest
    that hold the distances, else none (the persistent loop runs)."""
    import numpy as np

    budget = 232448 - kernels.CLUSTER_STATIC_SMEM  # the H200's opt-in shared memory per block
    mesh = np.full(10_000, 6)
    blocks, mb = kernels.cluster_layout(mesh, budget)
    assert mb == kernels.cluster_block_edges(mesh, blocks) > 0
    assert kernels.cluster_smem_bytes(10_000, blocks, mb=mb) <= budget
    assert blocks == 1 or kernels.cluster_smem_bytes(10_000, blocks // 2, mb=mb * 2) > budget
    assert kernels.cluster_layout(mesh, budget, at_least=16) == (
        16,
        kernels.cluster_block_edges(mesh, 16),
    )
    road = np.full(435_000, 2)  # a road network: only the distances fit, in 16 blocks
    assert kernels.cluster_layout(road, budget) == (16, 0)
    assert kernels.cluster_layout(road, budget, largest=8) is None
    assert kernels.cluster_layout(np.full(3_000_000, 2), budget) is None
    assert (
        kernels.cluster_slots(10_000, 16) % 32 == 0
        and kernels.cluster_slots(10_000, 16) * 16 >= 10_000
    )
    with pytest.raises(KernelContractError):
        kernels.EngineParams(64, 32, False, "out", 8, False, 4)  # the cluster solver is 32-bit only
    with pytest.raises(KernelContractError):
        kernels.EngineParams(32, 32, False, "out", 8, False, 3)


def test_phast_core_configuration():
    """``LaunchConfig.core``: the phast loop's only, 0 to ``CORE_NODES_MAX``, stored in the
    options when set (a record without it has none) and shown in the text."""
    from sssp.config import CORE_NODES_MAX, ConfigError, LaunchConfig

    cfg = LaunchConfig(loop="phast", core=1024)
    assert cfg.options()["core"] == 1024 and "core<=1024" in str(cfg)
    assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg
    plain = LaunchConfig(loop="phast")
    assert "core" not in plain.options() and "core" not in str(plain)
    assert LaunchConfig.from_parts(plain.as_dict(), {"loop": "phast"}).core == 0
    assert LaunchConfig(loop="phast", core=CORE_NODES_MAX).core == CORE_NODES_MAX
    for bad in (-1, CORE_NODES_MAX + 1, 1.0, "8", True, None):
        with pytest.raises(ConfigError, match="core .* is invalid"):
            LaunchConfig(loop="phast", core=bad)
    with pytest.raises(ConfigError, match="core applies to the phast loop"):
        LaunchConfig(loop="cluster", core=512)


def test_cluster_loop_configuration():
    import numpy as np

    from sssp.config import ConfigError, LaunchConfig

    cfg = LaunchConfig(loop="cluster", cluster=16)
    assert cfg.options() == {
        "loop": "cluster",
        "blocks_per_sm": 2,
        "local_limit": -1,
        "cluster": 16,
        "fuse": 0,
    }
    fused = LaunchConfig(loop="cluster", fuse=True)
    assert LaunchConfig.from_parts(fused.as_dict(), fused.options()) == fused and "fused" in str(
        fused
    )
    assert (
        LaunchConfig.from_parts(cfg.as_dict(), {"loop": "cluster", "cluster": 16}) == cfg
    )  # stored before fusion
    with pytest.raises(ConfigError, match="fuse applies to the cluster loop"):
        LaunchConfig(loop="persistent", fuse=True)
    assert LaunchConfig(loop="cluster", fuse=1) == fused  # True and 1 are one level
    across = LaunchConfig(loop="cluster", fuse=2)
    assert across.options()["fuse"] == 2 and "fused across blocks" in str(across)
    assert LaunchConfig.from_parts(across.as_dict(), across.options()) == across
    for bad in (3, -1, 1.0, "1", None):
        with pytest.raises(ConfigError, match="fuse must be"):
            LaunchConfig(loop="cluster", fuse=bad)
    road = np.full(
        435_000, 2
    )  # 16 blocks still hold a road network's distances with the local queues
    assert kernels.cluster_layout(
        road,
        232448 - kernels.CLUSTER_STATIC_SMEM,
        lq=kernels.CLUSTER_LOCAL_QUEUE,
        order=np.arange(435_000),
    ) == (16, 0)
    assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg
    assert "cluster>=16" in str(cfg) and "cluster>=fit" in str(LaunchConfig(loop="cluster"))
    with pytest.raises(ConfigError, match="cluster 3"):
        LaunchConfig(loop="cluster", cluster=3)


def test_contract_header_is_the_python_contract():
    """The committed header is what the Python contract emits now (regenerate it with
    ``python -m kernels`` after changing a shared size), and every value it defines is the
    module constant of that name."""
    text = (Path(kernels.__file__).with_name(kernels.CONTRACT_HEADER)).read_text(encoding="utf-8")
    assert text == kernels.contract_header()
    defined = dict(re.findall(r"^#define (SSSP_\w+) (\S+)$", text, flags=re.M))
    assert int(defined["SSSP_CTRL_PHASE"]) == kernels.CTRL_PHASE
    assert int(defined["SSSP_CTRL_DONE"]) == kernels.CTRL_DONE
    assert int(defined["SSSP_CTRL_ABORT"]) == kernels.CTRL_ABORT
    assert int(defined["SSSP_RES_REACHED"]) == kernels.RES_REACHED
    assert int(defined["SSSP_NO_PRED"].rstrip("u"), 16) == kernels.NO_PRED
    assert int(defined["SSSP_UNREACHABLE_I64"].rstrip("l"), 16) == kernels.UNREACHABLE_INT64
    # 64-bit summary words start on even words (the host reads them as uint64).
    for word in (
        kernels.RES_REACHED,
        kernels.RES_FLAT,
        kernels.RES_FRONTIER_SUM,
        kernels.RES_FRINGE_SUM,
        kernels.RES_NF + kernels.NF_UPDATES,
    ):
        assert word % 2 == 0 and word + 1 < kernels.RESULT_WORDS
    assert kernels.RES_NF + kernels.NEARFAR_WORDS <= kernels.RES_REACHED
    assert kernels.RES_CTRL + kernels.CTRL_WORDS <= kernels.RES_NF


@pytest.mark.parametrize("file", [ENGINE_SOURCE_FILE, kernels.RESULT_SOURCE_FILE, "sssp_wide.cu"])
def test_every_module_takes_the_shared_words_from_the_contract_header(file):
    """Each module is compiled after the contract header and spells none of its values itself:
    no source part redefines a name of the header, and no control word is a bare number
    (``ctrl[4]``, ``ctrl + 5``, ``sssp_ldcg(ctrl)``)."""
    parts = kernels.SOURCE_PARTS[file]
    assert parts[0] == kernels.CONTRACT_HEADER
    root = Path(kernels.__file__).parent
    names = set(kernels.contract_defines())
    raw = re.compile(
        r"\bctrl\s*\[\s*\d|\bctrl\s*\+\s*\d|\*\s*\)\s*ctrl\s*\)\s*\[\s*\d|ldcg\(ctrl\)|stcg\(ctrl,"
    )
    for part in parts[1:]:
        code = re.sub(r"//[^\n]*", "", (root / part).read_text(encoding="utf-8"))
        redefined = set(re.findall(r"^\s*#define (\w+)", code, flags=re.M)) & names
        assert not redefined, (part, sorted(redefined))
        assert not raw.findall(code), (part, raw.findall(code))


def test_result_pass_arguments_match_the_source():
    src = kernels.source(kernels.RESULT_SOURCE_FILE)
    sig = src[src.index("sssp_result(") : src.index(")", src.index("sssp_result("))]
    names = [tok.strip().split()[-1].lstrip("*") for tok in sig[len("sssp_result(") :].split(",")]
    assert tuple(names) == kernels.RESULT_ARGS
    assert len(kernels.RESULT_KERNEL.arg_format) == len(kernels.RESULT_ARGS)
    assert kernels.digest(kernels.RESULT_SOURCE_FILE) != kernels.digest(ENGINE_SOURCE_FILE)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_result_pass_compiles_for_sm90():
    cubin = kernels.nvcc_compile(kernels.ResultParams())
    assert cubin[:4] == b"\x7fELF" and b"sssp_result" in cubin


def test_result_pass_grid():
    assert kernels.result_blocks(1, 132) == 1
    assert kernels.result_blocks(256 * 10, 132) == 10
    assert kernels.result_blocks(10**8, 132) == 4 * 132


def test_wide_loop_arguments_match_the_source():
    src = kernels.source(kernels.WIDE_SOURCE_FILE)
    common = src[src.index("#define SSSP_W_ARGS") : src.index("__device__")]
    names = [t.split()[-1].lstrip("*") for t in re.sub(r"\\\n", " ", common).split(",")]
    names[0] = names[0].split()[-1]
    for name, spec in kernels.WIDE_KERNELS.items():
        start = src.index(f"{spec.cuda_name()}(")
        sig = src[start + len(spec.cuda_name()) + 1 : src.index(")", start)]
        args = [tok.strip().split()[-1].lstrip("*") for tok in sig.split(",")]
        if args[0] == "SSSP_W_ARGS":
            args = [*names, *args[1:]]
        assert tuple(args) == spec.args, name
        assert len(spec.arg_format) == len(spec.args), name
    assert kernels.digest(kernels.WIDE_SOURCE_FILE) != kernels.digest(ENGINE_SOURCE_FILE)
    # Its words fit in what the module allocates, and the 64-bit sum is word-aligned.
    assert kernels.W_SUM % 2 == 0 and kernels.W_SUM + 1 < kernels.WIDE_WORDS
    assert kernels.W_BUCKET < kernels.W_SUM < kernels.W_DELTA < kernels.WIDE_WORDS
    # Every word its own index (the 64-bit sum takes two), and the moves distinct values.
    moves = ("STEP", "RAISE", "DONE", "HEAVY")
    index = [v for k, v in kernels._wide_words().items() if k not in (*moves, "WORDS", "BLOCK")]
    assert len(set(index)) == len(index) and kernels.W_SUM + 1 not in index
    assert len({getattr(kernels, f"W_{m}") for m in moves}) == len(moves)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize(
    "params",
    [
        kernels.WideParams(),
        kernels.WideParams(batch=1, hub_degree=32, chunk=32),
        kernels.WideParams(batch=8, hub_degree=1024, chunk=4096, min_blocks=8),
        kernels.WideParams(split=False),
        kernels.WideParams(batch=1, hub_degree=32, chunk=32, split=False),
    ],
    ids=lambda p: p.key,
)
def test_wide_loop_compiles_for_sm90(params):
    cubin = kernels.nvcc_compile(params)
    for spec in kernels.WIDE_KERNELS.values():
        assert spec.cuda_name().encode() in cubin


def test_wide_params_are_checked():
    with pytest.raises(kernels.KernelContractError, match="batch 3"):
        kernels.WideParams(batch=3)
    with pytest.raises(kernels.KernelContractError, match="hub degree 2048 and chunk 1024"):
        kernels.WideParams(hub_degree=2048)
    assert "-DSSSP_W_CHUNK=1024" in kernels.WideParams().nvcc_flags()
    assert "-DSSSP_W_SPLIT=1" in kernels.WideParams().nvcc_flags()  # the split is the default
    assert kernels.WideParams().key.endswith("-s1")
    assert "-DSSSP_W_SPLIT=0" in kernels.WideParams(split=False).nvcc_flags()


def test_hub_capacity_counts_chunks():
    import numpy as np

    from sssp.gpu.wide import hub_capacity

    deg = np.array([0, 256, 257, 1024, 1025, 5000])
    indptr = np.concatenate([[0], np.cumsum(deg)])
    assert hub_capacity(indptr) == 1 + 1 + 2 + 5
    assert hub_capacity(indptr, kernels.WideParams(hub_degree=1024, chunk=4096)) == 1 + 2
    assert hub_capacity(np.array([0, 3, 5])) == 1  # never an empty allocation


def test_phast_sweep_arguments_match_the_source():
    """The sweep takes the arguments its spec names, in order, with a format of the same
    length; the top-level rule stops at the first level too wide for a block or for the room."""
    src = kernels.source(ENGINE_SOURCE_FILE)
    block = src[
        src.index("#define SSSP_PH_ARGS") + len("#define SSSP_PH_ARGS") : src.index(
            "#if !SSSP_FLOAT"
        )
    ]
    names = [tok.replace("\\", " ").split()[-1].lstrip("*") for tok in block.split(",")]
    assert tuple(names) == kernels.PHAST_ARGS
    spec = kernels.PHAST_KERNELS["sweep"]
    assert len(spec.arg_format) == len(spec.args) and spec.grid == "resident"
    assert kernels.PHAST_KERNELS["tree"] is kernels.NEARFAR_KERNELS["tree"]
    top = kernels.phast_top_levels
    assert top([1, 2, 3, 2000, 5], 4, 1 << 20) == 3
    assert top([1, 2, 3, 4], 4, 4 * 6) == 3  # 1 + 2 + 3 distances fill 24 bytes
    assert top([1024, 1024], 8, 1 << 20, block=1024) == 2
    assert top([], 4, 100) == 0 and top([10], 4, 0) == 0


def test_cluster_kernels_arguments_match_the_source():
    """The one-source cluster kernel and its batch build take the arguments their specs name,
    in that order (engine 2's common ones first), with a pycuda format of the same length."""
    src = kernels.source(ENGINE_SOURCE_FILE)
    for spec in (kernels.CLUSTER_KERNELS["solve"], kernels.CLUSTER_BATCH_KERNEL):
        start = src.index(f"{spec.cuda_name()}(SSSP_ARGS,")
        sig = src[start : src.index(")", start)].split("SSSP_ARGS,")[1]
        args = [tok.strip().split()[-1].lstrip("*") for tok in sig.split(",")]
        args = ["delta" if a == "delta_bits" else a for a in args]  # the spec's name for Δ's bits
        assert tuple(args) == spec.args[len(kernels.ENGINE_ARGS) :], spec.name
        assert len(spec.arg_format) == len(spec.args), spec.name
    # The batch's job counter sits after k summaries of whole 64-bit-aligned words.
    assert kernels.RESULT_WORDS % 2 == 0 and kernels.RES_REACHED % 2 == 0


def test_batch_kernel_configuration():
    """The many-source choices ride in a launch configuration: stored in its options only when
    chosen (records without them read as before), read back, shown, and checked."""
    from sssp.config import ConfigError, LaunchConfig

    plain = LaunchConfig(loop="cluster")
    assert "batch_cluster" not in plain.options() and "batch" not in str(plain)
    for cfg in (
        LaunchConfig(loop="persistent", batch_cluster=4),
        LaunchConfig(loop="cluster", fuse=True, batch_cluster=2, batch_block=512),
        LaunchConfig(loop="wide", batch_block=256),
    ):
        assert LaunchConfig.from_parts(cfg.as_dict(), cfg.options()) == cfg
    chosen = LaunchConfig(loop="cluster", batch_cluster=2, batch_block=512)
    assert chosen.options()["batch_cluster"] == 2 and chosen.options()["batch_block"] == 512
    assert "batch=2x512" in str(chosen) and "batch=fitx256" in str(LaunchConfig(batch_block=256))
    for bad, match in (
        ({"batch_cluster": 3}, "batch_cluster 3"),
        ({"batch_cluster": True}, "batch_cluster True"),
        ({"batch_block": 100}, "batch_block 100"),
        ({"batch_block": 2048}, "batch_block 2048"),
        ({"batch_block": False}, "batch_block False"),
    ):
        with pytest.raises(ConfigError, match=match):
            LaunchConfig(**bad)
