"""A scheduler whose passes fail, for tests: a queued job's row that cannot be read (its
environment changes no JSON). Every placement pass reads the queued jobs, so every pass fails
until the row is mended (engine_health.py says what follows)."""

from __future__ import annotations

import sqlite3

from conftest import Herd


def set_overrides(herd: Herd, job_id: int, overrides: str) -> None:
    """Write job `job_id`'s env_overrides behind the daemon's back: "not json" breaks every
    pass that reads the job, "{}" mends it."""
    db = sqlite3.connect(herd.home / "herd.db")
    try:
        with db:
            db.execute("UPDATE jobs SET env_overrides = ? WHERE id = ?", (overrides, job_id))
    finally:
        db.close()


def break_passes(herd: Herd) -> int:
    """Make the running daemon's passes fail: a queued job (priority 5: read first) made
    unreadable while the queue is paused, then the queue resumed. Its id, for the mend."""
    herd.cli("pause")
    unreadable = herd.submit("--priority", "5", "--", "true")
    set_overrides(herd, unreadable, "not json")
    herd.cli("resume")
    return unreadable
