"""The ``tune`` command line: subcommands, usage errors, outputs, provenance, broken pipes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tuner.cli import COMMANDS, build_parser, main
from tuning_db import Store

pytestmark = pytest.mark.timeout(300)

SHIPPED = Path(__file__).resolve().parents[1] / "tuning_db" / "data" / "h200.json"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """A file database holding the shipped H200 results."""
    path = tmp_path_factory.mktemp("tune") / "t.sqlite"
    store = Store(f"sqlite:///{path}", seed=False)
    store.import_json(SHIPPED)
    store.close()
    return f"sqlite:///{path}"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def usage_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err
    return err


@pytest.mark.parametrize("command", COMMANDS)
def test_each_subcommand_has_its_own_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: tune {command}")


def test_top_level_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert f"\n    {command} " in out
    assert "examples:" in out and "tune --graph-class deg200 --size 49k" in out


def test_every_option_has_help_text():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and "run" in a.choices)
    for p in [parser, *sub.choices.values()]:
        for action in p._actions:
            if action.option_strings:
                assert action.help, f"{p.prog} {action.option_strings} has no help text"


def test_typo_gets_a_suggestion(capsys):
    err = usage_error(capsys, "reprot")
    assert "did you mean 'report'?" in err
    err = usage_error(capsys, "report", "--format", "htlm")
    assert "did you mean 'html'?" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--graph-class", "deg200"],  # no --size
        ["--graph-class", "deg3", "--size", "49k"],  # not a degree class
        ["--all", "--size", "12q"],  # bad size
        ["run", "--all", "--device", "gpu0"],  # --device is an ordinal
        ["run", "--all", "--sources", "0"],
        ["run", "--all", "--seed", "-1"],
        ["run", "--all", "--budget", "10"],  # budget without tpe
        ["export"],  # -o is required
        [],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    usage_error(capsys, *argv)


def test_form_without_a_verb_means_run(capsys):
    # Same parse as `tune run ...`: the old spelling keeps working.
    from tuner.cli import _with_default_command

    assert _with_default_command(["--graph-class", "deg200", "--size", "49k"])[0] == "run"
    assert _with_default_command(["report"]) == ["report"]
    assert _with_default_command(["--db", "x", "report"]) == ["--db", "x", "report"]


def test_tuning_without_a_gpu_is_one_clear_line(capsys, tmp_path):
    from sssp.gpu import is_available

    if is_available():
        pytest.skip("a GPU is usable here")
    rc, out, err = run(
        capsys,
        "--graph-class",
        "deg2",
        "--size",
        "24k",
        "--db",
        f"sqlite:///{tmp_path / 'x.sqlite'}",
    )
    assert rc == 1 and out == ""
    assert err.startswith("tune: error: tuning needs a CUDA GPU") and "--replay" in err
    assert len(err.strip().splitlines()) == 1


def test_report_names_device_date_and_that_results_are_recorded(db, capsys):
    rc, out, err = run(capsys, "report", "--db", db)
    assert rc == 0 and err == ""
    assert "as in the paper's Table 1" in out and "End-to-end median solve time" in out
    assert "device: NVIDIA H200 (driver 580.159.04, CUDA 13.0)" in out
    assert "stored: 2026-11-30" in out
    assert "results: recorded, read from the tuning database sqlite:" in out
    assert "report made: " in out


def test_report_csv_reads_back_with_pandas(db, capsys):
    pd = pytest.importorskip("pandas")
    rc, out, _ = run(capsys, "report", "--db", db, "--format", "csv")
    assert rc == 0
    df = pd.read_csv(io.StringIO(out))
    assert len(df) == 12 and set(df["results"]) == {"recorded"}  # one row per record
    assert df["speedup"].dtype == float and df["kept_default"].dtype == bool
    # the shipped 98k/deg200 record: 1.89x, as the README states
    row = df[(df["size"] == "98k") & (df["degree"] == "deg200")].iloc[0]
    assert round(row["speedup"], 2) == 1.89


@pytest.mark.parametrize(
    ("name", "marker"),
    [
        ("t.html", "<!DOCTYPE html>"),
        ("t.tex", r"\begin{document}"),
        ("t.csv", "device,device_uuid"),
        ("t.md", "| size | kernel |"),
    ],
)
def test_output_file_format_follows_its_suffix(db, capsys, tmp_path, name, marker):
    path = tmp_path / name
    rc, out, err = run(capsys, "report", "--db", db, "-o", str(path))
    assert rc == 0 and out == "" and f"wrote {path}" in err
    text = path.read_bytes().decode("utf-8")
    assert marker in text
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left


def test_show_filters_by_device_name(db, capsys):
    rc, out, _ = run(capsys, "show", "--db", db, "--device-name", "h200")
    assert rc == 0 and out.count("| NVIDIA H200 |") == 12
    rc, _, err = run(capsys, "show", "--db", db, "--device-name", "V100")
    assert rc == 1 and "'V100'" in err and "NVIDIA H200" in err


def test_export_then_import_round_trip(db, capsys, tmp_path):
    out_json = tmp_path / "e.json"
    rc, _, _ = run(capsys, "export", "--db", db, "-o", str(out_json))
    assert rc == 0 and json.loads(out_json.read_text())
    other = f"sqlite:///{tmp_path / 'other.sqlite'}"
    rc, _, err = run(capsys, "import", str(out_json), "--db", other)
    assert rc == 0 and "imported" in err
    a = run(capsys, "report", "--db", db, "--format", "csv")[1]
    b = run(capsys, "report", "--db", other, "--format", "csv")[1]
    assert a == b


@pytest.mark.parametrize("model", ["H200", "H100"])
def test_export_of_a_gpu_model_gives_back_its_shipped_engine_records(capsys, tmp_path, model):
    """The shipping workflow: a database holding every shipped file, exported for one GPU
    model's engine records without trials, holds what the package ships for it."""
    from tuning_db import export as export_mod

    url = f"sqlite:///{tmp_path / 'all.sqlite'}"
    with Store(url, seed=False) as store:
        store.seed_from_package()
    out = tmp_path / f"{model.lower()}-engine2.json"
    argv = ["export", "--db", url, "--device-name", model, "--kernel", "engine", "--no-trials"]
    argv.append("--newest")
    rc, _, err = run(capsys, *argv, "-o", str(out))
    assert rc == 0 and "wrote" in err
    shipped = dict(export_mod.shipped_exports())[out.name]

    def content(doc: dict) -> tuple:
        bests = sorted(json.dumps({**b, "run": None}, sort_keys=True) for b in doc["best"])
        runs = sorted(json.dumps({**r, "id": None}, sort_keys=True) for r in doc["runs"])
        return sorted(d["uuid"] for d in doc["devices"]), bests, runs

    assert content(json.loads(out.read_text())) == content(json.loads(shipped))
    none = str(tmp_path / "none.json")
    rc, out_text, err = run(capsys, "export", "--db", url, "--device-name", "B200", "-o", none)
    assert rc == 1 and out_text == "" and "no GPU called 'B200'" in err
    assert len(err.strip().splitlines()) == 1 and not Path(none).exists()
    assert "invalid choice" in usage_error(capsys, "export", "--kernel", "relax", "-o", "x.json")


def test_export_newest_keeps_one_record_of_a_class_per_gpu_model(capsys, tmp_path):
    """Two cards of one model searched the same class: ``--newest`` exports the later search
    only (what a lookup on a third card takes), without it both."""
    import dataclasses
    import datetime as dt

    from tuning_db.records import DeviceRecord

    url = f"sqlite:///{tmp_path / 'two.sqlite'}"
    with Store(url, seed=False) as store:
        store.seed_from_package()
        record = next(r for r in store.all_best() if r.device.name == "NVIDIA H200")
        other = DeviceRecord(**{**dataclasses.asdict(record.device), "uuid": "GPU-other-card"})
        later = record.updated_at + dt.timedelta(days=1)
        store.put_best(dataclasses.replace(record, device=other, updated_at=later))

    def cards(*extra: str) -> list[str]:
        """The cards of the exported records of ``record``'s class, algorithm and variant."""
        out = tmp_path / "e.json"
        argv = ["export", "--db", url, "--device-name", "H200", "--kernel", "engine"]
        rc, _, _ = run(capsys, *argv, "--no-trials", *extra, "-o", str(out))
        assert rc == 0
        slot = (dataclasses.asdict(record.graph_class), record.algorithm, record.variant)
        return sorted(
            b["device"]
            for b in json.loads(out.read_text())["best"]
            if (b["graph_class"], b["algorithm"], b["variant"]) == slot
        )

    assert cards() == sorted([record.device.uuid, "GPU-other-card"])
    assert cards("--newest") == ["GPU-other-card"]


def test_import_shipped_brings_newer_records_into_an_older_database(capsys, tmp_path):
    """A database seeded by an older version holds an older record of a class: ``tune import
    --shipped`` replaces it with the shipped one (newer), and keeps what is as new."""
    import dataclasses
    import datetime as dt

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    with Store(url, seed=False) as store:
        store.seed_from_package()
        shipped = {(str(r.graph_class), r.algorithm): r for r in store.all_best()}
        record = next(r for r in shipped.values() if "many.sources" in r.options)
        older = dataclasses.replace(
            record,
            options={k: v for k, v in record.options.items() if not k.startswith("many.")},
            updated_at=record.updated_at - dt.timedelta(days=2),
        )
        store.put_best(older)
    rc, _, err = run(capsys, "import", "--shipped", "--db", url)
    assert rc == 0 and "imported 1 records from the shipped results" in err
    with Store(url) as store:
        back = {(str(r.graph_class), r.algorithm): r for r in store.all_best()}
    assert back == shipped
    assert usage_error(capsys, "import", "--db", url)
    assert "not allowed" in usage_error(capsys, "import", "f.json", "--shipped", "--db", url)


def test_unwritable_default_database_folder_says_what_to_set(capsys, monkeypatch, tmp_path):
    # A HOME that cannot hold folders (a regular file): works even when the tests run as root.
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("SSSP_TUNING_DB", raising=False)
    rc, out, err = run(capsys, "report")
    assert rc == 1 and out == ""
    assert "SSSP_TUNING_DB" in err and "--db" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def _tune(*argv: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    return subprocess.Popen(
        [sys.executable, "-m", "tuner.cli", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )


def test_broken_pipe_exits_quietly(db):
    proc = _tune("report", "--db", db)
    proc.stdout.close()  # the reader goes away before anything is written (as `| head -0`)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path):
    # Replay of one class writes its summary and nothing else: no tqdm "\r" updates in a log.
    # All three kernels: a partial replay into an empty database has no recorded figures to store.
    proc = _tune(
        "--replay",
        "--graph-class",
        "deg2",
        "--size",
        "24k",
        "--db",
        f"sqlite:///{tmp_path / 'r.sqlite'}",
    )
    out, err = (s.decode() for s in proc.communicate(timeout=240))
    assert proc.returncode == 0, err
    assert "\r" not in err and "cfg" not in err
    assert "24k/deg2 [REPLAY of recorded measurements]" in out
    assert "device: NVIDIA H200" in out and "stored: " in out
    assert "results: replayed now from recorded Kernel Tuner measurements" in out


def test_device_names_from_the_database_are_printed_escaped(capsys, tmp_path):
    import datetime as dt

    from sssp.classes import GraphClass
    from sssp.config import LaunchConfig
    from tuning_db.records import BestRecord, DeviceRecord, KernelVersionRecord

    url = f"sqlite:///{tmp_path / 'evil.sqlite'}"
    store = Store(url, seed=False)
    cfg = LaunchConfig.default()
    store.put_best(
        BestRecord(
            device=DeviceRecord("GPU\x1b[2J\x07", "GPU-e", "9.0", 1, "1", "1"),
            kernel_version=KernelVersionRecord("abc"),
            graph_class=GraphClass("24k", "deg2"),
            algorithm="crauser",
            variant="successors",
            config=cfg,
            tuned_config=cfg,
            tuned_median_ms=1.0,
            default_median_ms=1.0,
            speedup=1.0,
            n_sources=20,
            kept_default=True,
            updated_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        )
    )
    store.close()
    for fmt in ("md", "csv"):
        rc, out, _ = run(capsys, "show", "--db", url, "--format", fmt)
        assert rc == 0 and "\x1b" not in out and "\x07" not in out
        assert "GPU\\x1b[2J\\x07" in out


def test_report_on_an_ascii_terminal_does_not_crash(db):
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    proc = subprocess.run(
        [sys.executable, "-m", "tuner.cli", "report", "--db", db],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"\\u2014" in proc.stdout or b"\\xd7" in proc.stdout  # "—" / "×", escaped
