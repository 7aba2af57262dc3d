"""A give-back of herd.db's free pages (store_space.py) lets a write of the daemon in at its
next chunk: the writer waits for SQLite's lock (busy handler), which the checkpoint thread
took again at once after each chunk, so a commit begun during a give-back waited for every
chunk of it (~0.45 s per 48 MiB given back; past the busy timeout, "database is locked")."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from gpuherd.core.model import JobSpec
from gpuherd.store import NewJob, Store


def _free_pages(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA freelist_count").fetchone()[0])


def test_a_commit_begun_during_a_give_back_waits_for_one_chunk_not_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gpuherd.store_checkpoint.QUIET", 3600.0)  # the test gives back
    path = tmp_path / "herd.db"
    store = Store(path)
    spec = JobSpec(command="python train.py " + "x" * 800, cwd=str(tmp_path))
    ids = store.add_jobs([NewJob(spec) for _ in range(12000)], time.time())
    store.delete_jobs(ids)
    assert _free_pages(path) > 8 * 256  # many chunks (store_space.CHUNK_PAGES)
    checkpoints = store._checkpoints
    assert checkpoints is not None
    checkpoints._commits = 0  # a quiet spell began (as _time_to_checkpoint leaves it)
    db = sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # as the quiet spell's
    in_a_chunk = threading.Event()
    # Called as the first chunk runs (no shorter statement runs 1,000 steps), its write lock
    # held: the commit below waits for it. (Never unset while the thread steps: that waits
    # for the connection, holding the GIL.)
    db.set_progress_handler(lambda: in_a_chunk.set() or 0, 1000)
    # (daemon: a thread still stepping on `db` must not keep the worker from exiting)
    giving = threading.Thread(target=checkpoints._give_back, args=(db,), daemon=True)
    giving.start()
    assert in_a_chunk.wait(30)
    store.set_setting("probe", "1")  # the engine's next commit
    left = _free_pages(path)
    giving.join(30)
    # Before `db` is used here again: a close or a statement on it from this thread, the GIL
    # held, while the thread still steps (its progress handler waiting for the GIL) would
    # deadlock where no timeout reaches (a run of this file once hung for 25 minutes).
    assert not giving.is_alive(), "the give-back did not end within 30 s"
    assert left > 0, "the commit waited for the whole give-back"
    # What was left is given back in the next quiet spell.
    checkpoints._commits = 0
    checkpoints._give_back(db)
    db.close()
    store.close()
    assert _free_pages(path) == 0
