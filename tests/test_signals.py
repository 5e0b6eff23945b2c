"""One signal policy for every command: SIGINT, SIGTERM and SIGHUP during ``sssp generate``,
``sssp solve`` and ``tune`` (with and without workers) leave no file and no process behind, store
the run under way as interrupted, and exit with 128 + the signal's number and one line. A worker
whose parent is killed outright stops too."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import sssp

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
SSSP = [sys.executable, "-m", "sssp.cli"]
TUNE = [sys.executable, "-m", "tuner.cli"]
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


class Command:
    """A command in a child process whose stderr is collected line by line as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, ready, what: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.proc.poll() is None, f"ended before {what}: {self.lines}"
            assert time.monotonic() < deadline, f"no {what} within {timeout} s: {self.lines}"
            time.sleep(0.02)

    def stop(self, sig: int, timeout: float = 60) -> tuple[int, float, list[str]]:
        """Send ``sig``; (exit status, seconds until the exit, stderr lines)."""
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout)
        seconds = time.monotonic() - t0
        self._reader.join(10)
        return rc, seconds, self.lines


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONWARNINGS": "ignore"}


def _said(lines: list[str]) -> list[str]:
    """stderr without the log lines of ``-v``."""
    return [ln for ln in lines if ": INFO: " not in ln and ": DEBUG: " not in ln]


# -- sssp ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_while_generate_writes_leaves_no_file(sig, tmp_path):
    out = tmp_path / "out" / "g.npz"
    out.parent.mkdir()
    cmd = Command([*SSSP, "generate", "random", "--size", "24k", "--degree", "200", "-o", str(out)])
    cmd.wait_for(lambda: any(out.parent.iterdir()), "temporary file")  # the write has begun
    rc, _, lines = cmd.stop(sig)
    assert rc == 128 + sig, lines
    assert lines == [f"sssp: interrupted by {signal.Signals(sig).name}"]
    assert list(out.parent.iterdir()) == []  # neither the output nor the hidden temporary file


@pytest.fixture(scope="module")
def slow_graph(tmp_path_factory) -> Path:
    """A grid on which the CPU Crauser solve takes well over ten seconds (thousands of phases)."""
    path = tmp_path_factory.mktemp("grid") / "grid.npz"
    sssp.save(sssp.generate("grid", size="393k"), path, compress=False)
    return path


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_inside_a_cpu_solve_ends_it_at_once(sig, slow_graph, tmp_path):
    """Ctrl-C (and the others) inside the compiled solve: within a phase, one line, no -o file;
    the solve would go on for many seconds."""
    out = tmp_path / "dist.npy"
    cmd = Command(
        [
            *SSSP,
            "-v",
            "solve",
            str(slow_graph),
            "--backend",
            "cpu",
            "--algorithm",
            "crauser",
            "-o",
            str(out),
        ]
    )
    cmd.wait_for(lambda: any("loaded" in ln for ln in cmd.lines), "loaded graph")
    time.sleep(1.5)  # into the solve
    rc, seconds, lines = cmd.stop(sig)
    assert rc == 128 + sig, lines
    assert seconds < 3, f"{seconds:.1f} s"
    assert _said(lines) == [f"sssp: interrupted by {signal.Signals(sig).name}"]
    assert list(tmp_path.iterdir()) == []


def test_library_solve_is_interruptible_too(slow_graph):
    """Without the CLI's policy: Python's own KeyboardInterrupt, promptly, and no SystemError."""
    code = textwrap.dedent(f"""
        import os, signal, threading, time, sssp
        g = sssp.load({str(slow_graph)!r})
        threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        t0 = time.monotonic()
        try:
            sssp.solve(g, 0, backend="cpu", algorithm="crauser")
            print("finished")
        except KeyboardInterrupt:
            print("interrupted", round(time.monotonic() - t0 - 2.0, 1))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    word, delay = proc.stdout.split()
    assert word == "interrupted" and float(delay) < 1.5, proc.stdout + proc.stderr
    assert "Error" not in proc.stderr, proc.stderr


def test_stop_flag_ends_the_compiled_loops_between_phases():
    from sssp.cpu import nearfar, parallel

    g = sssp.generate("grid", size="24k")
    stop = parallel.new_stop_flag()
    stop[0] = 1
    dist = parallel._unreached(g)
    _, _, iterations, _ = parallel._solve(
        g.indptr,
        g.indices,
        g.weights,
        g.indptr,
        g.indices,
        g.weights,
        parallel._omega_inf(g),
        parallel._omega_inf(g),
        0,
        1,
        False,
        dist,
        stop,
    )
    assert iterations == 0  # not one phase
    steps = nearfar._solve(
        g.indptr, g.indices, g.weights, 0, np.int64(8), parallel._unreached(g), stop
    )[0]
    assert steps == 0
    # and running to the end when nobody asks it to stop
    r = sssp.solve(g, 0, backend="cpu", algorithm="near-far")
    assert r.iterations > 0 and r.reached.all()


def test_a_signal_inside_atomic_output_removes_the_temporary_file(tmp_path):
    code = textwrap.dedent(f"""
        import os, signal, sys, time
        from pathlib import Path
        from sssp.cliutil import atomic_output, run_command, signal_policy

        def write():
            with atomic_output({str(tmp_path / "x.npy")!r}, ".npy") as tmp:
                Path(tmp).write_bytes(b"half")
                os.kill(os.getpid(), signal.SIGHUP)
                time.sleep(10)
            return 0

        with signal_policy():
            sys.exit(run_command("x", write))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 129 and proc.stderr == "x: interrupted by SIGHUP\n", proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_later_signals_do_not_cut_the_clean_up_short(tmp_path):
    """The first signal is raised; a second one during the clean-up is only noted."""
    code = textwrap.dedent(f"""
        import os, signal, sys, time
        from pathlib import Path
        from sssp.cliutil import run_command, signal_policy

        def work():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(10)
            finally:
                os.kill(os.getpid(), signal.SIGINT)  # lands in the clean-up
                time.sleep(0.2)
                Path({str(tmp_path / "cleaned")!r}).write_text("yes")
            return 0

        with signal_policy():
            sys.exit(run_command("x", work))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 143 and proc.stderr == "x: interrupted by SIGTERM\n", proc.stderr
    assert (tmp_path / "cleaned").read_text() == "yes"


# -- tune ---------------------------------------------------------------------------------------


def _runs(db: Path) -> list[tuple[int, str]]:
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        try:
            return conn.execute("SELECT id, status FROM sssp_tuning_runs ORDER BY id").fetchall()
        except sqlite3.OperationalError:
            return []  # not created yet


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    """Running, not merely a zombie left to a parent that does not reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _still_alive(pids: list[int], seconds: float) -> list[int]:
    """Those of ``pids`` still running after up to ``seconds`` of waiting for them to end."""
    deadline = time.monotonic() + seconds
    while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: signal.Signals(s).name
)
def test_signal_to_tune_stores_the_run_and_removes_the_replay_folder(sig, tmp_path):
    db = tmp_path / "t.sqlite"
    cmd = Command([*TUNE, "--replay", "--all", "--db", f"sqlite:///{db}"], env=_env(tmp_path))
    root = tmp_path / "cache" / "sssp-tune" / "replay"
    cmd.wait_for(lambda: any(status == "running" for _, status in _runs(db)), "running run")
    rc, _, lines = cmd.stop(sig)
    assert rc == 128 + sig, lines
    assert lines == [
        f"tune: interrupted by {signal.Signals(sig).name}; the run is stored as "
        "interrupted and resumes on the next call"
    ]
    assert not root.exists() or list(root.iterdir()) == []
    statuses = [status for _, status in _runs(db)]
    assert statuses and statuses[-1] == "interrupted" and set(statuses[:-1]) <= {"finished"}, (
        statuses
    )


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: signal.Signals(s).name
)
def test_signal_to_tune_stops_its_workers(sig, tmp_path):
    db = tmp_path / "w.sqlite"
    cmd = Command(
        [*TUNE, "run", "--replay", "--all", "--workers", "2", "--db", f"sqlite:///{db}"],
        env=_env(tmp_path),
    )
    cmd.wait_for(
        lambda: sum(status == "running" for _, status in _runs(db)) == 2, "two running runs"
    )
    workers = _children(cmd.proc.pid)
    assert len(workers) >= 2, workers
    rc, _, lines = cmd.stop(sig)
    assert rc == 128 + sig, lines
    assert lines == [
        f"tune: interrupted by {signal.Signals(sig).name}; the run is stored as "
        "interrupted and resumes on the next call"
    ]  # the workers say nothing
    # The command joined its workers; a helper process of multiprocessing (its resource tracker)
    # may take a moment more to see its parent gone, so it gets a few seconds (run in CI: one
    # child still alive the instant the command exited, on a loaded host).
    assert not _still_alive(workers, 10)
    assert "running" not in {status for _, status in _runs(db)}


def test_workers_stop_when_their_parent_is_killed(tmp_path):
    """SIGKILL gives tune no chance to stop its workers: they notice by themselves (a parent-death
    signal), store their runs as interrupted and end, instead of tuning on to the end."""
    db = tmp_path / "k.sqlite"
    cmd = Command(
        [*TUNE, "run", "--replay", "--all", "--workers", "2", "--db", f"sqlite:///{db}"],
        env=_env(tmp_path),
    )
    cmd.wait_for(
        lambda: sum(status == "running" for _, status in _runs(db)) == 2, "two running runs"
    )
    workers = [p for p in _children(cmd.proc.pid) if _alive(p)]
    assert len(workers) >= 2, workers
    cmd.proc.kill()
    cmd.proc.wait(30)
    assert not _still_alive(workers, 15), "workers outlived their killed parent"
    statuses = {status for _, status in _runs(db)}
    assert "running" not in statuses and "interrupted" in statuses, statuses


# -- benchmarks and scripts ---------------------------------------------------------------------


def test_every_program_ends_through_the_shared_signal_policy():
    """Each program under benchmarks/ and scripts/ ends with sssp.cliutil.run_script, so Ctrl-C
    anywhere in one ends it with one line and 130."""
    import ast

    programs = sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "scripts").glob("*.py"))
    mains = []
    for path in programs:
        tree = ast.parse(path.read_text())
        blocks = [
            node
            for node in tree.body
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        ]
        if not blocks:
            continue  # a module the programs import
        mains.append(path.name)
        calls = {ast.unparse(n.func) for n in ast.walk(blocks[0]) if isinstance(n, ast.Call)}
        assert calls == {"run_script"}, f"{path.name}: its __main__ block calls {sorted(calls)}"
    assert "bench_sssp.py" in mains and "same_code.py" in mains


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_to_a_benchmark_ends_it_with_one_line(sig, tmp_path):
    """A benchmark in the middle of its work (CPU solves of a large graph): one line, 128 + the
    signal, no traceback."""
    argv = [sys.executable, "benchmarks/bench_cpu.py", "--n", "400000", "--degrees", "8"]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and "graph" in proc.stdout.readline()  # its table began
        time.sleep(0.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig, err
    assert err.splitlines() == [f"bench_cpu: interrupted by {signal.Signals(sig).name}"]
