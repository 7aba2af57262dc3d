"""An older herd.db's one-time VACUUM (store_space.py) on a disk without room for its copy:
it filled the disk, failed, and left the log that large, so the disk stayed full for the
jobs' logs until the daemon stopped. Now it waits for room; the queue is untouched."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from pathlib import Path

from faults import tmpfs

from gpuherd.core.model import JobSpec
from gpuherd.store import NewJob, Store
from gpuherd.store_space import give_back

MIB = 1 << 20


def _older_herd_db(path: Path) -> None:
    """A herd.db as an older gpuherd made it (no auto_vacuum): ~7 MiB in use, ~1.5 MiB free."""
    store = Store(path)
    spec = JobSpec(command="python train.py " + "x" * 800, cwd=str(path.parent))
    ids = store.add_jobs([NewJob(spec) for _ in range(8000)], time.time())
    store.close()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA auto_vacuum = NONE")
        db.execute("VACUUM")
    store = Store(path)
    store.delete_jobs(ids[:1500])
    store.close()


def _pragmas(path: Path) -> tuple[int, int, str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return (
            int(db.execute("PRAGMA auto_vacuum").fetchone()[0]),
            int(db.execute("SELECT count(*) FROM jobs").fetchone()[0]),
            str(db.execute("PRAGMA integrity_check").fetchone()[0]),
        )


def test_an_older_herd_db_is_converted_only_with_room_for_the_copy(tmp_path: Path) -> None:
    made = tmp_path / "made" / "herd.db"
    _older_herd_db(made)
    with tmpfs(tmp_path / "disk", "48m") as disk:
        path = disk / "herd.db"
        shutil.copy(made, path)
        filler = disk / "filler"
        room = shutil.disk_usage(disk).free - 6 * MIB  # less than the ~7 MiB in use
        with open(filler, "wb") as out:
            out.truncate(room)
            os.posix_fallocate(out.fileno(), 0, room)
        free_before = shutil.disk_usage(disk).free
        db = sqlite3.connect(path, isolation_level=None, timeout=0)
        try:
            assert give_back(db, path, lambda: True) is True  # nothing to do now, no error
            assert shutil.disk_usage(disk).free >= free_before - MIB, "the disk was filled"
            assert _pragmas(path) == (0, 6500, "ok")
            filler.unlink()  # room again: the next quiet spell converts it
            assert give_back(db, path, lambda: True) is True
        finally:
            db.close()
        assert _pragmas(path) == (2, 6500, "ok")
