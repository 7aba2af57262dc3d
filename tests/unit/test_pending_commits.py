"""pending_commits.py: the jobs whose git commit a daemon was still looking up, kept in
herd.db until git answers (a next daemon looks them up again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd import pending_commits
from gpuherd.store import Store


def test_jobs_noted_stay_until_dropped_by_place_as_runs_of_ids(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    try:
        store.number_jobs_after(8)  # (ids 1-8 given: a note names jobs there are)
        here, there = ("/work/a", "/usr/bin"), ("/work/b", None)
        pending_commits.note(store, [(here, i) for i in (1, 2, 3, 7)] + [(there, 4)])
        pending_commits.note(store, [(here, 8)])
        assert '"ids": [[1, 3], [7, 8]]' in (store.get_setting(pending_commits.SETTING) or "")
        pending_commits.drop(store, [2, 4])
        assert pending_commits.pending(store) == {here: {1, 3, 7, 8}}
        pending_commits.drop(store, [1, 3, 7, 8])
        assert pending_commits.pending(store) == {}
        assert store.get_setting(pending_commits.SETTING) == ""
    finally:
        store.close()


def test_a_damaged_row_is_said_and_forgotten(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "herd.db")
    try:
        store.number_jobs_after(5)
        store.set_setting(pending_commits.SETTING, '[{"cwd": "/a"}]')
        assert pending_commits.pending(store) == {}
        assert "herd.db's `git_pending` setting is damaged" in caplog.text
        pending_commits.note(store, [(("/a", None), 5)])
        assert pending_commits.pending(store) == {("/a", None): {5}}
    finally:
        store.close()


@pytest.mark.parametrize(
    ("ids", "why"),
    [
        ("[[1, 1e999]]", "cannot convert float infinity to integer"),  # was OverflowError
        ("[[1, 1000000000]]", "ids 1-1000000000 are not jobs' (the last is 3)"),  # held
        ("[[3, 2]]", "ids 3-2 are not jobs'"),
    ],
)
def test_a_row_of_ids_no_job_has_is_said_and_forgotten_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, ids: str, why: str
) -> None:
    # Before: [1, 1e999] raised OverflowError at every submission git was slow for, and
    # [1, 1e9] built a billion ids on the daemon's loop (a submission timed out).
    store = Store(tmp_path / "herd.db")
    try:
        store.number_jobs_after(3)  # (ids 1-3 given: the highest is 3)
        store.set_setting(pending_commits.SETTING, f'[{{"cwd": "/a", "path": null, "ids": {ids}}}]')
        assert pending_commits.pending(store) == {}
        assert why in caplog.text and "forgotten" in caplog.text
        pending_commits.note(store, [(("/a", None), 3)])  # the next note is taken
        assert pending_commits.pending(store) == {("/a", None): {3}}
    finally:
        store.close()
