"""The kinds of dependency in the store (`--after`, `--after-any`, `--after-fail`): which ends
meet each, which waiters an end leaves unable to run, and the migration that named them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gpuherd.core.deps import MEETS, never_met
from gpuherd.core.model import JobSpec
from gpuherd.core.states import FINISHED_STATES, JobState
from gpuherd.store import NewJob, Store
from gpuherd.store_schema import MIGRATIONS

ENV = {"PATH": "/usr/bin:/bin"}


def spec(**kw: tuple[int, ...]) -> JobSpec:
    return JobSpec(command="true", cwd="/tmp", env=ENV, **kw)


@pytest.mark.parametrize("end", sorted(FINISHED_STATES))
def test_each_end_meets_or_never_meets_each_kind_and_the_store_agrees(
    tmp_path: Path, end: JobState
) -> None:
    store = Store(tmp_path / "herd.db")
    try:
        [dep] = store.add_jobs([NewJob(spec())], now=1.0)
        waiters = store.add_jobs([NewJob(spec(**{kind: (dep,)})) for kind in MEETS], now=2.0)
        store.update_job(dep, 3.0, "end", end)
        by_kind = dict(zip(MEETS, waiters, strict=True))
        for kind, waiter in by_kind.items():
            unmet = store.unmet_deps(waiter)
            assert (unmet == []) is (end in MEETS[kind])
            assert never_met(kind, end) is (unmet != [])
        never = {kind for kind, waiter in by_kind.items() if waiter in store.waiters_of(dep, end)}
        assert never == {kind for kind in MEETS if never_met(kind, end)}
        assert ("after_fail" in never) is (end is JobState.SUCCEEDED)
    finally:
        store.close()


def test_a_database_before_after_fail_keeps_its_dependencies_kinds(tmp_path: Path) -> None:
    path = tmp_path / "herd.db"
    con = sqlite3.connect(path)
    for script in MIGRATIONS[:10]:  # the release before `--after-fail`
        con.executescript(script)
    con.execute("INSERT INTO envs(id, hash, json) VALUES (1, 'h', '{}')")
    for n, after, after_any in ((1, "[]", "[]"), (2, "[1]", "[]"), (3, "[]", "[1]")):
        con.execute(
            "INSERT INTO jobs(id, command, cwd, env_id, env_overrides, gpus, after, after_any,"
            " retries, grace, state, priority, position, attempt, created_at, queued_at)"
            " VALUES (?, 'old', '/', 1, '{}', 1, ?, ?, 0, 10, 'queued', 0, ?, 0, 1, 1)",
            (n, after, after_any, n),
        )
    con.execute("INSERT INTO deps(job, dep, any_end) VALUES (2, 1, 0), (3, 1, 1)")
    con.execute("PRAGMA user_version = 10")
    con.commit()
    con.close()
    store = Store(path)
    try:
        assert store.unmet_deps(2) == [(1, "queued", "after")]
        assert store.unmet_deps(3) == [(1, "queued", "after_any")]
        assert store.get_job(2).spec.after_fail == ()  # type: ignore[union-attr]
        store.update_job(1, 2.0, "fail", JobState.FAILED)
        assert store.unmet_deps(3) == []  # after any end: met by the failure
        assert store.waiters_of(1, JobState.FAILED) == [2]
    finally:
        store.close()
