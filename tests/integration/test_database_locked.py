"""herd.db locked by another program (an open `sqlite3` shell, a backup) for longer than the
store waits: a request says so in one line, as a 503, not as an internal error."""

from __future__ import annotations

import sqlite3

from conftest import Herd


def test_a_request_finding_the_database_locked_says_who_to_ask(daemon: Herd) -> None:
    other = sqlite3.connect(daemon.home / "herd.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # what an open shell's write transaction holds
        refused = daemon.cli("submit", "--", "true", check=False)
    finally:
        other.close()
    assert refused.returncode == 1, refused
    assert refused.stderr == (
        "gpuherd: error: the queue's database is locked by another program (an open `sqlite3` "
        "shell, a backup): close it, then try again (`gpuherd ls --all` shows what was done)\n"
    )
    assert daemon.ls_all() == []  # nothing was queued; the daemon goes on once it is let go
    job = daemon.submit("--", "true")
    assert daemon.wait_state(job, "succeeded")["state"] == "succeeded"
