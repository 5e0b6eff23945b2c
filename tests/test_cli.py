"""The ``sssp`` command line, run in-process through ``main(argv)`` and once as a real process."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import sssp
from sssp.cli import main

pytestmark = pytest.mark.timeout(300)

N, DEGREE, SEED = 2048, 20, 3


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "g.npz"
    assert (
        main(
            [
                "generate",
                "random",
                "--size",
                str(N),
                "--degree",
                str(DEGREE),
                "--seed",
                str(SEED),
                "-o",
                str(path),
            ]
        )
        == 0
    )
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def pairs(out: str) -> dict[str, str]:
    """The ``key  value`` lines of a text summary (keys may contain single spaces)."""
    return dict(
        re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.splitlines() if line.strip()
    )


def test_generate_writes_the_generated_graph(graph_file, capsys):
    loaded = sssp.load(graph_file)
    assert loaded == sssp.generate("random", size=N, degree=DEGREE, seed=SEED)
    # nothing but the graph is left in the folder (no temporary file)
    assert sorted(p.name for p in graph_file.parent.iterdir()) == ["g.npz"]


def test_generate_summary_goes_to_stderr(tmp_path, capsys):
    rc, out, err = run(
        capsys, "generate", "martin", "--size", "1536", "-o", str(tmp_path / "m.npz")
    )
    assert rc == 0 and out == ""
    assert "m.npz" in err and "n=1536" in err and len(err.strip().splitlines()) == 1


def test_info_text(graph_file, capsys):
    rc, out, err = run(capsys, "info", str(graph_file))
    assert rc == 0
    g = sssp.load(graph_file)
    f = g.features()
    fields = pairs(out)
    assert fields["nodes"] == str(N)
    assert fields["edges"] == str(f.m)
    assert fields["class"] == str(g.graph_class())
    assert fields["diameter class"].startswith(sssp.classes.diameter_class(g).label + " (")
    assert fields["format"] == "npz"
    assert fields["weights"] == f"{f.min_weight}..{f.max_weight}"
    assert fields["mean degree"] == f"{f.mean_degree:.3f}"
    assert fields["max degree"] == str(f.max_degree)
    assert fields["sinks"] == str(f.sinks)
    assert "omega mean" in fields and "degree std" in fields
    assert fields["meta.seed"] == str(SEED)


def test_info_json(graph_file, capsys):
    rc, out, _ = run(capsys, "info", str(graph_file), "--json")
    assert rc == 0
    data = json.loads(out)
    g = sssp.load(graph_file)
    assert data["class"] == str(g.graph_class()) == f"{data['size']}/{data['degree']}"
    assert data["features"] == pytest.approx(g.features().as_dict())
    assert data["meta"]["seed"] == SEED
    est = sssp.classes.diameter_class(g)
    assert (data["diameter_class"], data["diameter_hops"], data["diameter_reached"]) == (
        est.label,
        est.hops,
        est.reached,
    )


def test_info_band_locality_for_high_diameter_graphs(graph_file, tmp_path, capsys):
    """A high-diameter graph gets the fused cluster loop's band locality (sssp.bands); a
    low-diameter one, for which fusion is not meant, gets none."""
    from sssp.bands import band_locality

    grid = sssp.generate("grid", size=4096, seed=1)
    path = tmp_path / "grid.npz"
    sssp.save(grid, path)
    rc, out, _ = run(capsys, "info", str(path))
    assert rc == 0
    line = pairs(out)["band locality"]
    assert line.startswith(f"{band_locality(grid):.3f} of the edges inside one of 16 ")
    rc, out, _ = run(capsys, "info", str(path), "--json")
    assert (
        json.loads(out)["band_locality"] == pytest.approx(band_locality(grid))
        and band_locality(grid) > 0.8
    )
    rc, out, _ = run(capsys, "info", str(graph_file), "--json")
    assert (
        json.loads(out)["diameter_class"] == "lowdiam" and json.loads(out)["band_locality"] is None
    )
    assert "band locality" not in pairs(run(capsys, "info", str(graph_file))[1])


def test_info_weights_option_reassigns_weights(graph_file, capsys):
    rc, out, _ = run(capsys, "info", str(graph_file), "--weights", "unit", "--json")
    assert rc == 0
    f = json.loads(out)["features"]
    assert f["min_weight"] == f["max_weight"] == 1


def test_solve_roundtrip_matches_library(graph_file, tmp_path, capsys):
    dist_file = tmp_path / "dist.npy"
    rc, out, err = run(
        capsys, "solve", str(graph_file), "--source", "5", "--backend", "cpu", "-o", str(dist_file)
    )
    assert rc == 0, err
    expected = sssp.solve(sssp.load(graph_file), 5, backend="cpu")
    got = np.load(dist_file)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected.dist)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist.npy"]
    fields = pairs(out)
    assert fields["algorithm"] == f"{expected.algorithm}/successors"  # the CPU default rule
    assert fields["backend"] == "cpu"
    assert fields["iterations"] == str(expected.iterations)
    assert fields["time"].endswith(" ms")
    reached = int(expected.reached.sum())
    assert fields["reached"] == f"{reached} / {N}"
    assert fields["max dist"] == str(int(expected.dist[expected.reached].max()))


@pytest.mark.parametrize("variant", ["successors", "predecessors"])
def test_dijkstra_and_crauser_agree(graph_file, tmp_path, capsys, variant):
    files = {}
    for algorithm in ("dijkstra", "crauser", "martin", "near-far"):
        if algorithm in ("dijkstra", "near-far") and variant != "successors":
            continue
        files[algorithm] = tmp_path / f"{algorithm}.npy"
        rc, _, err = run(
            capsys,
            "solve",
            str(graph_file),
            "--algorithm",
            algorithm,
            "--variant",
            variant,
            "--source",
            "11",
            "--backend",
            "cpu",
            "-o",
            str(files[algorithm]),
        )
        assert rc == 0, err
    ref = (
        np.load(tmp_path / "dijkstra.npy")
        if "dijkstra" in files
        else sssp.solve(sssp.load(graph_file), 11, algorithm="dijkstra", backend="cpu").dist
    )
    for path in files.values():
        np.testing.assert_array_equal(np.load(path), ref)


def test_solve_many_sources_json(graph_file, capsys):
    rc, out, _ = run(
        capsys,
        "solve",
        str(graph_file),
        "--sources",
        "4",
        "--seed",
        "1",
        "--backend",
        "cpu",
        "--json",
    )
    assert rc == 0
    data = json.loads(out)
    assert data["backend"] == "cpu" and data["config"] is None
    assert len(data["runs"]) == 4
    g = sssp.load(graph_file)
    sources = [r["source"] for r in data["runs"]]
    assert sources == np.random.default_rng(1).choice(g.n, size=4, replace=False).tolist()
    times = sorted(r["time_ms"] for r in data["runs"])
    assert data["median_ms"] == pytest.approx((times[1] + times[2]) / 2)
    for r in data["runs"]:
        res = sssp.solve(g, r["source"], backend="cpu")
        assert r["iterations"] == res.iterations
        assert r["reached"] == int(res.reached.sum())


def test_solve_many_sources_text(graph_file, capsys):
    rc, out, _ = run(capsys, "solve", str(graph_file), "--sources", "3", "--backend", "cpu")
    assert rc == 0
    assert "median over 3 sources" in out


def test_solve_json_single_source_same_shape(graph_file, capsys):
    rc, out, _ = run(capsys, "solve", str(graph_file), "--backend", "cpu", "--json")
    assert rc == 0
    data = json.loads(out)
    assert [r["source"] for r in data["runs"]] == [0]


def test_malformed_file_is_a_clean_error(tmp_path, capsys):
    bad = tmp_path / "broken.gr"
    bad.write_text("p sp 3 2\na 1 2 5\na 1 oops 7\n")
    for argv in (["info", str(bad)], ["solve", str(bad), "--backend", "cpu"]):
        rc, out, err = run(capsys, *argv)
        assert rc == 1
        assert out == ""
        assert err.startswith("sssp: error: ") and "broken.gr" in err
        assert "Traceback" not in err


def test_debug_shows_traceback(tmp_path, capsys):
    bad = tmp_path / "broken.gr"
    bad.write_text("nonsense\n")
    rc, _, err = run(capsys, "info", str(bad), "--debug")
    assert rc == 1 and "Traceback" in err and "sssp: error: " in err


def test_failed_solve_leaves_no_output_file(graph_file, tmp_path, capsys):
    dist_file = tmp_path / "dist.npy"
    rc, _, err = run(
        capsys,
        "solve",
        str(graph_file),
        "--source",
        str(N + 5),
        "--backend",
        "cpu",
        "-o",
        str(dist_file),
    )
    assert rc == 1 and f"source {N + 5}" in err
    assert list(tmp_path.iterdir()) == []


def test_bad_size_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(
            ["generate", "random", "--size", "12q", "--degree", "2", "-o", str(tmp_path / "x.npz")]
        )
    assert exc.value.code == 2
    assert "'12q'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["solve"],
        ["generate", "random", "--size", "24k", "-o", "x.npz"],  # random needs --degree
        ["solve", "g.npz", "--algorithm", "bellman"],
        ["solve", "g.npz", "--source", "1", "--sources", "2"],
        ["solve", "g.npz", "--sources", "2", "-o", "d.npy"],
        ["solve", "g.npz", "--source", "1.7"],  # a source node is an integer, never rounded
        ["solve", "g.npz", "--source", "True"],
        ["solve", "g.npz", "--device", "gpu0"],  # the CUDA ordinal, as everywhere
        ["solve", "g.npz", "--hierarchy", "sometimes", "--tuned"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


@pytest.fixture
def road_file(tmp_path) -> Path:
    path = tmp_path / "road.npz"
    sssp.save(sssp.generate("road", size=3_000, seed=4), path)
    return path


def test_hierarchy_is_built_into_the_cache_then_found_there(
    road_file, tmp_path, monkeypatch, capsys
):
    """``sssp hierarchy FILE`` builds the graph's contraction hierarchy into the cache, where
    the library (a phast pick of ``solve --tuned``) reads it; a second call finds it there."""
    from sssp.hierarchy import build_hierarchy, cache_path, read_cached

    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path / "cache"))
    rc, out, err = run(capsys, "hierarchy", str(road_file), "--json")
    assert rc == 0 and "building the contraction hierarchy of 3000 nodes" in err
    first = json.loads(out)
    graph = sssp.load(road_file)
    kept = read_cached(graph, cache_path(graph))
    want = build_hierarchy(graph)
    assert kept is not None and first["cache_file"] == str(cache_path(graph))
    assert (first["levels"], first["hierarchy_edges"]) == (want.levels, want.edges)
    assert first["read_from_cache"] is False and first["nodes"] == graph.n
    rc, out, err = run(capsys, "hierarchy", str(road_file))
    text = pairs(out)
    assert rc == 0 and err == "" and text["levels"].startswith(f"{want.levels} ")
    assert text["hierarchy"].startswith("read from the cache")
    # Other weights make another graph: its own hierarchy, its own file.
    rc, out, _ = run(capsys, "hierarchy", str(road_file), "--weights", "random", "--json")
    assert rc == 0 and json.loads(out)["cache_file"] != first["cache_file"]


def test_hierarchy_refuses_real_weights_and_a_cache_that_keeps_nothing(
    tmp_path, monkeypatch, capsys
):
    real = tmp_path / "real.npz"
    g = sssp.generate("road", size=500, seed=1)
    sssp.save(sssp.Graph(g.indptr, g.indices, g.weights + 0.5), real)
    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path / "cache"))
    rc, out, err = run(capsys, "hierarchy", str(real))
    assert rc == 1 and out == "" and "integer weights only" in err and "real.npz" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "cache").exists()
    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", "off")
    rc, out, err = run(capsys, "hierarchy", str(real), "--weights", "unit")
    assert rc == 1 and out == "" and "cache is off" in err and len(err.strip().splitlines()) == 1
    # A cache folder that cannot be made (a file is in the way) is refused before the build.
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path / "a-file" / "cache"))
    rc, out, err = run(capsys, "hierarchy", str(real), "--weights", "unit")
    assert rc == 1 and out == "" and "cannot be written" in err and "building" not in err
    assert len(err.strip().splitlines()) == 1


def test_ctrl_c_stops_a_hierarchy_build_with_130(road_file, tmp_path, monkeypatch, capsys):
    import sssp.hierarchy

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setenv("SSSP_HIERARCHY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sssp.hierarchy, "hierarchy_for", interrupted)
    rc, out, err = run(capsys, "hierarchy", str(road_file))
    assert rc == 130 and out == "" and "Traceback" not in err
    assert not list(tmp_path.glob("cache/*.npz"))


def test_solve_hierarchy_rule_needs_tuned(road_file, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(road_file), "--hierarchy", "build"])
    assert exc.value.code == 2 and "add --tuned" in capsys.readouterr().err


def test_solve_passes_the_hierarchy_rule_to_the_solver(road_file, monkeypatch, capsys):
    module = sys.modules["sssp.solve"]  # the package's ``solve`` attribute is the function
    seen = {}
    real = module.Solver

    def solver(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **{**kwargs, "tuned": False})

    monkeypatch.setattr(module, "Solver", solver)
    for rule, want in ((["--hierarchy", "build"], "build"), ([], "auto")):
        rc, _, _ = run(capsys, "solve", str(road_file), "--backend", "cpu", "--tuned", *rule)
        assert rc == 0 and seen["hierarchy"] == want and seen["tuned"] is True


def test_generate_rejects_non_npz_output(tmp_path, capsys):
    rc, _, err = run(
        capsys, "generate", "random", "--size", "96", "--degree", "2", "-o", str(tmp_path / "g.txt")
    )
    assert rc == 1 and "g.txt" in err and ".npz" in err


def test_gpu_backend_error_is_clean_without_gpu(graph_file, capsys):
    from sssp.gpu import is_available

    if is_available():
        pytest.skip("a GPU is usable here")
    rc, _, err = run(capsys, "solve", str(graph_file), "--backend", "gpu")
    assert rc == 1 and "gpu" in err and "Traceback" not in err


def test_help_has_examples(capsys):
    for argv in (
        ["--help"],
        ["solve", "--help"],
        ["generate", "--help"],
        ["info", "--help"],
        ["hierarchy", "--help"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
        assert "examples:" in capsys.readouterr().out


def test_console_script_in_a_subprocess(graph_file, tmp_path):
    script = shutil.which("sssp", path=os.path.dirname(sys.executable))
    cmds = [[sys.executable, "-m", "sssp"]]
    if script:
        cmds.append([script])
    for cmd in cmds:
        out = subprocess.run(
            [*cmd, "info", str(graph_file), "--json"], capture_output=True, text=True, timeout=240
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["features"]["n"] == N
        bad = subprocess.run(
            [*cmd, "info", str(tmp_path / "missing.graph")],
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert bad.returncode == 1
        assert "missing.graph" in bad.stderr and "Traceback" not in bad.stderr
        assert bad.stdout == ""


def test_logs_go_to_stderr_with_verbose(graph_file, capsys):
    rc, out, err = run(capsys, "-v", "solve", str(graph_file), "--backend", "cpu", "--json")
    assert rc == 0
    json.loads(out)  # stdout holds only the result
    assert "INFO" in err and "loaded" in err
    rc, out, err = run(capsys, "solve", str(graph_file), "--backend", "cpu", "--json")
    assert rc == 0 and "INFO" not in err


# -- conventions and outputs --------------------------------------------------------------------
def test_solve_npz_holds_dist_and_pred(graph_file, tmp_path, capsys):
    out_file = tmp_path / "tree.npz"
    rc, _, _ = run(
        capsys, "solve", str(graph_file), "--source", "7", "--backend", "cpu", "-o", str(out_file)
    )
    assert rc == 0
    want = sssp.solve(sssp.load(graph_file), 7, backend="cpu")
    with np.load(out_file, allow_pickle=False) as z:
        assert int(z["source"]) == 7
        np.testing.assert_array_equal(z["dist"], want.dist)
        np.testing.assert_array_equal(z["pred"], want.pred)
        np.testing.assert_array_equal(z["dist_float"], want.dist_float)
        assert z["pred"].dtype == np.int32 and z["dist_float"].dtype == np.float64


def test_solve_npz_keeps_string_labels_without_a_pickle(tmp_path, capsys):
    """A graph whose nodes are named by strings: ``-o tree.npz`` holds them as unicode, so the
    file reads back with ``allow_pickle=False`` (an object array would need a pickle)."""
    names = np.array(["a", "bb", "c", "dd"], dtype=object)
    graph = sssp.Graph.from_edges(4, [0, 1, 2], [1, 2, 3], [2, 3, 4], labels=names)
    path = tmp_path / "named.npz"
    sssp.save(graph, path)
    out_file = tmp_path / "tree.npz"
    rc, _, err = run(capsys, "solve", str(path), "--backend", "cpu", "-o", str(out_file))
    assert rc == 0, err
    with np.load(out_file, allow_pickle=False) as z:
        assert z["labels"].dtype.kind == "U" and z["labels"].tolist() == names.tolist()
        np.testing.assert_array_equal(z["dist"], [0, 2, 5, 9])


def test_solve_output_suffix_must_be_npy_or_npz(graph_file, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(graph_file), "-o", str(tmp_path / "d.txt")])
    assert exc.value.code == 2 and ".npz" in capsys.readouterr().err


def test_output_through_a_symlink_keeps_the_link(graph_file, tmp_path, capsys):
    real = tmp_path / "real.npy"
    real.write_bytes(b"old")
    link = tmp_path / "link.npy"
    link.symlink_to(real)
    rc, _, _ = run(capsys, "solve", str(graph_file), "--backend", "cpu", "-o", str(link))
    assert rc == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    np.testing.assert_array_equal(
        np.load(real), sssp.solve(sssp.load(graph_file), 0, backend="cpu").dist
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.npy", "real.npy"]


def test_output_to_a_fifo_is_written_not_replaced(graph_file, tmp_path):
    fifo = tmp_path / "dist.npy"
    os.mkfifo(fifo)
    # A reader in another process; the FIFO must still be a FIFO afterwards.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sssp",
            "solve",
            str(graph_file),
            "--backend",
            "cpu",
            "--algorithm",
            "dijkstra",
            "-o",
            str(fifo),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with open(fifo, "rb") as fh:
        data = fh.read()
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    dist = np.load(io.BytesIO(data))
    np.testing.assert_array_equal(dist, sssp.solve(sssp.load(graph_file), 0, backend="cpu").dist)


def test_output_to_a_character_device_is_written_directly(graph_file, capsys):
    rc, _, err = run(capsys, "solve", str(graph_file), "--backend", "cpu", "-o", os.devnull)
    assert rc == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_output_onto_a_folder_is_refused(graph_file, tmp_path, capsys):
    folder = tmp_path / "d.npy"
    folder.mkdir()
    rc, _, err = run(capsys, "solve", str(graph_file), "--backend", "cpu", "-o", str(folder))
    assert rc == 1 and "is a folder" in err and folder.is_dir()


@pytest.mark.parametrize(
    "argv",
    [
        ["--sources", "10000000000"],
        ["--source", "10000000000"],
    ],
)
def test_oversized_requests_are_one_line(graph_file, capsys, argv):
    rc, out, err = run(capsys, "solve", str(graph_file), "--backend", "cpu", *argv)
    assert rc == 1 and out == ""
    assert "10000000000" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("seed", ["-1", "1.5", "x", "1e3"])
def test_bad_seeds_are_usage_errors(graph_file, capsys, seed):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(graph_file), "--seed", seed])
    assert exc.value.code == 2 and repr(seed) in capsys.readouterr().err


def test_typo_in_a_choice_gets_a_suggestion(graph_file, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(graph_file), "--algorithm", "crauserr"])
    assert exc.value.code == 2 and "did you mean 'crauser'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["slove"])
    assert "did you mean 'solve'?" in capsys.readouterr().err


def test_tuned_without_gpu_says_it_is_ignored(graph_file, capsys):
    from sssp.gpu import is_available

    if is_available():
        pytest.skip("a GPU is usable here")
    rc, _, err = run(capsys, "solve", str(graph_file), "--tuned")
    assert rc == 0
    assert "tuned=True is ignored" in err and "no GPU is usable here" in err


def test_strings_from_files_are_printed_escaped(tmp_path, capsys):
    g = sssp.Graph(
        [0, 1, 1],
        [1],
        [3],
        name="evil\x1b[2J\x07name",
        meta={"note": "line\nbreak\x1b]0;title\x07"},
    )
    path = tmp_path / "evil.npz"
    sssp.save(g, path)
    rc, out, _ = run(capsys, "info", str(path))
    assert rc == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[2J\\x07name" in out and "line\\nbreak" in out
    rc, out, _ = run(capsys, "info", str(path), "--json")
    assert "\x1b" not in out and json.loads(out)["name"] == g.name


def test_generate_reports_the_whole_time_and_can_skip_compression(tmp_path, capsys):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    args = ["generate", "random", "--size", "4096", "--degree", "20", "--seed", "1"]
    rc, _, err = run(capsys, *args, "-o", str(a))
    assert rc == 0
    m = re.search(r"\((\d+\.\d+) s: generate (\d+\.\d+) s, write (\d+\.\d+) s\)", err)
    total, gen, write = map(float, m.groups())
    assert total == pytest.approx(gen + write, abs=0.011)
    rc, _, err = run(capsys, *args, "--uncompressed", "-o", str(b))
    assert rc == 0 and "uncompressed" in err
    assert sssp.load(a) == sssp.load(b)
    assert b.stat().st_size > a.stat().st_size  # stored, not deflated


def test_broken_pipe_is_quiet(capsys):
    from sssp.cliutil import EXIT_BROKEN_PIPE, run_command

    def writes_to_a_closed_pipe() -> int:
        raise BrokenPipeError(32, "Broken pipe")

    assert run_command("sssp", writes_to_a_closed_pipe) == EXIT_BROKEN_PIPE
    assert capsys.readouterr().err == ""


def test_memory_and_os_errors_are_one_line(capsys):
    from sssp.cliutil import run_command

    def too_big() -> int:
        raise MemoryError

    def no_home() -> int:
        raise PermissionError(13, "Permission denied", "/home/x/.cache")

    assert run_command("sssp", too_big) == 1
    assert run_command("sssp", no_home) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "sssp: error: out of memory: the request is too large for this machine",
        "sssp: error: Permission denied: /home/x/.cache",
    ]


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_write_progress_only_on_a_terminal(monkeypatch):
    from sssp import cli

    monkeypatch.setattr(cli, "SAVE_PROGRESS_DELAY_S", 0)

    def slow_write(progress):
        for i in range(1, 5):
            progress(i * 50_000, 200_000)
            time.sleep(0.3)

    term = _FakeTerminal()
    monkeypatch.setattr(sys, "stderr", term)
    with cli._write_progress() as progress:
        slow_write(progress)
    assert "write" in term.getvalue() and "kB" in term.getvalue()  # bytes, as they were written
    assert "/195k" in term.getvalue()  # of the total (200 000 B in KiB)

    log = io.StringIO()  # not a terminal: nothing at all
    monkeypatch.setattr(sys, "stderr", log)
    with cli._write_progress() as progress:
        slow_write(progress)
    assert log.getvalue() == ""


def test_every_option_has_help_text():
    from sssp.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and "solve" in a.choices)
    for p in [parser, *sub.choices.values()]:
        for action in p._actions:
            if action.option_strings:
                assert action.help, f"{p.prog} {action.option_strings} has no help text"


def test_solve_reports_the_algorithm_that_ran(graph_file, capsys):
    """--algorithm auto is the tuner's pick on a GPU and the CPU default rule on the CPU (SciPy's
    Dijkstra for this graph, as without --algorithm); the summary names what ran, not what
    was asked for."""
    from sssp.cpu import default_algorithm

    assert default_algorithm(sssp.load(graph_file)) == "dijkstra"
    rc, out, _ = run(
        capsys, "solve", str(graph_file), "--backend", "cpu", "--algorithm", "auto", "--json"
    )
    assert rc == 0 and json.loads(out)["algorithm"] == "dijkstra"
    rc, out, _ = run(capsys, "solve", str(graph_file), "--backend", "cpu", "--json")
    default = sssp.cpu.default_algorithm(sssp.load(graph_file), "successors")
    assert rc == 0 and json.loads(out)["algorithm"] == default  # the CPU default rule
    rc, out, _ = run(
        capsys, "solve", str(graph_file), "--backend", "cpu", "--algorithm", "near-far"
    )
    assert rc == 0 and "near-far/successors" in out


def test_solve_devices_on_the_cpu_is_one_clear_error(graph_file, capsys):
    argv = ["solve", str(graph_file), "--sources", "3", "--backend", "cpu"]
    rc, out, err = run(capsys, *argv, "--devices", "0,1")
    assert rc == 1 and out == "" and "Traceback" not in err
    assert "devices=[0, 1] applies to the GPU backend" in err
    rc, _, err = run(capsys, *argv, "--devices", "1,0,1")
    assert rc == 1 and "device 1 is given twice" in err


@pytest.mark.parametrize("value", ["", "0,", "0,,1", "a", "0,-1", "1.5"])
def test_solve_devices_must_be_a_list_of_ordinals(graph_file, capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(graph_file), "--sources", "3", "--devices", value])
    assert exc.value.code == 2
    assert "--devices" in capsys.readouterr().err


def test_solve_devices_needs_sources(graph_file, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["solve", str(graph_file), "--devices", "0"])
    assert exc.value.code == 2
    assert "add --sources K" in capsys.readouterr().err


@pytest.mark.gpu
def test_solve_devices_json_on_the_gpu(graph_file, capsys):
    from sssp.gpu import is_available
    from sssp.gpu.device import device_count

    if not is_available():
        pytest.skip("no usable CUDA device (pycuda missing or no GPU)")
    devices = ",".join(str(d) for d in range(min(2, device_count())))
    rc, out, _ = run(
        capsys, "solve", str(graph_file), "--sources", "16", "--backend", "gpu",
        "--devices", devices, "--json",
    )  # fmt: skip
    assert rc == 0
    data = json.loads(out)
    assert sum(data["rows_per_device"].values()) == 16 and len(data["runs"]) == 16
    g = sssp.load(graph_file)
    for r in data["runs"]:
        res = sssp.solve(g, r["source"], backend="cpu")
        assert r["reached"] == int(res.reached.sum())
