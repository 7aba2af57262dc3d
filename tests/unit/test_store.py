"""The SQLite store: WAL, schema version, jobs, events, attempts, devices, transactions."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.model import Attempt, DeviceState, JobSpec, Outcome, queue_order_key
from gpuherd.core.states import JobState, OutcomeKind
from gpuherd.errors import StoreError
from gpuherd.store import SCHEMA_VERSION, DeviceConfig, NewJob, Store
from gpuherd.store_reads import RowJobs
from gpuherd.store_schema import MIGRATIONS

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/home/u"}


def spec(command: str = "true", **kw: object) -> JobSpec:
    kw.setdefault("env", ENV)
    return JobSpec(command=command, cwd="/tmp", **kw)  # type: ignore[arg-type]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "herd.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    s = Store(db_path)
    yield s
    s.close()


def raw(path: Path, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Read with a separate connection: sees only what is committed."""
    con = sqlite3.connect(path)
    try:
        return list(con.execute(sql, args))
    finally:
        con.close()


def ready_ids(store: Store, cpu_only: bool = False) -> list[int]:
    return [job.id for job in store.queued_ready(0 if cpu_only else None)]


# ---- opening --------------------------------------------------------------------------------


def test_fresh_store_uses_wal_and_current_schema(store: Store, db_path: Path) -> None:
    assert db_path.exists()
    assert raw(db_path, "PRAGMA journal_mode") == [("wal",)]
    assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert store.counts() == {}
    assert store.list_jobs() == []


def test_reopening_an_existing_store_keeps_the_schema(db_path: Path) -> None:
    Store(db_path).close()
    s = Store(db_path)
    try:
        assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    finally:
        s.close()


def test_a_scratch_store_keeps_no_log_rolls_back_and_is_whole_once_closed(db_path: Path) -> None:
    """`gpuherd run`'s store: no write-ahead log and no syncs, but still all-or-nothing."""
    s = Store(db_path, scratch=True)
    try:
        [kept] = s.add_jobs([NewJob(spec("kept"))], now=1.0)
        with pytest.raises(RuntimeError), s.transaction():
            s.add_jobs([NewJob(spec("lost"))], now=2.0)
            s.update_job(kept, 2.0, "start", JobState.RUNNING)
            raise RuntimeError
        assert [j.spec.command for j in s.list_jobs()] == ["kept"]
        assert s.get_job(kept).state is JobState.QUEUED  # type: ignore[union-attr]
        other = sqlite3.connect(db_path, timeout=0)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("SELECT COUNT(*) FROM jobs")  # held by its one process
        other.close()
        assert sorted(p.name for p in db_path.parent.iterdir()) == ["herd.db"]
    finally:
        s.close()
    assert raw(db_path, "SELECT command FROM jobs") == [("kept",)]


def test_an_older_schema_is_upgraded_and_keeps_its_jobs(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    con = sqlite3.connect(db_path)
    for script in MIGRATIONS[:2]:  # a database of the release before `--begin`
        con.executescript(script)
    con.execute("INSERT INTO envs(id, hash, json) VALUES (1, 'h', '{}')")
    con.execute(
        "INSERT INTO jobs(command, cwd, env_id, env_overrides, gpus, after, retries, grace,"
        " state, priority, position, attempt, created_at, queued_at)"
        " VALUES ('old', '/', 1, '{}', 1, '[]', 0, 10, 'held', 0, 1, 0, 1, 1)"
    )
    con.execute("PRAGMA user_version = 2")
    con.commit()
    con.close()
    s = Store(db_path)
    try:
        [job] = s.list_jobs()
        assert (job.spec.command, job.state, job.release_at) == ("old", JobState.HELD, None)
        assert job.spec.after_any == ()  # (migration 4: no job waited for any end before)
        assert job.spec.only_gpus == ()  # (migration 5: every job could use any GPU)
        assert s.next_release() is None
        assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    finally:
        s.close()


def test_newer_schema_is_refused(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    con = sqlite3.connect(db_path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(StoreError, match="newer"):
        Store(db_path)
    assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]


@pytest.mark.parametrize("size", [16, 100, 1024, 4096, 65536])
def test_garbage_file_is_an_error_and_left_untouched(db_path: Path, size: int) -> None:
    db_path.parent.mkdir(parents=True)
    garbage = b"\x00garbage!" + os.urandom(size)
    assert not garbage.startswith(b"SQLite format 3")
    db_path.write_bytes(garbage)
    with pytest.raises(StoreError) as info:
        Store(db_path)
    assert str(db_path) in str(info.value)
    assert db_path.read_bytes() == garbage


def test_text_file_named_herd_db_is_an_error(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    text = b"this is not a database\n" * 200
    db_path.write_bytes(text)
    with pytest.raises(StoreError):
        Store(db_path)
    assert db_path.read_bytes() == text


# ---- adding jobs ----------------------------------------------------------------------------


def test_add_jobs_returns_increasing_ids_and_records_submit(store: Store) -> None:
    first = store.add_jobs([NewJob(spec("echo 1")), NewJob(spec("echo 2"))], now=10.0)
    second = store.add_jobs([NewJob(spec("echo 3"), held=True)], now=11.0)
    ids = first + second
    assert len(ids) == 3
    assert ids == sorted(ids)
    assert len(set(ids)) == 3
    for job_id, state, at in zip(
        ids, ["queued", "queued", "held"], [10.0, 10.0, 11.0], strict=True
    ):
        events = store.events(job_id)
        assert len(events) == 1
        ev = events[0]
        assert (ev.job_id, ev.event, ev.from_state, ev.to_state, ev.at) == (
            job_id,
            "submit",
            None,
            state,
            at,
        )
    assert store.get_job(ids[2]).state is JobState.HELD  # type: ignore[union-attr]


def test_add_jobs_round_trips_the_spec(store: Store) -> None:
    s = JobSpec(
        command="python train.py --lr 0.1",
        cwd="/work",
        env={"A": "1", "B": "two words"},
        env_overrides={"SEED": "3"},
        name="run-a",
        gpus=2,
        mem=8 * 2**30,
        after=(),
        retries=2,
        timeout=60.0,
        grace=5.0,
        project="p",
    )
    [job_id] = store.add_jobs([NewJob(s, priority=4)], now=7.0)
    job = store.get_job(job_id)
    assert job is not None
    assert job.spec == s
    assert dict(job.spec.env) == {"A": "1", "B": "two words"}
    assert job.priority == 4
    assert job.state is JobState.QUEUED
    assert job.attempt == 0
    assert job.created_at == job.queued_at == 7.0
    assert job.outcome is None


def test_same_env_is_stored_once(store: Store, db_path: Path) -> None:
    store.add_jobs([NewJob(spec(f"echo {i}")) for i in range(100)], now=1.0)
    assert raw(db_path, "SELECT COUNT(*) FROM envs") == [(1,)]
    store.add_jobs([NewJob(spec("echo other", env={"X": "1"}))], now=2.0)
    store.add_jobs([NewJob(spec("echo same"))], now=3.0)
    assert raw(db_path, "SELECT COUNT(*) FROM envs") == [(2,)]
    # Key order does not make a new environment.
    store.add_jobs([NewJob(spec("echo r", env=dict(reversed(list(ENV.items())))))], now=4.0)
    assert raw(db_path, "SELECT COUNT(*) FROM envs") == [(2,)]
    assert all(dict(j.spec.env) == ENV for j in store.list_jobs() if j.spec.command != "echo other")


def test_counts(store: Store) -> None:
    ids = store.add_jobs(
        [NewJob(spec()), NewJob(spec()), NewJob(spec(), held=True), NewJob(spec())], now=1.0
    )
    store.update_job(ids[3], 2.0, "start", JobState.RUNNING)
    assert store.counts() == {"queued": 2, "held": 1, "running": 1}


# ---- queued_ready ---------------------------------------------------------------------------


def test_queued_ready_dispatch_order(store: Store) -> None:
    ids = store.add_jobs(
        [
            NewJob(spec("a"), priority=0),
            NewJob(spec("b"), priority=5),
            NewJob(spec("c"), priority=0),
            NewJob(spec("d"), priority=5),
            NewJob(spec("e"), priority=-1),
        ],
        now=1.0,
    )
    a, b, c, d, e = ids
    assert ready_ids(store) == [b, d, a, c, e]
    # Moving c to the front of its priority class.
    store.update_job(c, 2.0, "move", position=0.5)
    assert ready_ids(store) == [b, d, c, a, e]
    # Equal position: id breaks the tie.
    store.update_job(a, 2.0, "move", position=0.5)
    assert ready_ids(store) == [b, d, a, c, e]


def test_queued_ready_gives_a_job_unchanged_since_the_last_pass_as_it_was_built(
    store: Store,
) -> None:
    """Placement reads the same queued jobs pass after pass (a window of 2,000 none of which
    fits: 37 ms a pass, 15 once kept): a job whose row is unchanged is not built again; one
    whose row changed (an edit, a move, a new environment) is read anew."""
    a, b = store.add_jobs([NewJob(spec("a", gpus=2)), NewJob(spec("b", gpus=2))], now=1.0)
    first = {job.id: job for job in store.queued_ready()}
    again = {job.id: job for job in store.queued_ready()}
    assert again[a] is first[a] and again[b] is first[b]
    store.update_job(a, 2.0, "edit", command="a2", gpus=1, mem=3 * 2**30, priority=4)
    store.update_job(b, 2.0, "move", position=0.25)
    edited = {job.id: job for job in store.queued_ready()}
    assert (edited[a].spec.command, edited[a].spec.gpus, edited[a].spec.mem) == ("a2", 1, 3 << 30)
    assert edited[a].priority == 4 and edited[b].position == 0.25
    assert edited[b] is not first[b] and edited[b].spec == first[b].spec
    assert [job.id for job in store.queued_ready(1)] == [a]  # (its GPU count's stream)


def test_jobs_that_left_the_queue_are_not_kept_once_a_pass_reads_it_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The jobs queued_ready built stayed kept after they started, ended and were cleaned,
    until 8,000 were: an idle daemon held ~14 MB of them (a soak test's growth). A read of
    the whole queue forgets them, once more than SLACK may be kept."""
    monkeypatch.setattr(RowJobs, "SLACK", 1)
    a, b, c = store.add_jobs([NewJob(spec(gpus=1)), NewJob(spec(gpus=2)), NewJob(spec())], 1.0)
    kept = store._ready_jobs._kept  # (what the memory held: no public view of it)
    assert ready_ids(store) == [a, b, c] and set(kept) == {a, b, c}
    store.update_job(a, 2.0, "start", JobState.RUNNING)
    assert ready_ids(store) == [b, c] and set(kept) == {a, b, c}  # (within SLACK)
    store.update_job(b, 2.0, "start", JobState.RUNNING)
    first = next(store.queued_ready())  # a pass that stops early forgets nothing
    assert first.id == c and set(kept) == {a, b, c}
    assert [job.id for job in store.queued_ready(1)] == [c]  # (a GPU count's stream: kept all)
    assert set(kept) == {a, b, c}
    assert ready_ids(store) == [c] and set(kept) == {c}
    store.update_job(c, 3.0, "start", JobState.RUNNING)
    assert ready_ids(store) == [] and set(kept) == {c}  # (within SLACK)


def test_queued_ready_skips_held_and_non_queued(store: Store) -> None:
    a, _held, c = store.add_jobs([NewJob(spec()), NewJob(spec(), held=True), NewJob(spec())], 1.0)
    store.update_job(c, 2.0, "start", JobState.RUNNING)
    assert ready_ids(store) == [a]


def test_queued_ready_waits_for_all_dependencies_to_succeed(store: Store) -> None:
    a, b = store.add_jobs([NewJob(spec("a")), NewJob(spec("b"))], now=1.0)
    [c] = store.add_jobs([NewJob(spec("c", after=(a, b)))], now=2.0)
    assert ready_ids(store) == [a, b]
    assert store.unmet_deps(c) == [(a, "queued", "after"), (b, "queued", "after")]
    assert store.waiters_of(a, JobState.FAILED) == [c]
    assert store.waiters_of(a, JobState.SUCCEEDED) == []

    store.update_job(a, 3.0, "start", JobState.RUNNING)
    store.update_job(a, 4.0, "succeed", JobState.SUCCEEDED)
    assert ready_ids(store) == [b]
    assert store.unmet_deps(c) == [(b, "queued", "after")]

    store.update_job(b, 5.0, "start", JobState.RUNNING)
    assert ready_ids(store) == []
    store.update_job(b, 6.0, "fail", JobState.FAILED)
    assert ready_ids(store) == []
    store.update_job(b, 7.0, "retry", JobState.QUEUED)
    store.update_job(b, 8.0, "start", JobState.RUNNING)
    store.update_job(b, 9.0, "succeed", JobState.SUCCEEDED)
    assert ready_ids(store) == [c]
    assert store.unmet_deps(c) == []


def test_queued_ready_cpu_only(store: Store) -> None:
    ids = store.add_jobs(
        [
            NewJob(spec("g1", gpus=1)),
            NewJob(spec("c1", gpus=0)),
            NewJob(spec("g2", gpus=2)),
            NewJob(spec("c2", gpus=0), priority=3),
        ],
        now=1.0,
    )
    assert ready_ids(store, cpu_only=True) == [ids[3], ids[1]]
    assert ready_ids(store) == [ids[3], ids[0], ids[1], ids[2]]


def test_closing_queued_ready_early_then_writing_commits(store: Store, db_path: Path) -> None:
    store.add_jobs([NewJob(spec(f"echo {i}")) for i in range(50)], now=1.0)
    pending = store.queued_ready()
    first = next(pending)
    second = next(pending)
    assert first.id < second.id
    pending.close()

    [new_id] = store.add_jobs([NewJob(spec("later"))], now=2.0)
    store.update_job(first.id, 3.0, "start", JobState.RUNNING)
    assert raw(db_path, "SELECT COUNT(*) FROM jobs") == [(51,)]
    assert raw(db_path, "SELECT state FROM jobs WHERE id = ?", (first.id,)) == [("running",)]
    assert raw(db_path, "SELECT command FROM jobs WHERE id = ?", (new_id,)) == [("later",)]


def test_queued_ready_inside_a_transaction_closed_early(store: Store, db_path: Path) -> None:
    store.add_jobs([NewJob(spec(f"echo {i}")) for i in range(5)], now=1.0)
    with store.transaction():
        pending = store.queued_ready()
        job = next(pending)
        pending.close()
        store.update_job(job.id, 2.0, "start", JobState.RUNNING)
    assert raw(db_path, "SELECT state FROM jobs WHERE id = ?", (job.id,)) == [("running",)]


@settings(deadline=None, max_examples=25)
@given(
    jobs=st.lists(
        st.tuples(st.integers(-3, 3), st.one_of(st.none(), st.sampled_from([0.5, 1.5, 2.0]))),
        min_size=1,
        max_size=12,
    )
)
def test_queued_ready_order_matches_queue_order_key(jobs: list[tuple[int, float | None]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        s = Store(Path(tmp) / "herd.db")
        try:
            ids = s.add_jobs([NewJob(spec(), priority=p) for p, _ in jobs], now=1.0)
            for job_id, (_, position) in zip(ids, jobs, strict=True):
                if position is not None:
                    s.update_job(job_id, 2.0, "move", position=position)
            expected = [j.id for j in sorted(s.list_jobs(), key=queue_order_key)]
            assert ready_ids(s) == expected
        finally:
            s.close()


# ---- update_job and events ------------------------------------------------------------------


def test_update_job_records_from_and_to_states(store: Store) -> None:
    [job_id] = store.add_jobs([NewJob(spec())], now=1.0)
    store.update_job(
        job_id,
        2.0,
        "start",
        JobState.RUNNING,
        detail="on GPU 0,1",
        attempt=1,
        started_at=2.0,
        assigned=(0, 1),
        pid=None,
    )
    store.update_job(job_id, 2.5, "spawn", pid=4321, detail="pid 4321")
    outcome = Outcome(OutcomeKind.CUDA_OOM, exit_code=1, message="CUDA out of memory")
    store.update_job(job_id, 3.0, "fail", JobState.FAILED, ended_at=3.0, outcome=outcome)
    store.update_job(job_id, 4.0, "retry", JobState.QUEUED)

    events = store.events(job_id)
    assert [(e.event, e.from_state, e.to_state) for e in events if e.event != "spawn"] == [
        ("submit", None, "queued"),
        ("start", "queued", "running"),
        ("fail", "running", "failed"),
        ("retry", "failed", "queued"),
    ]
    assert [e.at for e in events] == [1.0, 2.0, 2.5, 3.0, 4.0]
    assert events[1].detail == "on GPU 0,1"
    assert events[2].detail == "pid 4321"

    job = store.get_job(job_id)
    assert job is not None
    assert job.state is JobState.QUEUED
    assert job.queued_at == 4.0  # entering queued again restarts the wait
    assert job.attempt == 1
    assert job.gpus == (0, 1)
    assert job.pid == 4321
    assert job.ended_at == 3.0
    assert job.outcome == outcome


def test_update_job_outcome_none_clears_it(store: Store) -> None:
    [job_id] = store.add_jobs([NewJob(spec())], now=1.0)
    store.update_job(job_id, 2.0, "x", outcome=Outcome(OutcomeKind.SIGNAL, signal=9))
    assert store.get_job(job_id).outcome == Outcome(OutcomeKind.SIGNAL, signal=9)  # type: ignore[union-attr]
    store.update_job(job_id, 3.0, "y", outcome=None)
    assert store.get_job(job_id).outcome is None  # type: ignore[union-attr]


def test_events_of_all_jobs_in_order(store: Store) -> None:
    a, b = store.add_jobs([NewJob(spec()), NewJob(spec())], now=1.0)
    store.update_job(a, 2.0, "hold", JobState.HELD)
    assert [(e.job_id, e.event) for e in store.events()] == [
        (a, "submit"),
        (b, "submit"),
        (a, "hold"),
    ]
    assert len(store.events(limit=2)) == 2


# ---- transactions ---------------------------------------------------------------------------


def test_transaction_rolls_back_everything_on_exception(store: Store, db_path: Path) -> None:
    [kept] = store.add_jobs([NewJob(spec("kept"))], now=1.0)
    with pytest.raises(RuntimeError, match="boom"), store.transaction():
        store.add_jobs([NewJob(spec("lost"))], now=2.0)
        store.update_job(kept, 2.0, "start", JobState.RUNNING)
        store.set_setting("paused", "1")
        store.put_device(DeviceConfig(0, 1, DeviceState.ENABLED))
        with store.transaction():
            store.add_jobs([NewJob(spec("lost too"))], now=2.0)
        raise RuntimeError("boom")
    assert [j.command for j in (x.spec for x in store.list_jobs())] == ["kept"]
    assert store.get_job(kept).state is JobState.QUEUED  # type: ignore[union-attr]
    assert [e.event for e in store.events()] == ["submit"]
    assert store.get_setting("paused") is None
    assert store.devices() == []
    assert raw(db_path, "SELECT COUNT(*) FROM jobs") == [(1,)]
    # The store is usable afterwards.
    store.add_jobs([NewJob(spec("after"))], now=3.0)
    assert raw(db_path, "SELECT COUNT(*) FROM jobs") == [(2,)]


def test_exception_in_a_nested_transaction_rolls_back_the_outer(store: Store) -> None:
    with pytest.raises(KeyError), store.transaction():
        store.add_jobs([NewJob(spec("outer"))], now=1.0)
        with store.transaction():
            store.add_jobs([NewJob(spec("inner"))], now=1.0)
            raise KeyError("x")
    assert store.list_jobs() == []
    assert store.events() == []


def test_nested_transaction_commits_only_with_the_outer(store: Store, db_path: Path) -> None:
    with store.transaction():
        with store.transaction():
            store.add_jobs([NewJob(spec("inner"))], now=1.0)
        # The inner block has ended, but nothing is visible to other connections yet.
        assert raw(db_path, "SELECT COUNT(*) FROM jobs") == [(0,)]
        store.set_setting("k", "v")
        assert raw(db_path, "SELECT COUNT(*) FROM meta WHERE key = 'k'") == [(0,)]
    assert raw(db_path, "SELECT COUNT(*) FROM jobs") == [(1,)]
    assert raw(db_path, "SELECT value FROM meta WHERE key = 'k'") == [("v",)]


def test_a_failed_savepoint_undoes_only_its_own_writes(store: Store, db_path: Path) -> None:
    [first, second] = store.add_jobs([NewJob(spec("a")), NewJob(spec("b"))], now=1.0)
    with store.transaction():
        with store.savepoint():
            store.update_job(first, 2.0, "hold", JobState.HELD)
        with pytest.raises(RuntimeError), store.savepoint():
            store.update_job(second, 2.0, "hold", JobState.HELD)
            raise RuntimeError("this job's action failed half-way")
        assert raw(db_path, "SELECT COUNT(*) FROM events WHERE event = 'hold'") == [(0,)]
    states = {job.id: job.state for job in store.list_jobs()}
    assert states == {first: JobState.HELD, second: JobState.QUEUED}
    assert raw(db_path, "SELECT job_id FROM events WHERE event = 'hold'") == [(first,)]


def test_a_savepoint_outside_a_transaction_is_one(store: Store, db_path: Path) -> None:
    with pytest.raises(RuntimeError), store.savepoint():
        store.add_jobs([NewJob(spec("lost"))], now=1.0)
        raise RuntimeError("boom")
    with store.savepoint():
        store.add_jobs([NewJob(spec("kept"))], now=1.0)
    assert raw(db_path, "SELECT command FROM jobs") == [("kept",)]


def test_begin_times_are_held_jobs_released_earliest_first(store: Store) -> None:
    late, plain, early, gone = store.add_jobs(
        [
            NewJob(spec("late"), release_at=300.0),
            NewJob(spec("plain"), held=True),
            NewJob(spec("early"), release_at=200.0),
            NewJob(spec("gone"), release_at=100.0),
        ],
        now=1.0,
    )
    assert {j.id: (j.state, j.release_at) for j in store.list_jobs()} == {
        late: (JobState.HELD, 300.0),
        plain: (JobState.HELD, None),
        early: (JobState.HELD, 200.0),
        gone: (JobState.HELD, 100.0),
    }
    store.update_job(gone, 2.0, "cancel", JobState.CANCELLED)  # no longer held: not due
    assert store.next_release() == 200.0
    assert store.due_releases(199.0) == []
    assert [j.id for j in store.due_releases(1000.0)] == [early, late]
    store.update_job(early, 3.0, "release", JobState.QUEUED, release_at=None)
    assert store.next_release() == 300.0


def test_settings_round_trip(store: Store) -> None:
    assert store.get_setting("x") is None
    assert store.get_setting("x", "d") == "d"
    store.set_setting("x", "1")
    store.set_setting("x", "2")
    assert store.get_setting("x") == "2"


# ---- deleting -------------------------------------------------------------------------------


def attempt(job_id: int, number: int, **kw: object) -> Attempt:
    return Attempt(
        job_id=job_id,
        number=number,
        gpus=(0,),
        gpu_uuids=("GPU-aaaa",),
        dir=f"/h/jobs/{job_id}/attempt-{number}",
        host="box",
        started_at=float(number),
        **kw,  # type: ignore[arg-type]
    )


def test_delete_jobs_removes_events_attempts_and_deps(store: Store, db_path: Path) -> None:
    [a] = store.add_jobs([NewJob(spec("a"))], now=1.0)
    b, c = store.add_jobs([NewJob(spec("b", after=(a,))), NewJob(spec("c", after=(a,)))], 2.0)
    for job_id in (a, b, c):
        store.add_attempt(attempt(job_id, 1))
    store.delete_jobs([b, a])

    assert [j.id for j in store.list_jobs()] == [c]
    assert store.get_job(a) is None and store.get_job(b) is None
    for job_id in (a, b):
        assert store.events(job_id) == []
        assert store.attempts(job_id) == []
        assert raw(db_path, "SELECT COUNT(*) FROM deps WHERE job = ?", (job_id,)) == [(0,)]
    assert raw(db_path, "SELECT COUNT(*) FROM events WHERE job_id IN (?, ?)", (a, b)) == [(0,)]
    assert raw(db_path, "SELECT COUNT(*) FROM attempts WHERE job_id IN (?, ?)", (a, b)) == [(0,)]
    # The survivor keeps its own rows.
    assert len(store.events(c)) == 1
    assert len(store.attempts(c)) == 1
    assert raw(db_path, "SELECT dep FROM deps WHERE job = ?", (c,)) == [(a,)]


def test_ids_of_deleted_jobs_are_not_reused(store: Store) -> None:
    ids = store.add_jobs([NewJob(spec(str(i))) for i in range(3)], now=1.0)
    store.delete_jobs([ids[-1]])
    [new] = store.add_jobs([NewJob(spec("new"))], now=2.0)
    assert new > ids[-1]  # jobs/<id>/ of the deleted job never gets a new owner


def test_get_jobs_leaves_out_the_unknown_ids(store: Store) -> None:
    ids = store.add_jobs([NewJob(spec(str(i))) for i in range(3)], now=1.0)
    assert set(store.get_jobs([*ids, 999])) == set(ids)


# ---- attempts -------------------------------------------------------------------------------


def test_attempts_round_trip_with_outcomes(store: Store) -> None:
    [job_id] = store.add_jobs([NewJob(spec())], now=1.0)
    first = attempt(job_id, 1)
    second = Attempt(
        job_id=job_id,
        number=2,
        gpus=(1, 3),
        gpu_uuids=("GPU-b", "GPU-d"),
        dir="/h/jobs/1/attempt-2",
        host="node-2",
        started_at=20.0,
    )
    store.add_attempt(second)
    store.add_attempt(first)
    assert store.attempts(job_id) == [first, second]

    oom = Outcome(OutcomeKind.CUDA_OOM, exit_code=1, message="CUDA out of memory")
    store.update_attempt(job_id, 1, pid=111)
    store.update_attempt(job_id, 1, ended_at=5.0, outcome=oom)
    store.update_attempt(job_id, 2, pid=222, ended_at=30.0, outcome=Outcome(OutcomeKind.EXIT, 0))
    got = store.attempts(job_id)
    assert got[0] == attempt(job_id, 1, pid=111, ended_at=5.0, outcome=oom)
    assert got[1].outcome == Outcome(OutcomeKind.EXIT, 0)
    assert got[1].outcome.success  # type: ignore[union-attr]
    assert got[1].gpus == (1, 3)
    assert got[1].gpu_uuids == ("GPU-b", "GPU-d")
    assert got[1].pid == 222

    store.update_attempt(job_id, 2, outcome=Outcome(OutcomeKind.SIGNAL, signal=9, message="m"))
    assert store.attempts(job_id)[1].outcome == Outcome(OutcomeKind.SIGNAL, signal=9, message="m")

    store.delete_attempt(job_id, 2)
    assert [a.number for a in store.attempts(job_id)] == [1]


# ---- devices --------------------------------------------------------------------------------


def test_devices_replace_put_remove(store: Store) -> None:
    assert store.devices() == []
    store.replace_devices({2: 1, 0: 2, 1: 1})
    assert store.devices() == [
        DeviceConfig(0, 2, DeviceState.ENABLED, max_jobs=2),
        DeviceConfig(1, 1, DeviceState.ENABLED),
        DeviceConfig(2, 1, DeviceState.ENABLED),
    ]
    store.put_device(DeviceConfig(1, 3, DeviceState.DRAINING))
    store.put_device(DeviceConfig(5, 1, DeviceState.ENABLED))
    assert store.devices() == [
        DeviceConfig(0, 2, DeviceState.ENABLED, max_jobs=2),
        DeviceConfig(1, 3, DeviceState.DRAINING),
        DeviceConfig(2, 1, DeviceState.ENABLED),
        DeviceConfig(5, 1, DeviceState.ENABLED),
    ]
    store.remove_device(2)
    store.remove_device(42)  # absent: no error
    assert [d.index for d in store.devices()] == [0, 1, 5]
    store.replace_devices({7: 1})
    assert store.devices() == [DeviceConfig(7, 1, DeviceState.ENABLED)]


# ---- reopening ------------------------------------------------------------------------------


def test_reopened_store_sees_everything_committed(db_path: Path) -> None:
    s = Store(db_path)
    [a] = s.add_jobs([NewJob(spec("a", env={"K": "v"}), priority=2)], now=1.0)
    [b] = s.add_jobs([NewJob(spec("b", after=(a,)))], now=2.0)
    s.update_job(a, 3.0, "start", JobState.RUNNING, attempt=1, assigned=(0,), pid=77)
    s.add_attempt(attempt(a, 1, pid=77))
    s.set_setting("queue_paused", "1")
    s.replace_devices({0: 2})
    s.put_device(DeviceConfig(0, 2, DeviceState.DRAINING))
    with pytest.raises(RuntimeError), s.transaction():
        s.add_jobs([NewJob(spec("never"))], now=4.0)
        raise RuntimeError
    jobs_before = s.list_jobs()
    events_before = s.events()
    s.close()

    s = Store(db_path)
    try:
        assert s.list_jobs() == jobs_before
        assert [j.id for j in s.list_jobs()] == [a, b]
        job = s.get_job(a)
        assert job is not None
        assert job.state is JobState.RUNNING
        assert dict(job.spec.env) == {"K": "v"}
        assert job.pid == 77
        assert job.gpus == (0,)
        assert s.events() == events_before
        assert s.attempts(a) == [attempt(a, 1, pid=77)]
        assert s.get_setting("queue_paused") == "1"
        assert s.devices() == [DeviceConfig(0, 2, DeviceState.DRAINING)]
        assert s.unmet_deps(b) == [(a, "running", "after")]
        assert s.counts() == {"running": 1, "queued": 1}
        [c] = s.add_jobs([NewJob(spec("c"))], now=5.0)
        assert c > b
    finally:
        s.close()


def test_after_commit_runs_on_commit_and_never_after_a_rollback(store: Store) -> None:
    told: list[str] = []
    store.after_commit(lambda: told.append("outside"))  # no transaction: at once
    assert told == ["outside"]
    with store.transaction():
        store.after_commit(lambda: told.append("outer"))
        with store.transaction():  # nested: joins the outer one
            store.after_commit(lambda: told.append("inner"))
        assert told == ["outside"]
    assert told == ["outside", "outer", "inner"]

    with pytest.raises(RuntimeError), store.transaction():
        store.after_commit(lambda: told.append("rolled back"))
        raise RuntimeError
    with store.transaction():
        store.after_commit(lambda: told.append("kept"))
        with pytest.raises(RuntimeError), store.savepoint():  # only the block is undone
            store.after_commit(lambda: told.append("undone block"))
            raise RuntimeError
    assert told == ["outside", "outer", "inner", "kept"]


def test_on_rollback_undoes_what_a_rolled_back_write_changed_in_memory(store: Store) -> None:
    [job] = store.add_jobs([NewJob(spec("a"))], now=1.0)
    undone: list[str] = []
    store.on_rollback(lambda: undone.append("outside"))  # no transaction: nothing to undo
    with store.transaction():
        store.on_rollback(lambda: undone.append("committed"))
    with pytest.raises(RuntimeError), store.transaction():
        store.on_rollback(lambda: undone.append("first"))
        store.on_rollback(lambda: undone.append("second"))
        raise RuntimeError
    assert undone == ["second", "first"]  # latest first
    with store.transaction():
        store.on_rollback(lambda: undone.append("kept"))
        with pytest.raises(RuntimeError), store.savepoint():  # only the block is undone
            store.on_rollback(lambda: undone.append("block"))
            raise RuntimeError
    assert undone == ["second", "first", "block"]
    # A COMMIT refused (here a row that breaks a deferred foreign key; a full disk in life):
    # rolled back, and undone.
    with pytest.raises(sqlite3.IntegrityError), store.transaction():
        store.on_rollback(lambda: undone.append("refused"))
        store._db.execute("PRAGMA defer_foreign_keys = ON")
        store._db.execute("UPDATE jobs SET env_id = 999999 WHERE id = ?", (job,))
    assert undone == ["second", "first", "block", "refused"]
    with store.transaction():  # nothing left over for the next one
        pass
    assert undone == ["second", "first", "block", "refused"]


# ---- the queued jobs of one GPU count (placement's streams behind its window) ---------------


def test_queued_ready_of_one_gpu_count(store: Store) -> None:
    ids = store.add_jobs(
        [NewJob(spec(gpus=g), priority=p) for g, p in ((1, 0), (4, 0), (1, 2), (0, 0), (1, 0))],
        now=1.0,
    )
    store.update_job(ids[4], 2.0, "start", JobState.RUNNING)  # no longer queued
    assert [j.id for j in store.queued_ready(1)] == [ids[2], ids[0]]
    assert [j.id for j in store.queued_ready(4)] == [ids[1]]
    assert [j.id for j in store.queued_ready(2)] == []


def test_an_older_database_gets_the_index_of_queued_jobs_by_gpu_count(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    con = sqlite3.connect(db_path)
    for script in MIGRATIONS[:6]:  # a database of the release before this index
        con.executescript(script)
    con.execute("INSERT INTO envs(id, hash, json) VALUES (1, 'h', '{}')")
    for gpus in (4, 1):
        con.execute(
            "INSERT INTO jobs(command, cwd, env_id, env_overrides, gpus, after, retries, grace,"
            " state, priority, position, attempt, created_at, queued_at)"
            " VALUES ('old', '/', 1, '{}', ?, '[]', 0, 10, 'queued', 0, 1, 0, 1, 1)",
            (gpus,),
        )
    con.execute("PRAGMA user_version = 6")
    con.commit()
    con.close()
    s = Store(db_path)
    try:
        assert [j.spec.gpus for j in s.queued_ready(1)] == [1]
    finally:
        s.close()
    indexes = {
        name for (name,) in raw(db_path, "SELECT name FROM sqlite_master WHERE type = 'index'")
    }
    assert "jobs_queued_gpus" in indexes
    assert "jobs_queued_cpu" not in indexes  # the new index serves CPU-only jobs too
    assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


def test_an_older_database_gets_the_index_of_hold_events_and_a_start_reads_through_it(
    db_path: Path,
) -> None:
    """A start reads the hold events that name a run found running unwatched (a restored
    herd.db: engine_held_runs.py). It scanned every event (15 ms per 400,000); a database
    of the release before gets a partial index of the hold events alone, which the query
    reads, and keeps its events."""
    db_path.parent.mkdir(parents=True)
    con = sqlite3.connect(db_path)
    for script in MIGRATIONS[:7]:  # a database of the release before this index
        con.executescript(script)
    events = [
        (1, "submit", None),
        (1, "hold", "attempt 1 runs already (pid 4242, unwatched), but herd.db did not know it"),
        (2, "hold", "held by hand"),
        (3, "retry-held", "attempt 2 runs already (pid 4343, unwatched), but ..."),
        (3, "start", "attempt 2 runs already (pid 4343, unwatched)"),  # not a hold
    ]
    con.executemany(
        "INSERT INTO events(job_id, at, event, to_state, detail) VALUES (?, 1, ?, 'held', ?)",
        events,
    )
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    s = Store(db_path)
    try:
        assert s.unwatched_holds() == [
            (1, "attempt 1 runs already (pid 4242, unwatched), but herd.db did not know it"),
            (3, "attempt 2 runs already (pid 4343, unwatched), but ..."),
        ]
    finally:
        s.close()
    assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    index = raw(db_path, "SELECT sql FROM sqlite_master WHERE name = 'events_holds'")
    assert index, "no index of the hold events"  # before: none
    assert "WHERE event IN ('hold', 'retry-held')" in str(index[0][0])  # partial: holds only
    from gpuherd.store_views import UNWATCHED_HOLDS  # the query a start runs

    plan = [row[3] for row in raw(db_path, f"EXPLAIN QUERY PLAN {UNWATCHED_HOLDS}", ("%",))]
    assert len(plan) == 1 and plan[0].endswith("USING INDEX events_holds")  # before: SCAN events
