"""herd.db's disk space comes back after `gpuherd clean` without the user doing anything
(store_space.py): the database file shrinks once the daemon is quiet, an older herd.db
(made without incremental vacuum) is converted on the way, and the write-ahead log does not
stay at the largest size it reached."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

from conftest import Herd, checkpointed, wait_for
from gpuherd.store_schema import MIGRATIONS

LONG = "true " + "x" * 2000
"""A command of 2 KB: a few thousand jobs make megabytes of rows (the test stays short)."""


def held_jobs(herd: Herd, count: int, command: str = LONG) -> list[int]:
    """`count` held jobs, in one submission (one commit)."""
    item = {"command": command, "cwd": str(herd.home.parent), "env": None, "hold": True}
    answer = herd.client.post("/jobs", {"jobs": [item] * count, "env": dict(os.environ)})
    return [int(i) for i in answer["ids"]]


def finished_jobs(herd: Herd, count: int) -> list[int]:
    """`count` jobs ended (cancelled while held: no process to wait for)."""
    ids = held_jobs(herd, count)
    herd.client.post("/jobs/kill", {"ids": ids})
    wait_for(lambda: herd.job(ids[-1])["state"] == "cancelled", 20, "the jobs cancelled")
    return ids


def size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def pragma(database: Path, name: str) -> object:
    with closing(sqlite3.connect(database)) as db:
        return db.execute(f"PRAGMA {name}").fetchone()[0]


def stopped_intact(herd: Herd, database: Path) -> None:
    herd.cli("daemon", "stop")
    assert pragma(database, "integrity_check") == "ok"


def test_herd_db_shrinks_once_quiet_after_a_clean_of_many_jobs(daemon: Herd) -> None:
    database = daemon.home / "herd.db"
    kept = daemon.submit("--hold", "--name", "kept", "echo kept")
    finished_jobs(daemon, 3000)
    wait_for(lambda: checkpointed(database), 20, "the log copied into herd.db")
    before = size(database)
    assert before > 4_000_000  # (what the jobs' rows take)

    daemon.cli("clean")
    wait_for(lambda: size(database) < before / 2, 20, f"herd.db ({before:,} bytes) to shrink")

    assert [(j["id"], j["state"], j["name"]) for j in daemon.ls_all()] == [(kept, "held", "kept")]
    stopped_intact(daemon, database)
    assert pragma(database, "freelist_count") < 256


def test_an_older_herd_db_is_converted_and_shrinks_with_its_jobs_intact(herd: Herd) -> None:
    """A herd.db of an older gpuherd: no incremental vacuum (SQLite can only switch by a
    VACUUM), schema version 13 (migrated at the start)."""
    database = herd.home / "herd.db"
    herd.home.mkdir(parents=True)
    with closing(sqlite3.connect(database)) as old:
        old.execute("PRAGMA journal_mode = WAL")
        for script in MIGRATIONS[:13]:
            old.executescript(script)
        old.execute("PRAGMA user_version = 13")
    os.chmod(database, 0o600)
    assert pragma(database, "auto_vacuum") == 0
    herd.start("--fake-gpus", "4")
    kept = herd.submit("--hold", "--name", "kept", "echo kept")
    ran = herd.submit("--name", "ran", "echo ran")
    herd.wait_state(ran, "succeeded")
    finished_jobs(herd, 3000)
    wait_for(lambda: checkpointed(database), 20, "the log copied into herd.db")
    before = size(database)

    herd.cli("clean", "--state", "cancelled")
    wait_for(lambda: size(database) < before / 2, 20, f"herd.db ({before:,} bytes) to shrink")

    jobs = sorted((j["id"], j["state"], j["name"]) for j in herd.ls_all())
    assert jobs == [(kept, "held", "kept"), (ran, "succeeded", "ran")]
    assert herd.cli("log", str(ran)).stdout == "ran\n"
    stopped_intact(herd, database)
    assert pragma(database, "auto_vacuum") == 2  # incremental from now on


def test_the_log_does_not_stay_at_its_peak_once_the_queue_is_quiet(daemon: Herd) -> None:
    log = daemon.home / "herd.db-wal"
    held_jobs(daemon, 4000)  # one commit of ~10 MB, all of it in the log
    peak = size(log)
    assert peak > 8_000_000

    wait_for(lambda: size(log) < peak / 2, 20, f"herd.db-wal ({peak:,} bytes) to be cut back")
    assert len(daemon.ls_all()) == 4000
    stopped_intact(daemon, daemon.home / "herd.db")
