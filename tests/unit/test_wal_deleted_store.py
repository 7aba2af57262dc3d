"""herd.db-wal deleted under a Store (store_wal.py): its next commit copies the log into
herd.db and opens the connection again on a new one; while another connection reads the old
log, that is put off (said once) and tried again at a later commit. (The checkpoint thread,
started by the first commit, may open its connection after the deletion: that makes a new
empty log at the path, which changes nothing.)"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest

from conftest import wait_for
from gpuherd import store_wal
from gpuherd.store import Store


def _kept(db: sqlite3.Connection) -> list[tuple[str]]:
    return list(db.execute("SELECT value FROM meta WHERE key = 'kept'"))


def test_a_reader_of_the_deleted_log_puts_the_renewal_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("GPUHERD_TEST_BUSY_TIMEOUT", "0.05")
    monkeypatch.setattr(store_wal, "RETRY", 0.2)
    database, log = tmp_path / "herd.db", tmp_path / "herd.db-wal"
    store = Store(database)
    with contextlib.closing(store), caplog.at_level(logging.WARNING, "gpuherd.store"):
        store.set_setting("kept", "1")
        reader = sqlite3.connect(database, isolation_level=None)
        reader.execute("BEGIN")
        assert _kept(reader) == [("1",)]  # (a read transaction on the old log, held)
        log.unlink()
        store.set_setting("kept", "2")
        store.set_setting("kept", "3")
        assert caplog.text.count("could not be copied into") == 1, caplog.text
        assert "another connection was reading it" in caplog.text
        reader.execute("ROLLBACK")
        reader.close()

        def renewed() -> bool:
            store.set_setting("kept", "4")
            return f"{log} was deleted while the daemon ran: every" in caplog.text

        wait_for(renewed, what="the renewal tried again")
        store.set_setting("kept", "5")  # written to the new log, which others read
        assert log.stat().st_size > 0
        with contextlib.closing(sqlite3.connect(database)) as other:
            assert _kept(other) == [("5",)]
