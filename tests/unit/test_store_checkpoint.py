"""herd.db's write-ahead log is checkpointed by a thread of the store's, not in the commits of
the daemon's connection (each such checkpoint syncs two files on the event loop: the slowest
hand-offs between jobs). Real SQLite files; what has been checkpointed is read from the WAL
index (the `-shm` file, whose layout sqlite.org/walformat.html documents), never by
checkpointing in the test."""

from __future__ import annotations

import struct
import threading
from pathlib import Path

import pytest

import gpuherd.store as store_module
from conftest import wait_for
from gpuherd.store import Store

BURST = 60  # commits of about a page each


def wal_index(database: Path) -> tuple[int, int]:
    """(frames in the log, frames copied into the database) as the WAL index says: mxFrame
    of the index header (offset 16), nBackfill of the checkpoint info after the header's two
    copies (offset 96), in the machine's byte order."""
    head = (database.parent / (database.name + "-shm")).read_bytes()[:100]
    return struct.unpack_from("=I", head, 16)[0], struct.unpack_from("=I", head, 96)[0]


def burst(store: Store, tag: int) -> None:
    for i in range(BURST):
        with store.transaction():
            store.set_setting(f"key-{tag}-{i}", "x" * 3000)


def checkpointers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "gpuherd-wal"]


def test_a_thread_checkpoints_after_commits_and_the_log_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The connection's own backstop out of reach: whatever is checkpointed, the thread did.
    monkeypatch.setattr(store_module, "BACKSTOP_PAGES", 1_000_000, raising=False)
    database = tmp_path / "herd.db"
    store = Store(database)
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
