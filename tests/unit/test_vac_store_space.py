"""store_space.give_back on a real herd.db: the free pages a removal left go back to the disk
in chunks that stop as soon as the engine writes, and a listing's read-only snapshot
(store_reader.py) reads on unharmed meanwhile."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

import gpuherd.store_checkpoint as checkpoint_module
from conftest import checkpointed, wait_for
from gpuherd.core.model import JobSpec
from gpuherd.store import NewJob, Store
from gpuherd.store_reader import ReadOnlyStore
from gpuherd.store_space import CHUNK_PAGES, give_back

COMMAND = "true " + "x" * 2000  # (2 KB a job: a few thousand jobs make megabytes)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "herd.db")
    yield s
    s.close()


def many_jobs_removed(store: Store, count: int = 2000) -> list[int]:
    """`count` jobs added, then all but the first removed: the ids kept."""
    spec = JobSpec(command=COMMAND, cwd="/tmp", env={"PATH": "/bin"})
    ids = store.add_jobs([NewJob(spec)] * count, now=1.0)
    store.delete_jobs(ids[1:])
    return ids[:1]


def pragma(db: sqlite3.Connection, name: str) -> int:
    return int(db.execute(f"PRAGMA {name}").fetchone()[0])


def thread_connection(path: Path) -> sqlite3.Connection:
    """A connection as the checkpoint thread's (store_checkpoint.py)."""
    return sqlite3.connect(path, isolation_level=None, timeout=0)


def test_a_new_herd_db_gives_removed_jobs_pages_back(store: Store) -> None:
    kept = many_jobs_removed(store)
    with closing(thread_connection(store.path)) as db:
        assert pragma(db, "auto_vacuum") == 2  # incremental: made so when new
        before = pragma(db, "page_count")
        assert pragma(db, "freelist_count") > before / 2

        assert give_back(db, store.path, lambda: True)

        assert pragma(db, "freelist_count") == 0
        assert pragma(db, "page_count") < before / 2
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert store.path.stat().st_size < before * 4096 / 2  # the file itself shrank
    assert [job.id for job in store.list_jobs()] == kept


def test_giving_back_stops_after_the_chunk_under_way_when_the_engine_writes(
    store: Store,
) -> None:
    many_jobs_removed(store)
    quiet = iter([True, False])  # the engine commits during the first chunk
    with closing(thread_connection(store.path)) as db:
        free = pragma(db, "freelist_count")
        assert free > 2 * CHUNK_PAGES

        assert not give_back(db, store.path, lambda: next(quiet))  # owed: tried again later

        assert pragma(db, "freelist_count") == free - CHUNK_PAGES
        assert give_back(db, store.path, lambda: True)
        assert pragma(db, "freelist_count") == 0


def test_a_listing_snapshot_reads_on_while_the_space_is_given_back(store: Store) -> None:
    spec = JobSpec(command=COMMAND, cwd="/tmp", env={"PATH": "/bin"})
    ids = store.add_jobs([NewJob(spec)] * 2000, now=1.0)
    assert store.file_id is not None
    reader = ReadOnlyStore(store.path, store.file_id)
    try:
        with reader.snapshot():
            assert reader.count_jobs() == 2000
            store.delete_jobs(ids[1:])
            with closing(thread_connection(store.path)) as db:
                give_back(db, store.path, lambda: True)
                assert pragma(db, "freelist_count") == 0
            # The snapshot began before: every job still there, read whole.
            assert reader.count_jobs() == 2000
            assert {job.spec.command for job in reader.list_jobs(limit=None)} == {COMMAND}
        with reader.snapshot():
            assert [job.id for job in reader.list_jobs()] == ids[:1]
    finally:
        reader.close()
    with closing(sqlite3.connect(store.path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_a_log_a_reader_kept_is_cut_back_once_it_lets_go_with_no_commit_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quiet spell's TRUNCATE checkpoint cannot empty a log a reader still reads (a
    listing's snapshot, a user's `sqlite3` shell): it is tried again a quiet spell later,
    with no commit to start one."""
    monkeypatch.setattr(checkpoint_module, "QUIET", 0.2)
    database = tmp_path / "herd.db"
    log = tmp_path / "herd.db-wal"
    store = Store(database)
    try:
        spec = JobSpec(command=COMMAND, cwd="/tmp", env={"PATH": "/bin"})
        store.add_jobs([NewJob(spec)] * 4000, now=1.0)  # one commit of ~10 MB
        peak = log.stat().st_size
        assert peak > 8_000_000
        with closing(sqlite3.connect(database, isolation_level=None)) as reader:
            reader.execute("BEGIN")
            assert reader.execute("SELECT count(*) FROM jobs").fetchone() == (4000,)
            wait_for(lambda: checkpointed(database), 10, "the quiet spell's checkpoint")
            assert log.stat().st_size == peak  # the reader holds it
            reader.execute("ROLLBACK")
            wait_for(lambda: log.stat().st_size < peak / 2, 10, "the log cut back")
        assert len(store.list_jobs()) == 4000
    finally:
        store.close()
