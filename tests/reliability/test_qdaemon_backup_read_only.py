"""`daemon backup` of a home whose disk went read-only: the time one most wants its queue out.
SQLite cannot create there the herd.db-shm a reader of a WAL database needs; a home whose
daemon stopped (no herd.db-wal) is copied whole all the same, and one whose herd.db-wal still
holds commits is refused on one line saying what to do, never copied without them."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from faults import read_only_bind

from conftest import Herd


def test_a_stopped_daemons_home_on_a_read_only_disk_is_backed_up(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    herd.submit("--hold", "--", "true")
    herd.submit("--hold", "--", "false")
    herd.cli("daemon", "stop")
    copy = tmp_path / "herd-backup.db"
    with read_only_bind(herd.home):
        done = herd.cli("daemon", "backup", str(copy), check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"backed up the queue (2 jobs) to {copy}\n"
    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as db:
        assert db.execute("SELECT id, state FROM jobs").fetchall() == [(1, "held"), (2, "held")]


def test_commits_left_in_the_wal_on_a_read_only_disk_are_not_dropped(tmp_path: Path) -> None:
    home = tmp_path / "crashed"  # a daemon killed (-9): its last commits are in herd.db-wal
    home.mkdir()
    db = sqlite3.connect(home / "herd.db")
    db.execute("PRAGMA journal_mode=wal")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE jobs (id INTEGER)")
    db.commit()
    for name in ("herd.db", "herd.db-wal"):  # (no herd.db-shm: lost with a tmpfs /dev/shm)
        shutil.copy(home / name, home / f"{name}.kept")
    db.close()
    (home / "herd.db-shm").unlink(missing_ok=True)
    for name in ("herd.db", "herd.db-wal"):
        (home / f"{name}.kept").rename(home / name)
    assert (home / "herd.db-wal").stat().st_size > 0
    copy = tmp_path / "herd-backup.db"
    with read_only_bind(home):
        done = Herd(home).cli("daemon", "backup", str(copy), check=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "herd.db-wal" in done.stderr and "copy the herd.db* files" in done.stderr
    assert not copy.exists() and not list(tmp_path.glob(".herd-backup.db*"))
