"""The tuning database, on in-memory SQLite, SQLite files and PostgreSQL (see tests/databases.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import tuning_db
import tuning_db.connection as connection_mod
import tuning_db.export as export_mod
from sssp.classes import GraphClass
from sssp.config import KernelConfig, LaunchConfig
from sssp.errors import SSSPError, StoreError
from tests.databases import KINDS, database
from tuning_db import (
    BestRecord,
    DeviceRecord,
    KernelVersionRecord,
    RunKey,
    RunStatus,
    Store,
    TrialRecord,
    TrialStatus,
    default_url,
)
from tuning_db.export import EXPORT_VERSION
from tuning_db.schema import head_revision

pytestmark = pytest.mark.timeout(120)
REAL_SHIPPED_EXPORTS = export_mod.shipped_exports  # before the autouse fixture patches it

H200 = DeviceRecord("NVIDIA H200", "GPU-0000-aaaa", "9.0", 132, "580.65", "13.0")
H200_B = DeviceRecord("NVIDIA H200", "GPU-0000-bbbb", "9.0", 132, "580.65", "13.0")
A100 = DeviceRecord("NVIDIA A100-SXM4-80GB", "GPU-1111-cccc", "8.0", 108, "550.54", "12.4")
KV = KernelVersionRecord("sha256:abc123", "-O3")
KV2 = KernelVersionRecord("sha256:def456", "-O3")
C49_200 = GraphClass("49k", "deg200")
C24_2 = GraphClass("24k", "deg2")
C98_20 = GraphClass("98k", "deg20")


def key(**kw) -> RunKey:
    base = dict(device=H200, kernel_version=KV, graph_class=C49_200, instance="random seed=0")
    base.update(kw)
    return RunKey(**base)


def trial(label: str, kernel: str = "relax", times=(1.0, 3.0, 2.0), **kw) -> TrialRecord:
    return TrialRecord(
        kernel, KernelConfig.parse(label), kw.pop("status", TrialStatus.OK), tuple(times), **kw
    )


def best(**kw) -> BestRecord:
    base = dict(
        device=H200,
        kernel_version=KV,
        graph_class=C49_200,
        algorithm="crauser",
        variant="successors",
        config=LaunchConfig(
            KernelConfig(192, "A"), KernelConfig(512, "N"), KernelConfig(128, "S"), loop="legacy"
        ),
        tuned_config=LaunchConfig(
            KernelConfig(192, "A"), KernelConfig(512, "N"), KernelConfig(128, "S"), loop="legacy"
        ),
        tuned_median_ms=8.0,
        default_median_ms=10.0,
        speedup=1.25,
        n_sources=32,
        kept_default=False,
        updated_at=dt.datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=dt.UTC),
    )
    base.update(kw)
    return BestRecord(**base)


@pytest.fixture(params=KINDS)
def url(request, tmp_path):
    with database(request.param, tmp_path) as u:
        yield u


@pytest.fixture
def store(url):
    with Store(url) as s:
        yield s


@pytest.fixture
def file_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'tuning.sqlite'}"


@pytest.fixture(autouse=True)
def _no_user_database(monkeypatch, tmp_path):
    # Never touch the developer's real database, and never seed from real shipped data.
    monkeypatch.setattr(
        connection_mod.platformdirs, "user_data_dir", lambda *a, **k: str(tmp_path / "user")
    )
    monkeypatch.delenv(connection_mod.ENV_VAR, raising=False)
    monkeypatch.setattr(export_mod, "shipped_exports", lambda: [])


def populate(store: Store) -> dict[str, int]:
    """A small but complete database: two devices, two runs with trials, three bests."""
    r1, _ = store.open_run(key(), budget=10, seed=1)
    for label in ("256-N", "192-A", "128-S/x4"):
        store.add_trial(r1.id, trial(label, applied_l1="PREFER_L1", times=(1.5, 1.25, 2.0)))
    store.add_trial(r1.id, trial("512-N", kernel="min", times=()))
    store.add_trial(
        r1.id,
        trial(
            "1024-S",
            kernel="update",
            status=TrialStatus.LAUNCH_FAILED,
            times=(),
            message="too many resources",
        ),
    )
    store.finish_run(r1.id, RunStatus.FINISHED, wall_seconds=12.5)
    r2, _ = store.open_run(
        key(device=A100, graph_class=C24_2, replay=True, strategy="tpe"), budget=None, seed=2
    )
    store.add_trial(r2.id, trial("64-N", times=(0.5,)))
    store.put_best(best(run_id=r1.id))
    store.put_best(
        best(
            graph_class=C24_2,
            device=A100,
            replay=True,
            run_id=r2.id,
            kept_default=True,
            config=LaunchConfig.paper(),
        )
    )
    store.put_best(best(graph_class=C98_20, variant="predecessors"))
    return {"r1": r1.id, "r2": r2.id}


# -- opening ---------------------------------------------------------------------------------


def test_new_database_is_created_and_reopened(file_url):
    with Store(file_url) as s:
        assert s.created
        populate(s)
    with Store(file_url) as s:
        assert not s.created
        assert [d.uuid for d in s.devices()] == [A100.uuid, H200.uuid]


def test_foreign_keys_and_wal_are_on(file_url):
    with Store(file_url) as s, s._engine.connect() as conn:
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"


def test_old_revision_names_the_upgrade_command(tmp_path, file_url, monkeypatch):
    Store(file_url).close()
    with sqlite3.connect(tmp_path / "tuning.sqlite") as conn:
        conn.execute("UPDATE sssp_alembic_version SET version_num = '0000'")
    with pytest.raises(StoreError, match="unknown to this code") as info:
        Store(file_url)
    assert str(tmp_path) in str(info.value)
    # A known older revision gets the upgrade command.
    monkeypatch.setattr(
        "tuning_db.schema.known_revisions", lambda: frozenset({"0000", head_revision()})
    )
    with pytest.raises(StoreError, match=r"upgrade it with `tune upgrade --db URL`"):
        Store(file_url)


def test_schema_1_database_is_refused_then_converted(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # a database the schema-1 release wrote
        conn.executescript((Path(__file__).parent / "data" / "schema1.sql").read_text())
    with pytest.raises(StoreError, match=r"schema 1 of sssp-tune.*`tune upgrade --db URL`"):
        Store(path)
    with Store(path, upgrade=True) as s:
        assert not s.created
        (run,) = s.runs()
        assert run.status is RunStatus.FINISHED and run.key.instance == "random seed=0"
        assert [
            (t.kernel, t.config.label, t.status.value, t.times_ms) for t in s.trials(run.id)
        ] == [
            ("relax", "256-N", "ok", (1.0, 3.0, 2.0)),
            ("relax", "128-A/x4", "ok", (0.5, 0.75)),
            ("min", "512-N", "launch_failed", ()),
        ]
        (b,) = s.all_best()
        assert b.config.relax.label == "128-A/x4" and b.speedup == 1.25 and b.run_id == run.id
        assert b.options == {}
    assert json.loads((tmp_path / "old.sqlite.schema1.json").read_text())["schema_version"] == 1
    with Store(path) as s:  # now an ordinary database
        assert len(s.all_best()) == 1


def test_our_version_table_is_not_optunas(file_url):
    import optuna

    with Store(file_url) as s, s._engine.connect() as conn:
        names = {
            r[0] for r in conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'"))
        }
        assert {"sssp_alembic_version", "alembic_version", "studies", "trials"} <= names
        ours = conn.execute(text("SELECT version_num FROM sssp_alembic_version")).scalar()
        theirs = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert ours == head_revision() and theirs != ours
    assert optuna.get_all_study_summaries(file_url) == []  # Optuna opens it as its own


def test_foreign_database_is_refused(tmp_path, file_url):
    with sqlite3.connect(tmp_path / "tuning.sqlite") as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    with pytest.raises(StoreError, match="another application.*customers"):
        Store(file_url)
    with sqlite3.connect(tmp_path / "tuning.sqlite") as conn:  # and nothing was added
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert names == {"customers"}


def test_an_optuna_database_takes_our_tables(file_url):
    import optuna

    optuna.create_study(storage=file_url, study_name="someone-elses")
    with Store(file_url) as s:
        assert s.created
        populate(s)
        assert len(s.runs()) == 2
    assert "someone-elses" in {st.study_name for st in optuna.get_all_study_summaries(file_url)}


def test_garbage_file_is_not_a_database(tmp_path):
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(b"this is not sqlite at all " * 200)
    with pytest.raises(StoreError, match="not a SQLite database") as info:
        Store(f"sqlite:///{path}")
    assert str(path) in str(info.value)
    assert path.read_bytes() == b"this is not sqlite at all " * 200  # checked before opening


def test_missing_directory_names_the_url(tmp_path):
    url = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'tuning.sqlite'}"
    with pytest.raises(StoreError, match="cannot open the database file") as info:
        Store(url)
    assert url in str(info.value)


def test_unreachable_server_names_the_url():
    # Port 1 refuses at once; without a PostgreSQL driver installed, the driver is named instead.
    url = "postgresql://tuner:secret@127.0.0.1:1/tuning"
    with pytest.raises(StoreError) as info:
        Store(url)
    msg = str(info.value)
    assert "127.0.0.1:1/tuning" in msg
    assert "secret" not in msg  # passwords are hidden
    assert isinstance(info.value, SSSPError)


def test_unknown_dialect_is_a_store_error():
    with pytest.raises(StoreError, match="nosuchdb://"):
        Store("nosuchdb://somewhere/db")


def test_plain_path_of_an_existing_file_is_a_sqlite_file(tmp_path):
    path = tmp_path / "plain.sqlite"
    Store(f"sqlite:///{path}").close()
    with Store(path) as s:
        assert s.url == f"sqlite:///{path}" and not s.created


@pytest.mark.parametrize("value", ["garbage", "no/such/file.sqlite", "   "])
def test_value_neither_url_nor_file_is_refused(tmp_path, monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match="neither a database URL nor an existing file") as info:
        Store(value)
    assert repr(value.strip()) in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_reading_never_creates_a_named_database(tmp_path):
    path = tmp_path / "typo.sqlite"
    with pytest.raises(StoreError, match=f"no such file {path}"):
        Store(f"sqlite:///{path}", create=False)
    assert list(tmp_path.iterdir()) == []
    with pytest.warns(RuntimeWarning, match="no such file"):
        assert tuning_db.tuned_records(f"sqlite:///{path}", "NVIDIA H200") == []
    assert list(tmp_path.iterdir()) == []
    with Store(create=False) as s:  # the default database is made on first use, as documented
        assert s.created


def test_a_database_being_created_is_never_seen_half_made(tmp_path, monkeypatch):
    """While one process is still creating a new file's tables, another opens the same URL: it
    must find no file (and make its own) or a whole database, never SQLite's empty file."""
    from tuning_db import schema

    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    real_upgrade = schema.upgrade
    inside, go_on = threading.Event(), threading.Event()
    calls = []

    def slow_upgrade(connection):
        calls.append(1)
        if len(calls) == 1:  # the first creator stops half-way
            inside.set()
            go_on.wait(60)
        real_upgrade(connection)

    monkeypatch.setattr(schema, "upgrade", slow_upgrade)
    outcome: dict[str, object] = {}

    def first() -> None:
        try:
            with Store(url) as s:
                outcome["first"] = s.created
        except BaseException as err:  # noqa: BLE001 - reported below
            outcome["first"] = err

    t = threading.Thread(target=first)
    t.start()
    assert inside.wait(60)
    try:
        with Store(url) as second:  # the first is inside its creating transaction
            outcome["second"] = second.created
            second.put_best(best())
    finally:
        go_on.set()
        t.join(60)
    assert outcome == {"first": False, "second": True}, outcome
    with Store(url) as s:
        assert s.all_best() == [best()]
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm")))
    assert left == ["new.sqlite"]  # the first creator's temporary file is gone


def test_empty_file_is_refused_never_recreated(tmp_path):
    path = tmp_path / "truncated.sqlite"
    path.write_bytes(b"")
    with pytest.raises(StoreError, match=r"empty \(0 bytes\).*not recreated") as info:
        Store(path)
    assert str(path) in str(info.value)
    assert path.stat().st_size == 0


def test_damaged_file_is_detected_at_open(tmp_path):
    path = tmp_path / "damaged.sqlite"
    with Store(f"sqlite:///{path}") as s:
        populate(s)
    data = path.read_bytes()
    assert len(data) > 8 * 4096
    path.write_bytes(data[: len(data) // 2 + 1000])  # cut in the middle of a page
    for ext in ("-wal", "-shm"):
        Path(f"{path}{ext}").unlink(missing_ok=True)
    before = path.read_bytes()
    with pytest.raises(StoreError) as info:
        Store(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == before


def test_read_only_database_serves_reads(tmp_path):
    path = tmp_path / "ro.sqlite"
    with Store(f"sqlite:///{path}") as s:
        populate(s)
        want = s.all_best()
    ro_url = f"sqlite:///file:{path}?mode=ro&uri=true"
    with Store(ro_url) as s:  # a connection that cannot write at all
        assert s.read_only and not s.created
        assert s.all_best() == want
        assert len(s.runs()) == 2
        with pytest.raises(StoreError, match="read-only"):
            s.put_best(best(graph_class=C24_2))


def test_unwritable_file_is_opened_read_only(tmp_path, monkeypatch):
    path = tmp_path / "mine.sqlite"
    with Store(f"sqlite:///{path}") as s:
        populate(s)
    # Root may write any file, so the permission check itself is what is replaced here.
    monkeypatch.setattr("tuning_db.store.writable", lambda p: False)
    with Store(path) as s:
        assert s.read_only and len(s.all_best()) == 3


def test_tuned_lookup_falls_back_with_a_warning(tmp_path):
    path = tmp_path / "zero.sqlite"
    path.write_bytes(b"")
    with pytest.warns(RuntimeWarning, match=f"using the default.*{path}"):
        assert tuning_db.tuned_records(str(path), "NVIDIA H200") == []
    good = tmp_path / "good.sqlite"
    with Store(f"sqlite:///{good}") as s:
        populate(s)
    got = tuning_db.tuned_records(f"sqlite:///file:{good}?mode=ro&uri=true", "NVIDIA H200")
    assert {b.graph_class for b in got} == {C49_200, C98_20}


# -- default database ---------------------------------------------------------------------------


def test_default_url_honours_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SSSP_TUNING_DB", "postgresql+psycopg://host/tuning")
    assert default_url() == "postgresql+psycopg://host/tuning"
    (tmp_path / "env.sqlite").touch()
    monkeypatch.setenv("SSSP_TUNING_DB", str(tmp_path / "env.sqlite"))
    assert default_url() == f"sqlite:///{tmp_path / 'env.sqlite'}"
    monkeypatch.setenv("SSSP_TUNING_DB", str(tmp_path / "typo.sqlite"))
    with pytest.raises(StoreError, match="typo.sqlite' is neither"):
        default_url()


def test_default_url_uses_platformdirs(monkeypatch, tmp_path):
    seen = []

    def fake_dir(appname, *a, **k):
        seen.append(appname)
        return str(tmp_path / "data")

    monkeypatch.setattr(connection_mod.platformdirs, "user_data_dir", fake_dir)
    assert default_url() == f"sqlite:///{tmp_path / 'data' / 'tuning.sqlite'}"
    assert seen == ["sssp-tune"]
    with Store() as s:  # creates the directory and the file
        assert s.created
    assert (tmp_path / "data" / "tuning.sqlite").is_file()


# -- runs ---------------------------------------------------------------------------------------


def test_open_run_creates_a_running_run(store):
    before = dt.datetime.now(dt.UTC)
    run, resumed = store.open_run(key(), budget=50, seed=7)
    assert not resumed
    assert run.key == key()
    assert (run.status, run.budget, run.seed, run.finished_at) == (RunStatus.RUNNING, 50, 7, None)
    assert run.started_at.tzinfo is not None and run.started_at.utcoffset() == dt.timedelta(0)
    assert before <= run.started_at <= dt.datetime.now(dt.UTC)
    assert store.run(run.id) == run
    assert store.devices() == [H200]


def test_open_run_resumes_running_and_interrupted_runs(store):
    first, _ = store.open_run(key(), budget=10, seed=1)
    again, resumed = store.open_run(key(), budget=10, seed=1)
    assert resumed and again.id == first.id

    store.finish_run(first.id, RunStatus.INTERRUPTED)
    assert store.run(first.id).finished_at is not None
    back, resumed = store.open_run(key(), budget=20, seed=99)
    assert resumed and back.id == first.id
    assert back.status is RunStatus.RUNNING and back.finished_at is None
    assert back.budget == 20  # a resumed run can be extended
    assert back.seed == 1  # ... but keeps its own seed

    store.finish_run(first.id, RunStatus.FINISHED)
    fresh, resumed = store.open_run(key(), budget=20, seed=3)
    assert not resumed and fresh.id != first.id

    other, resumed = store.open_run(key(kernel="relax"), budget=20, seed=3)
    assert not resumed and other.id not in (first.id, fresh.id)
    assert len(store.runs()) == 3


def _stale(store: Store, run_id: int, minutes: float = 1) -> None:
    """Make run ``run_id`` look like its holder stopped beating ``minutes`` ago."""
    with store._engine.begin() as conn:
        conn.execute(
            text("UPDATE sssp_tuning_runs SET heartbeat_at = :t WHERE id = :i"),
            {
                "t": (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=minutes)).replace(tzinfo=None),
                "i": run_id,
            },
        )


def test_open_run_never_takes_a_run_whose_holder_is_alive(store):
    """A plain tune starts a run of its own beside a live one; it takes over only a run stored as
    interrupted or one whose holder stopped beating."""
    first, resumed = store.open_run(key(), budget=None, seed=1, owner="host:1")
    assert not resumed
    second, resumed = store.open_run(key(), budget=None, seed=2, owner="host:2")
    assert not resumed and second.id != first.id  # host:1 is alive: its run is left to it
    _stale(store, first.id)
    taken, resumed = store.open_run(key(), budget=None, seed=3, owner="host:3")
    assert resumed and taken.id == first.id and taken.seed == 1  # host:1 died
    assert not store.beat(first.id, "host:1") and store.beat(first.id, "host:3")
    store.finish_run(second.id, RunStatus.INTERRUPTED, owner="host:2")
    again, resumed = store.open_run(key(), budget=None, seed=4, owner="host:4")
    assert resumed and again.id == second.id


def test_finish_run_leaves_a_run_another_process_holds(store):
    run, _ = store.open_run(key(), budget=None, seed=0, owner="old")
    _stale(store, run.id)
    store.open_run(key(), budget=None, seed=0, owner="new")
    # The old holder wakes up and ends: the run stays the new holder's.
    kept = store.finish_run(run.id, RunStatus.INTERRUPTED, owner="old")
    assert kept.status is RunStatus.RUNNING and store.run(run.id).status is RunStatus.RUNNING
    assert store.finish_run(run.id, RunStatus.FINISHED, owner="new").status is RunStatus.FINISHED


def test_an_interrupted_run_is_taken_over_by_one_process(url):
    if url == "sqlite://":
        pytest.skip("an in-memory database belongs to one connection")
    with Store(url) as s:
        run, _ = s.open_run(key(), budget=None, seed=0, owner="gone")
        s.finish_run(run.id, RunStatus.INTERRUPTED)
    results: list = []
    barrier = threading.Barrier(4)

    def opener(i: int) -> None:
        try:
            with Store(url) as mine:
                barrier.wait()
                results.append(mine.open_run(key(), budget=None, seed=0, owner=f"p{i}"))
        except BaseException as err:  # noqa: BLE001 - reported below
            results.append(err)

    threads = [threading.Thread(target=opener, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(isinstance(r, tuple) for r in results), results
    assert sorted(resumed for _, resumed in results) == [False, False, False, True]
    assert len({r.id for r, _ in results}) == 4


def test_a_configuration_has_one_slot_per_run(store):
    run, _ = store.open_run(key(), budget=None, seed=0, owner="me")
    other, _ = store.open_run(key(), budget=None, seed=0, owner="you")
    c = KernelConfig.parse("256-N")
    assert store.reserve_trial(run.id, "relax", c, "me")
    assert not store.reserve_trial(run.id, "relax", c, "me")  # stored (or being stored) already
    assert store.reserve_trial(run.id, "min", c, "me")  # another kernel
    assert store.reserve_trial(other.id, "relax", c, "you")  # another run
    with pytest.raises(StoreError, match=f"tuning run {run.id} is no longer held by this process"):
        store.reserve_trial(run.id, "relax", KernelConfig.parse("512-N"), "you")
    with store._engine.begin() as conn:  # the key itself, not only the code, refuses a second one
        with pytest.raises(Exception, match="(?i)unique|duplicate"):
            conn.execute(
                text(
                    "INSERT INTO sssp_trial_slots (run_id, kernel, config, owner, stored_at) "
                    "VALUES (:r, 'relax', '256-N', 'x', :t)"
                ),
                {"r": run.id, "t": dt.datetime(2026, 1, 1)},
            )


def test_store_measurement_finishes_each_configuration_once(store):
    from tuning_db import studies

    run, _ = store.open_run(key(), budget=None, seed=0, owner="me")
    study = store.study(run, "relax")
    dists, params = studies.search_space("relax", studies.scope_of(run))
    t = trial("256-N")
    assert store.store_measurement(study, run.id, t, "me", params=params(t.config), dists=dists)
    assert not store.store_measurement(study, run.id, t, "me", params=params(t.config), dists=dists)
    assert [x.config.label for x in store.trials(run.id)] == ["256-N"]
    states = sorted(ft.state.name for ft in study.get_trials())
    assert states == ["COMPLETE", "PRUNED"]  # the second one was abandoned, not measured


def test_a_run_taken_over_mid_write_is_neither_lost_nor_doubled(store):
    """A holder that took a configuration's slot and died (or stalled past the grace period)
    before finishing its trial: the next holder abandons the trial and frees the slot, so the
    configuration is measured again, once; the old holder, waking up, can finish nothing."""
    from optuna.trial import TrialState

    from tuning_db import studies

    run, _ = store.open_run(key(), budget=None, seed=0, owner="old")
    study = store.study(run, "relax")
    dists, params = studies.search_space("relax", studies.scope_of(run))
    done, cut = trial("256-N"), trial("512-N")
    assert store.store_measurement(
        study, run.id, done, "old", params=params(done.config), dists=dists
    )
    # "old" writes its running trial and takes the slot, then stops before finishing it.
    stuck = store.storage.create_new_trial(
        study._study_id, template_trial=studies.running_trial(cut, params(cut.config), dists)
    )
    assert store.reserve_trial(run.id, "relax", cut.config, "old")
    _stale(store, run.id)
    taken, resumed = store.open_run(key(), budget=None, seed=0, owner="new")
    assert resumed and taken.id == run.id
    assert store.storage.get_trial(stuck).state is TrialState.PRUNED
    assert [t.config.label for t in store.trials(run.id)] == ["256-N"]  # not counted as measured
    assert store.store_measurement(
        study, run.id, cut, "new", params=params(cut.config), dists=dists
    )
    assert sorted(t.config.label for t in store.trials(run.id)) == ["256-N", "512-N"]
    # The old holder wakes up: it can finish none of its trials, nor store another one.
    from optuna.exceptions import UpdateFinishedTrialError

    with pytest.raises(UpdateFinishedTrialError):
        store.storage.set_trial_state_values(stuck, TrialState.COMPLETE, [1.0])
    late = trial("1024-N")
    with pytest.raises(StoreError, match="no longer held by this process"):
        store.store_measurement(study, run.id, late, "old", params=params(late.config), dists=dists)
    assert sorted(t.config.label for t in store.trials(run.id)) == ["256-N", "512-N"]


def test_failed_runs_are_not_resumed(store):
    run, _ = store.open_run(key(), budget=None, seed=0)
    store.finish_run(run.id, RunStatus.FAILED)
    new, resumed = store.open_run(key(), budget=None, seed=0)
    assert not resumed and new.id != run.id


def test_open_run_keeps_the_latest_device_facts(store):
    store.open_run(key(), budget=None, seed=0)
    newer = dataclasses.replace(H200, driver_version="590.10")
    store.open_run(key(device=newer, kernel="min"), budget=None, seed=0)
    assert store.devices() == [newer]


def test_finish_run(store):
    run, _ = store.open_run(key(), budget=None, seed=0)
    done = store.finish_run(run.id, RunStatus.FINISHED, wall_seconds=3.25)
    assert done.status is RunStatus.FINISHED and done.wall_seconds == 3.25
    assert done.finished_at >= done.started_at
    assert store.run(run.id) == done
    with pytest.raises(StoreError, match="no tuning run with id 999"):
        store.finish_run(999, RunStatus.FINISHED)


def test_runs_filters(store):
    ids = populate(store)
    assert [r.id for r in store.runs()] == [ids["r1"], ids["r2"]]
    assert [r.id for r in store.runs(device_name="NVIDIA H200")] == [ids["r1"]]
    assert [r.id for r in store.runs(graph_class=C24_2)] == [ids["r2"]]
    assert [r.id for r in store.runs(status=RunStatus.RUNNING)] == [ids["r2"]]
    assert store.runs(device_name="NVIDIA H200", graph_class=C24_2) == []


# -- trials -------------------------------------------------------------------------------------


def test_add_trial_numbers_and_round_trips(store):
    run, _ = store.open_run(key(), budget=None, seed=0)
    t0 = store.add_trial(
        run.id, trial("256-N", times=(2.0, 1.0, 4.0, 3.0), applied_l1="PREFER_NONE")
    )
    t1 = store.add_trial(run.id, trial("192-A/x8"))
    t2 = store.add_trial(
        run.id,
        trial(
            "64-S",
            kernel="min",
            status=TrialStatus.WRONG_RESULT,
            times=(),
            message="dist[7] differs",
        ),
    )
    # Optuna numbers the trials of each study (one study per kernel of the run).
    assert (t0.number, t1.number, t2.number) == (0, 1, 0)
    assert t0 == dataclasses.replace(
        trial("256-N", times=(2.0, 1.0, 4.0, 3.0), applied_l1="PREFER_NONE"), number=0
    )
    assert t1.config == KernelConfig(192, "A", 8)
    assert store.trials(run.id) == [t0, t1, t2]
    assert store.trials(run.id, kernel="min") == [t2]
    assert store.trials(run.id, kernel="update") == []


def test_trials_are_optuna_trials_in_named_studies(url, store):
    import optuna

    run, _ = store.open_run(key(), budget=None, seed=0)
    store.add_trial(run.id, trial("256-N", times=(2.0, 1.0, 4.0, 3.0), measurements={"time": 0.5}))
    store.add_trial(run.id, trial("128-N", times=(), status=TrialStatus.LAUNCH_FAILED))
    store.add_trial(run.id, trial("512-N", kernel="min"))
    name = f"sssp/{H200.uuid}/{KV.digest}/49k-deg200/crauser-successors/relax/run-{run.id}"
    if url == "sqlite://":  # Optuna cannot open the store's private in-memory database
        summaries = store.storage.get_all_studies()
        study = optuna.load_study(study_name=name, storage=store.storage)
    else:
        summaries = optuna.get_all_study_summaries(url)
        study = optuna.load_study(study_name=name, storage=url)
    assert len(summaries) == 2
    ok, failed = sorted(study.trials, key=lambda t: t.state.name)
    assert ok.state.name == "COMPLETE" and ok.value == 2.5  # the median
    assert ok.params == {"block_size_x": 256, "l1": "N", "lanes": 1}
    assert ok.user_attrs["measurement"]["times_ms"] == [2.0, 1.0, 4.0, 3.0]
    assert ok.user_attrs["kernel_tuner"] == {"time": 0.5}
    assert (
        failed.state.name == "FAIL"
        and failed.user_attrs["measurement"]["status"] == "launch_failed"
    )
    assert study.user_attrs["graph_class"] == "49k/deg200" and study.user_attrs["run_id"] == run.id


def test_add_trial_is_idempotent(store):
    run, _ = store.open_run(key(), budget=None, seed=0)
    first = store.add_trial(run.id, trial("256-N", times=(1.0,)))
    for _ in range(3):
        again = store.add_trial(run.id, trial("256-N", times=(9.0, 9.0), message="remeasured"))
        assert again == first  # the stored one, unchanged
    other_kernel = store.add_trial(run.id, trial("256-N", kernel="min"))
    assert other_kernel.number == 0
    assert len(store.trials(run.id)) == 2
    assert sum(len(st.trials) for st in [store.study(run, "relax"), store.study(run, "min")]) == 2


def test_resumed_run_keeps_its_trials(store):
    run, _ = store.open_run(key(), budget=None, seed=0)
    store.add_trial(run.id, trial("256-N"))
    store.finish_run(run.id, RunStatus.INTERRUPTED)
    back, resumed = store.open_run(key(), budget=None, seed=0)
    assert resumed
    store.add_trial(back.id, trial("256-N"))  # offered again after the resume
    store.add_trial(back.id, trial("512-N"))
    assert [(t.config.label, t.number) for t in store.trials(back.id)] == [
        ("256-N", 0),
        ("512-N", 1),
    ]


def test_add_trial_rejects_bad_input(store):
    run, _ = store.open_run(key(), budget=None, seed=0)
    with pytest.raises(StoreError, match="no tuning run with id 12345"):
        store.add_trial(12345, trial("256-N"))
    with pytest.raises(StoreError, match="trial time nan ms is invalid"):
        store.add_trial(run.id, trial("256-N", times=(1.0, float("nan"))))
    assert store.trials(run.id) == []


def test_one_claim_wins(url, tmp_path):
    if url == "sqlite://":
        pytest.skip("an in-memory database belongs to one connection")
    with Store(url):
        pass
    results: list = []
    barrier = threading.Barrier(4)

    def worker(i: int) -> None:
        try:
            with Store(url) as mine:
                barrier.wait()
                results.append(mine.claim_run(key(), budget=None, seed=0, owner=f"w{i}"))
        except BaseException as err:  # noqa: BLE001 - reported below
            results.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [r for r in results if isinstance(r, tuple)]
    assert len(won) == 1 and sorted(r for r in results if isinstance(r, str)) == ["busy"] * 3
    with Store(url) as s:
        (run,) = s.runs()
        assert s.claim_run(key(), budget=None, seed=0, owner="late") == "busy"
        # A worker that stopped beating is taken over; a finished run is done.
        with s._engine.begin() as conn:  # its worker stopped beating a minute ago
            conn.execute(
                text("UPDATE sssp_tuning_runs SET heartbeat_at = :t"),
                {"t": (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)).replace(tzinfo=None)},
            )
        took, resumed = s.claim_run(key(), budget=None, seed=0, owner="late", stale_after=30)
        assert resumed and took.id == run.id
        assert s.beat(run.id, "late") and not s.beat(run.id, "w0-gone")
        s.finish_run(run.id, RunStatus.FINISHED)
        assert s.claim_run(key(), budget=None, seed=0, owner="later") == "finished"


def test_identical_gpus_share_a_class_other_models_do_not(store):
    """`tune --devices 0,1`: a class claimed (then finished) on one H200 is busy (then done) for
    the host's second H200; another GPU model tunes it on its own."""
    twin = dataclasses.replace(H200, uuid="GPU-twin")
    other = dataclasses.replace(
        H200, name="NVIDIA A100", uuid="GPU-a100", compute_capability="8.0", sm_count=108
    )
    run, resumed = store.claim_run(key(), budget=None, seed=0, owner="w0")
    assert not resumed
    assert store.claim_run(key(device=twin), budget=None, seed=0, owner="w1") == "busy"
    assert isinstance(store.claim_run(key(device=other), budget=None, seed=0, owner="w2"), tuple)
    store.finish_run(run.id, RunStatus.FINISHED)
    assert store.claim_run(key(device=twin), budget=None, seed=0, owner="w1") == "finished"
    assert len(store.runs()) == 2


# -- best configurations ------------------------------------------------------------------------


def test_put_best_and_best_round_trip(store):
    b = best()
    store.put_best(b)
    assert store.best(H200.uuid, KV.digest, C49_200, "crauser", "successors") == b
    assert store.best(H200.uuid, KV.digest, C49_200, "crauser", "predecessors") is None
    assert store.best(H200.uuid, KV2.digest, C49_200, "crauser", "successors") is None
    assert store.best(A100.uuid, KV.digest, C49_200, "crauser", "successors") is None


def test_best_options_round_trip(store, tmp_path):
    b = best(options={"delta": 64, "ratio": 0.5, "note": "x"})
    store.put_best(b)
    assert store.all_best() == [b]
    store.export_json(tmp_path / "e.json")
    assert json.loads((tmp_path / "e.json").read_text())["best"][0]["options"] == dict(b.options)
    with Store("sqlite://") as other:
        other.import_json(tmp_path / "e.json")
        assert other.all_best() == [b]
    with pytest.raises(ValueError, match="option 'delta'"):
        best(options={"delta": [1, 2]})


def test_hand_edited_rows_give_a_store_error(url, store):
    store.put_best(best())
    with store._engine.begin() as conn:
        conn.execute(text("UPDATE sssp_best_configs SET relax_label = '999-Q'"))
    with pytest.raises(StoreError, match="sssp_best_configs row 1 holds an invalid value.*999"):
        store.all_best()
    with store._engine.begin() as conn:
        conn.execute(text("UPDATE sssp_best_configs SET relax_label = '256-N', options = '[1'"))
    with pytest.raises(StoreError, match="sssp_best_configs row 1"):
        store.all_best()


def test_put_best_upserts(store):
    store.put_best(best())
    newer = best(
        config=LaunchConfig.paper(),
        kept_default=True,
        speedup=0.97,
        updated_at=dt.datetime(2026, 6, 1, tzinfo=dt.UTC),
    )
    store.put_best(newer)
    assert store.all_best() == [newer]
    assert store.best(H200.uuid, KV.digest, C49_200, "crauser", "successors") == newer


def test_put_best_keeps_instants_in_utc(store):
    cest = dt.timezone(dt.timedelta(hours=2))
    store.put_best(best(updated_at=dt.datetime(2026, 5, 1, 14, 0, tzinfo=cest)))
    got = store.best(H200.uuid, KV.digest, C49_200, "crauser", "successors").updated_at
    assert got == dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)
    assert got.utcoffset() == dt.timedelta(0)


def test_put_best_with_unknown_run_writes_nothing(store):
    with pytest.raises(StoreError, match="constraint"):
        store.put_best(best(run_id=4242))
    assert store.all_best() == []
    assert store.devices() == []  # the device row of the failed call was rolled back too


def test_best_for_device(store):
    store.put_best(best(graph_class=C98_20))
    store.put_best(best(graph_class=C24_2))
    store.put_best(best(graph_class=C24_2, kernel_version=KV2))
    store.put_best(best(graph_class=C49_200, variant="predecessors"))
    store.put_best(best(device=H200_B, graph_class=C49_200))
    got = store.best_for_device(H200.uuid, KV.digest)
    assert [b.graph_class for b in got] == [C24_2, C98_20]
    assert all(b.device == H200 and b.kernel_version == KV for b in got)
    assert len(store.best_for_device(H200.uuid)) == 3  # both kernel versions
    assert [b.graph_class for b in store.best_for_device(H200.uuid, variant="predecessors")] == [
        C49_200
    ]
    assert store.best_for_device("GPU-unknown") == []


def test_all_best_by_device_name(store):
    populate(store)
    everything = store.all_best()
    assert len(everything) == 3
    assert [b.device.name for b in everything] == [
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA H200",
        "NVIDIA H200",
    ]
    assert {b.graph_class for b in store.all_best("NVIDIA H200")} == {C49_200, C98_20}
    assert store.all_best("GeForce 8800") == []


# -- export / import ---------------------------------------------------------------------------


def snapshot(store: Store):
    runs = store.runs()
    return (
        store.devices(),
        runs,
        {r.id: store.trials(r.id) for r in runs},
        store.all_best(),
    )


def test_export_import_round_trip(store, tmp_path):
    populate(store)
    out = tmp_path / "export.json"
    store.export_json(out)
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == EXPORT_VERSION
    assert len(doc["runs"]) == 2 and len(doc["best"]) == 3
    assert doc["runs"][0]["trials"][0]["config"] == "256-N"
    assert out.read_text() == json.dumps(doc, indent=1, sort_keys=True) + "\n"

    with Store("sqlite://") as fresh:
        assert fresh.import_json(out) == 2 + 6 + 3
        assert snapshot(fresh) == snapshot(store)
        again = tmp_path / "again.json"
        fresh.export_json(again)
    assert again.read_text() == out.read_text()


def test_export_of_one_gpu_model_and_kind_as_the_package_ships_it(store, tmp_path):
    populate(store)  # the paper kernels' records of an H200 and an A100
    run, _ = store.open_run(key(device=H200_B, kernel="engine", strategy="tpe"), budget=4, seed=0)
    store.add_trial(run.id, trial("256-N"))
    store.finish_run(run.id, RunStatus.FINISHED)
    engine = best(
        device=H200_B,
        graph_class=C24_2,
        run_id=run.id,
        config=LaunchConfig.default(),
        tuned_config=LaunchConfig.default(),
        options=LaunchConfig.default().options(),  # what engine 2's records store
    )
    store.put_best(engine)
    out = tmp_path / "h200-engine.json"
    store.export_json(out, device_name="h200", kernel="engine", trials=False)
    doc = json.loads(out.read_text())
    assert [d["uuid"] for d in doc["devices"]] == [H200_B.uuid]  # the other H200 has no engine
    assert [(r["kernel"], r["trials"]) for r in doc["runs"]] == [("engine", [])]
    assert [b["graph_class"] for b in doc["best"]] == [{"degree": "deg2", "size": "24k"}]
    with Store("sqlite://") as fresh:
        fresh.import_json(out)
        (back,) = fresh.runs()
        assert fresh.all_best() == [dataclasses.replace(engine, run_id=back.id)]
        assert fresh.trials(back.id) == []

    paper = tmp_path / "h200-paper.json"
    store.export_json(paper, device_name="NVIDIA H200", kernel="paper")
    doc = json.loads(paper.read_text())
    assert [d["uuid"] for d in doc["devices"]] == [H200.uuid]
    assert [len(r["trials"]) for r in doc["runs"]] == [5]  # trials kept by default
    assert sorted(b["variant"] for b in doc["best"]) == ["predecessors", "successors"]
    assert [k["digest"] for k in doc["kernel_versions"]] == [KV.digest]

    # The other H200 card searched the same class later: --newest keeps that search only.
    later = dataclasses.replace(
        engine, device=H200, run_id=None, updated_at=engine.updated_at + dt.timedelta(hours=1)
    )
    store.put_best(later)
    both, one = tmp_path / "both.json", tmp_path / "one.json"
    store.export_json(both, device_name="H200", kernel="engine")
    store.export_json(one, device_name="H200", kernel="engine", newest=True)
    assert sorted(b["device"] for b in json.loads(both.read_text())["best"]) == sorted(
        [H200.uuid, H200_B.uuid]
    )
    assert [b["device"] for b in json.loads(one.read_text())["best"]] == [H200.uuid]
    assert len(json.loads(one.read_text())["runs"]) == 1  # the runs stay: they are the history

    with pytest.raises(StoreError, match="no GPU called 'A10'.*NVIDIA A100-SXM4-80GB, NVIDIA H200"):
        store.export_json(tmp_path / "none.json", device_name="A10")
    # The model's name alone names the board: A100 is "NVIDIA A100-SXM4-80GB".
    store.export_json(tmp_path / "a100.json", device_name="a100", kernel="paper")
    assert [d["uuid"] for d in json.loads((tmp_path / "a100.json").read_text())["devices"]] == [
        A100.uuid
    ]
    # A model name that two boards share is refused: one file holds one board's records.
    pcie = dataclasses.replace(A100, name="NVIDIA A100-PCIE-40GB", uuid="GPU-2222-dddd")
    store.put_best(dataclasses.replace(engine, device=pcie, run_id=None))
    with pytest.raises(StoreError, match="'A100' names several GPU models.*A100-PCIE-40GB, NVIDIA"):
        store.export_json(tmp_path / "none.json", device_name="A100")
    with pytest.raises(StoreError, match="kernel must be one of engine, paper, got 'relax'"):
        store.export_json(tmp_path / "none.json", kernel="relax")
    assert not (tmp_path / "none.json").exists()


def test_double_import_does_not_duplicate(store, tmp_path):
    populate(store)
    out = tmp_path / "export.json"
    store.export_json(out)
    with Store("sqlite://") as fresh:
        fresh.import_json(out)
        first = snapshot(fresh)
        assert fresh.import_json(out) == 0
        assert snapshot(fresh) == first
    assert store.import_json(out) == 0  # into the database it came from
    assert len(store.runs()) == 2


def test_import_merges_progress_of_a_run(store, tmp_path):
    run, _ = store.open_run(key(), budget=None, seed=0)
    store.add_trial(run.id, trial("256-N"))
    early = tmp_path / "early.json"
    store.export_json(early)
    store.add_trial(run.id, trial("512-N"))
    store.finish_run(run.id, RunStatus.FINISHED)
    late = tmp_path / "late.json"
    store.export_json(late)
    with Store("sqlite://") as other:
        assert other.import_json(early) == 2
        assert other.runs()[0].status is RunStatus.RUNNING
        assert other.import_json(late) == 2  # the new trial, and the run's finish
        (merged,) = other.runs()
        assert merged.status is RunStatus.FINISHED
        assert [t.config.label for t in other.trials(merged.id)] == ["256-N", "512-N"]


def test_import_keeps_the_newer_best(store, tmp_path):
    old = best(updated_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    new = best(config=LaunchConfig.paper(), updated_at=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    store.put_best(old)
    old_file = tmp_path / "old.json"
    store.export_json(old_file)
    store.put_best(new)
    new_file = tmp_path / "new.json"
    store.export_json(new_file)
    assert store.import_json(old_file) == 0
    assert store.all_best() == [new]
    with Store("sqlite://") as other:
        other.put_best(old)
        assert other.import_json(new_file) == 1
        assert other.all_best() == [new]


def _valid_doc(store: Store, tmp_path: Path) -> dict:
    populate(store)
    out = tmp_path / "export.json"
    store.export_json(out)
    return json.loads(out.read_text())


def _break_trial_config(doc):
    doc["runs"][1]["trials"][0]["config"] = "999-Q"


def _break_best_run(doc):
    doc["best"][-1]["run"] = 777


def _break_device(doc):
    doc["runs"][1]["device"] = "GPU-nobody"


def _break_version(doc):
    doc["schema_version"] = EXPORT_VERSION + 1


def _break_class(doc):
    doc["best"][2]["graph_class"]["degree"] = "deg7"


def _break_type(doc):
    doc["runs"][0]["seed"] = "seven"


def _break_times(doc):
    doc["runs"][0]["trials"][1]["times_ms"] = [1.0, "x"]


def _break_missing(doc):
    del doc["best"][0]["speedup"]


@pytest.mark.parametrize(
    "breakage, reason",
    [
        (_break_trial_config, "runs[1].trials[0]: block size 999"),
        (_break_best_run, "best[2].run 777 is not among"),
        (_break_device, "GPU-nobody"),
        (_break_version, "format version"),
        (_break_class, "best[2]: unknown degree class 'deg7'"),
        (_break_type, "runs[0].seed must be int"),
        (_break_times, "runs[0].trials[1].times_ms"),
        (_break_missing, "best[0] lacks 'speedup'"),
    ],
)
def test_malformed_import_writes_nothing(store, tmp_path, breakage, reason):
    doc = _valid_doc(store, tmp_path)
    breakage(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with Store("sqlite://") as fresh:
        with pytest.raises(StoreError, match="not a valid tuning-database export") as info:
            fresh.import_json(bad)
        assert reason in str(info.value)
        assert snapshot(fresh) == ([], [], {}, [])


def test_import_of_non_json_and_missing_files(store, tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("{ not json")
    with pytest.raises(StoreError, match="junk.json is not a valid tuning-database export"):
        store.import_json(junk)
    with pytest.raises(StoreError, match="cannot read tuning export"):
        store.import_json(tmp_path / "absent.json")
    junk.write_text("[1, 2, 3]")
    with pytest.raises(StoreError, match="must be an object"):
        store.import_json(junk)
    assert store.devices() == []


# -- seeding ------------------------------------------------------------------------------------


def test_seed_from_package(store, tmp_path, monkeypatch):
    with Store("sqlite://") as source:
        populate(source)
        source.export_json(tmp_path / "h200.json")
    shipped = [("h200.json", (tmp_path / "h200.json").read_text())]
    monkeypatch.setattr(export_mod, "shipped_exports", lambda: shipped)
    assert store.seed_from_package() == 5  # runs and best configurations; trials come by import
    assert store.seed_from_package() == 0
    assert all(store.trials(r.id) == [] for r in store.runs())
    replayed = [b for b in store.all_best() if b.replay]
    assert [b.device for b in replayed] == [A100]  # the flag travels as it was in the file
    assert [r.key.replay for r in store.runs()] == [False, True]


def test_a_default_database_takes_the_records_shipped_since_it_was_made(tmp_path, monkeypatch):
    """A default database seeded by an older package holds no record of the kernels shipped
    since: the next process that opens it imports the shipped documents (runs and bests, the
    newer of two winning), once; a database named by URL is left as it is; so is a default
    database whose kernel versions are all known already."""
    import tuning_db.store as store_mod

    with Store("sqlite://") as source:
        populate(source)
        source.export_json(tmp_path / "old.json")
    old = (tmp_path / "old.json").read_text()
    new = old.replace(KV.digest, "sha256:fed987")  # the same records, measured on newer kernels
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("SSSP_TUNING_DB", raising=False)
    monkeypatch.setattr(store_mod, "_SHIPPED_CHECKED", set())
    monkeypatch.setattr(export_mod, "shipped_exports", lambda: [("a.json", old)])
    with Store() as made:  # seeded by the older package
        assert made.created and {b.kernel_version.digest for b in made.all_best()} == {KV.digest}
    monkeypatch.setattr(export_mod, "shipped_exports", lambda: [("a.json", old), ("b.json", new)])
    with Store(f"sqlite:///{tuning_db.default_path()}") as named:  # named by URL: nothing taken
        assert {b.kernel_version.digest for b in named.all_best()} == {KV.digest}
    with Store() as upgraded:
        assert not upgraded.created
        digests = sorted({b.kernel_version.digest for b in upgraded.all_best()})
        assert digests == sorted({KV.digest, "sha256:fed987"})
        assert len(upgraded.all_best()) == 6 and len(upgraded.runs()) == 4
    calls: list[int] = []
    monkeypatch.setattr(Store, "seed_from_package", lambda self: calls.append(1) or 0)
    Store().close()  # this process compared them already
    monkeypatch.setattr(store_mod, "_SHIPPED_CHECKED", set())
    Store().close()  # another process: every shipped kernel version is known
    assert calls == []


def test_seed_without_shipped_data_is_a_no_op(store):
    assert store.seed_from_package() == 0
    assert store.devices() == []


def test_shipped_exports_lists_json_files():
    # The real package data (tuning_db/data may not exist yet): (name, text) pairs, by name.
    shipped = REAL_SHIPPED_EXPORTS()
    assert [name for name, _ in shipped] == sorted(name for name, _ in shipped)
    for name, body in shipped:
        assert name.endswith(".json") and json.loads(body)["schema_version"] in (1, EXPORT_VERSION)


def test_default_database_is_seeded_once(tmp_path, monkeypatch):
    with Store("sqlite://") as source:
        source.put_best(best(replay=True))
        source.export_json(tmp_path / "ship.json")
    calls = []

    def shipped():
        calls.append(1)
        return [("ship.json", (tmp_path / "ship.json").read_text())]

    monkeypatch.setattr(export_mod, "shipped_exports", shipped)
    with Store() as s:
        assert s.created
        assert s.all_best() == [best(replay=True)]
    with Store() as s:
        assert not s.created
        assert len(s.all_best()) == 1
    # Read to seed, then to compare the kernel versions with the database's (none new: no
    # import, the best above is still the one record)
    assert len(calls) == 2
    with Store(f"sqlite:///{tmp_path / 'explicit.sqlite'}") as s:  # only the default is seeded
        assert s.all_best() == []


def test_broken_shipped_data_leaves_no_half_made_database(tmp_path, monkeypatch):
    monkeypatch.setattr(export_mod, "shipped_exports", lambda: [("bad.json", "{oops")])
    with pytest.raises(StoreError, match="shipped data bad.json"):
        Store()
    monkeypatch.setattr(export_mod, "shipped_exports", lambda: [])
    with Store() as s:  # a later open starts over
        assert s.created


def test_package_exports():
    for name in ("Store", "open_store", "default_url", "RunKey", "BestRecord", "TrialRecord"):
        assert name in tuning_db.__all__ and hasattr(tuning_db, name)
    with tuning_db.open_store("sqlite://") as s:
        assert isinstance(s, Store) and s.created


def _filler(col: Any, parents: dict[str, int]) -> object:
    """A value for a NOT NULL column of an old revision's row (its parents' ids for keys)."""
    import sqlalchemy as sa

    if col.foreign_keys:
        return parents[next(iter(col.foreign_keys)).column.table.name]
    t = col.type
    if isinstance(t, sa.Boolean):
        return False
    if isinstance(t, sa.Integer):
        return 1
    if isinstance(t, sa.Float):
        return 1.0
    if isinstance(t, sa.DateTime):
        return dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    if isinstance(t, sa.JSON):
        return {}
    if col.name == "options":
        return "{}"
    return "256-N" if col.name.endswith("_label") else "x"


@pytest.mark.parametrize("kind", ["file", "postgresql"])
def test_revision_0001_upgrades_to_the_diameter_key(kind, tmp_path):
    """A database of revision 0001 (classes keyed by size and degree, rows referring to them) is
    refused with the upgrade command, then upgraded: its classes become low-diameter ones, every
    row keeps its class, and a high-diameter class of the same size and degree can be stored."""

    import sqlalchemy as sa
    from alembic import command

    from sssp.classes import GraphClass
    from tuning_db import schema

    with database(kind, tmp_path) as url:
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            command.upgrade(schema._config(conn), "0001")
            meta = sa.MetaData()
            meta.reflect(conn)
            ids: dict[str, int] = {}
            for name in (
                "sssp_devices",
                "sssp_kernel_versions",
                "sssp_graph_classes",
                "sssp_tuning_runs",
                "sssp_best_configs",
            ):
                table = meta.tables[name]
                row = {
                    c.name: _filler(c, ids)
                    for c in table.columns
                    if not c.primary_key and not c.nullable
                }
                if name == "sssp_graph_classes":
                    row.update(size="98k", degree="deg2")
                if name == "sssp_devices":
                    row.update(uuid="GPU-old")
                ids[name] = conn.execute(
                    table.insert().values(**row).returning(table.c.id)
                ).scalar_one()
        engine.dispose()
        with pytest.raises(StoreError, match=r"tune upgrade --db URL"):
            Store(url)
        with Store(url, upgrade=True) as s:
            with s._engine.connect() as conn:
                classes = conn.execute(
                    text("SELECT id, size, degree, diameter FROM sssp_graph_classes")
                ).all()
                refs = (
                    conn.execute(text("SELECT graph_class_id FROM sssp_best_configs"))
                    .scalars()
                    .all()
                )
            assert [tuple(r) for r in classes] == [
                (ids["sssp_graph_classes"], "98k", "deg2", "lowdiam")
            ]
            assert refs == [ids["sssp_graph_classes"]]
            s.put_best(best(graph_class=GraphClass("98k", "deg2", "highdiam")))
            got = {b.graph_class for b in s.all_best() if b.device.uuid == H200.uuid}
            assert got == {GraphClass("98k", "deg2", "highdiam")}


@pytest.mark.parametrize("kind", ["file", "postgresql"])
def test_revision_0002_upgrades_to_trial_slots(kind, tmp_path):
    """A database of revision 0002 has no slot table: refused with the upgrade command, then
    upgraded in place; its runs keep their trials and take slots from then on."""
    import sqlalchemy as sa
    from alembic import command

    from tuning_db import schema

    with database(kind, tmp_path) as url:
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            command.upgrade(schema._config(conn), "0002")
        engine.dispose()
        with pytest.raises(
            StoreError,
            match=rf"revision 0002; this code needs {head_revision()}: upgrade it with `tune upgrade",
        ):
            Store(url)
        with Store(url, upgrade=True) as s:
            run, _ = s.open_run(key(), budget=None, seed=0, owner="me")
            assert s.reserve_trial(run.id, "relax", KernelConfig.parse("256-N"), "me")
            assert not s.reserve_trial(run.id, "relax", KernelConfig.parse("256-N"), "me")
        with Store(url) as s:
            assert len(s.runs()) == 1


@pytest.mark.parametrize("kind", ["file", "postgresql"])
def test_revision_0003_upgrades_to_typed_algorithm_choices(kind, tmp_path):
    """A database of revision 0003 keeps what an "auto" record runs in its options only: refused
    with the upgrade command, then upgraded, every best configuration names what runs as typed
    fields filled from its options (Crauser OUT for an "auto" row that names none, near-far's
    scale 1 when it has none) and the look-up runs them."""
    import sqlalchemy as sa
    from alembic import command

    from tuning_db import schema

    stored = {  # size: (algorithm, options)
        "98k": ("auto", {"algorithm": "near-far", "delta_scale": 64.0, "loop": "persistent"}),
        "24k": ("auto", {"algorithm": "near-far"}),
        "6k": ("auto", {"loop": "persistent"}),
        "1k": ("martin", {"loop": "persistent"}),
    }
    with database(kind, tmp_path) as url:
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            command.upgrade(schema._config(conn), "0003")
            meta = sa.MetaData()
            meta.reflect(conn)
            ids: dict[str, int] = {}
            for name in ("sssp_devices", "sssp_kernel_versions"):
                table = meta.tables[name]
                row = {c.name: _filler(c, ids) for c in table.columns if not c.primary_key}
                if name == "sssp_devices":
                    row.update(uuid=H200.uuid, name=H200.name, compute_capability="9.0")
                ids[name] = conn.execute(
                    table.insert().values(**row).returning(table.c.id)
                ).scalar_one()
            table = meta.tables["sssp_best_configs"]
            assert "chosen_algorithm" not in table.columns
            for size, (algorithm, options) in stored.items():
                gc = meta.tables["sssp_graph_classes"]
                class_id = conn.execute(
                    gc.insert()
                    .values(size=size, degree="deg2", diameter="lowdiam")
                    .returning(gc.c.id)
                ).scalar_one()
                row = {
                    c.name: _filler(c, {**ids, "sssp_graph_classes": class_id})
                    for c in table.columns
                    if not c.primary_key and not c.nullable
                }
                row.update(algorithm=algorithm, variant="successors", options=json.dumps(options))
                conn.execute(table.insert().values(**row))
        engine.dispose()
        with pytest.raises(
            StoreError,
            match=rf"revision 0003; this code needs {head_revision()}: upgrade it with `tune upgrade",
        ):
            Store(url)
        with Store(url, upgrade=True) as s:
            got = {
                b.graph_class.size: (b.algorithm, b.chosen_algorithm, b.delta_scale)
                for b in s.all_best()
            }
        assert got == {
            "98k": ("auto", "near-far", 64.0),
            "24k": ("auto", "near-far", 1.0),
            "6k": ("auto", "crauser", None),
            "1k": ("martin", "martin", None),
        }
        with Store(url) as s:  # upgraded in place: opens as it is now
            assert len(s.all_best()) == 4


def test_best_record_typed_choice_reads_old_options_and_refuses_contradictions():
    auto = best(algorithm="auto", options={"algorithm": "near-far", "delta_scale": 8})
    assert (auto.chosen_algorithm, auto.delta_scale) == ("near-far", 8.0)
    assert best(algorithm="auto").chosen_algorithm == "crauser"
    assert (best().chosen_algorithm, best().delta_scale) == ("crauser", None)
    typed = best(algorithm="auto", chosen_algorithm="crauser-inout")
    assert typed.chosen_algorithm == "crauser-inout" and typed.delta_scale is None
    with pytest.raises(ValueError, match="contradicts options"):
        best(algorithm="auto", chosen_algorithm="crauser", options={"algorithm": "near-far"})
    with pytest.raises(ValueError, match="only an 'auto' record runs another one"):
        best(algorithm="crauser", chosen_algorithm="near-far")
    with pytest.raises(ValueError, match="delta_scale applies to near-far only"):
        best(algorithm="auto", chosen_algorithm="crauser", delta_scale=2.0)
    with pytest.raises(ValueError, match="delta_scale must be a positive number"):
        best(algorithm="auto", chosen_algorithm="near-far", delta_scale=0.0)


def test_typed_choice_round_trips_through_store_and_export(tmp_path):
    rec = best(algorithm="auto", chosen_algorithm="near-far", delta_scale=16.0)
    with Store("sqlite://") as s:
        s.put_best(rec)
        (got,) = s.all_best()
        assert (got.chosen_algorithm, got.delta_scale) == ("near-far", 16.0)
        s.export_json(tmp_path / "e.json")
    doc = json.loads((tmp_path / "e.json").read_text())
    assert doc["schema_version"] == EXPORT_VERSION
    assert (doc["best"][0]["chosen_algorithm"], doc["best"][0]["delta_scale"]) == ("near-far", 16.0)
    # A version-2 document (no typed fields) reads them from the options.
    old = dict(doc, schema_version=2)
    old["best"] = [
        {
            **{
                k: v
                for k, v in doc["best"][0].items()
                if k not in ("chosen_algorithm", "delta_scale")
            },
            "options": {"algorithm": "near-far", "delta_scale": 4.0},
        }
    ]
    (tmp_path / "v2.json").write_text(json.dumps(old))
    with Store("sqlite://") as s:
        s.import_json(tmp_path / "v2.json")
        (got,) = s.all_best()
        assert (got.chosen_algorithm, got.delta_scale) == ("near-far", 4.0)
