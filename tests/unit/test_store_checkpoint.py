"""herd.db's write-ahead log is checkpointed by a thread of the store's, not in the commits of
the daemon's connection (each such checkpoint syncs two files on the event loop: the slowest
hand-offs between jobs), and only once commits pile up or stop for a while (the first commit
after a checkpoint syncs the log's header). Real SQLite files; what has been checkpointed is
read from the WAL index (the `-shm` file, whose layout sqlite.org/walformat.html documents),
never by checkpointing in the test."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import gpuherd.store as store_module
import gpuherd.store_checkpoint as checkpoint_module
from conftest import checkpointed, wait_for, wal_index
from gpuherd.core.model import JobSpec
from gpuherd.store import NewJob, Store

BURST = checkpoint_module.BURST_COMMITS  # commits of about a page each


def burst(store: Store, tag: int, commits: int = BURST, apart: float = 0.0) -> None:
    for i in range(commits):
        if i and apart:
            time.sleep(apart)  # the commits' own pace, not a wait for something
        with store.transaction():
            store.set_setting(f"key-{tag}-{i}", "x" * 3000)


def checkpointed_by_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quiet: float
) -> tuple[Store, Path]:
    """A store whose connection's own backstop is out of reach (whatever is checkpointed, the
    thread did), its quiet time `quiet` s; and its database file."""
    monkeypatch.setattr(store_module, "BACKSTOP_PAGES", 1_000_000, raising=False)
    monkeypatch.setattr(checkpoint_module, "QUIET", quiet)
    database = tmp_path / "herd.db"
    return Store(database), database


def checkpointers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "gpuherd-wal"]


def test_a_thread_checkpoints_a_burst_of_commits_and_the_log_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No quiet long enough: each burst is checkpointed because of its size.
    store, database = checkpointed_by_its_thread(tmp_path, monkeypatch, quiet=3600.0)
    try:
        frames = []
        for tag in range(5):
            burst(store, tag)
            frames.append(wal_index(database)[0])
            assert frames[-1] >= BURST  # written to the log, not yet copied
            wait_for(lambda: wal_index(database)[1] == wal_index(database)[0], 10, "a checkpoint")
        # Each burst after a full checkpoint wrote the log from its start again: the log
        # holds one burst's frames, not five bursts' (a log never copied would).
        assert max(frames) < 1.5 * frames[0], frames
        frame = 4096 + 24  # a page and its frame header
        assert (tmp_path / "herd.db-wal").stat().st_size <= 32 + max(frames) * frame
    finally:
        store.close()
    assert not checkpointers()  # close() ended the thread


def test_a_few_commits_are_checkpointed_once_the_database_is_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jobs handed off a fraction of a second apart: a checkpoint after each commit would make
    # every next commit sync the restarted log's header. They wait for a quiet moment.
    store, database = checkpointed_by_its_thread(tmp_path, monkeypatch, quiet=1.5)
    try:
        burst(store, 0, commits=5, apart=0.05)
        last_commit = time.monotonic()
        frames, copied = wal_index(database)
        assert frames >= 5 and copied == 0, (frames, copied)  # 0.2 s of commits, none copied
        wait_for(lambda: wal_index(database)[1] == frames, 10, "the checkpoint after a quiet")
        assert time.monotonic() - last_commit >= 1.5
    finally:
        store.close()


def test_a_store_of_gpuherd_run_has_no_log_and_no_thread(tmp_path: Path) -> None:
    before = len(checkpointers())
    store = Store(tmp_path / "run.db", scratch=True)
    try:
        burst(store, 0)
        assert len(checkpointers()) == before
        assert not (tmp_path / "run.db-wal").exists()
    finally:
        store.close()


def test_the_data_is_all_there_after_close_and_reopen(tmp_path: Path) -> None:
    database = tmp_path / "herd.db"
    store = Store(database)
    burst(store, 7)
    store.close()
    again = Store(database)
    try:
        assert [again.get_setting(f"key-7-{i}") for i in range(BURST)] == ["x" * 3000] * BURST
    finally:
        again.close()


def test_a_burst_that_ends_before_its_checkpoint_is_still_given_back_once_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # README ("Where things are"): after a `clean` herd.db shrinks once the daemon has been
    # quiet for ~2 s. A `clean` of 10,000 jobs is a burst of commits that often ends before
    # the busy machine lets the thread count it: the burst's checkpoint then took the count
    # to zero, and the thread slept until the next commit, herd.db left at its largest.
    store, database = checkpointed_by_its_thread(tmp_path, monkeypatch, quiet=0.5)
    try:
        spec = JobSpec(command="true " + "x" * 2000, cwd="/tmp", env={"PATH": "/bin"})
        ids = store.add_jobs([NewJob(spec)] * 2000, now=1.0)  # megabytes of rows
        wait_for(lambda: checkpointed(database), 10, "the rows copied into herd.db")
        full = database.stat().st_size
        checkpoints = store._checkpoints
        assert checkpoints is not None
        with checkpoints._changed:  # the thread counts the commits only once they all came
            for i in range(BURST):
                store.delete_jobs(ids[i::BURST])
        wait_for(lambda: database.stat().st_size < full / 2, 10, f"herd.db ({full:,} B) to shrink")
    finally:
        store.close()
