"""herd.db-wal deleted (or replaced) while the daemon runs: SQLite went on writing the file it
had open, unlinked, and a crash before the next checkpoint lost every commit since the last
one (acknowledged submissions, the saved daemon options), without a word; the next jobs were
given the lost ones' ids again. The daemon now notices at its next commit, copies that log
into herd.db, writes a new one, and says so in daemon.log (store_wal.py)."""

from __future__ import annotations

import shutil

import pytest

from conftest import Herd


@pytest.mark.parametrize("how", ["deleted", "replaced by another file"])
def test_a_log_deleted_under_the_daemon_loses_nothing_at_a_crash(daemon: Herd, how: str) -> None:
    before = [daemon.submit("--hold", "--", "true") for _ in range(2)]
    assert [job["id"] for job in daemon.ls_all()] == before  # the listing's reader opened
    log = daemon.home / "herd.db-wal"
    if how == "deleted":
        log.unlink()  # someone freeing its "tens of MB" (files.md)
    else:
        shutil.copy(log, daemon.home / "copy")
        (daemon.home / "copy").replace(log)
    after = [daemon.submit("--hold", "--", "true") for _ in range(2)]  # the first one notices
    # The listing's reader, opened on the old log, reads the new one (not on the loop).
    assert [job["id"] for job in daemon.ls_all()] == before + after
    daemon.kill9()  # before the next checkpoint (2 s quiet)
    daemon.start()  # with the options saved (4 fake GPUs): they are not lost either
    assert [job["id"] for job in daemon.ls_all()] == before + after
    assert daemon.submit("--hold", "--", "true") == after[-1] + 1  # no id given twice
    said = (daemon.home / "daemon.log").read_text()
    assert (
        f"{log} was {how} while the daemon ran: every commit in it was copied into "
        f"{daemon.home / 'herd.db'}, and the daemon writes a new herd.db-wal; nothing was lost"
    ) in said, said
    assert "listing read on the loop instead" not in said, said
