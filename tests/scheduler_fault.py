"""A scheduler whose passes fail, for tests: a queued job's row holding a value placement
cannot work with (its GPU count as text). Every placement pass reads the queued jobs, so
every pass fails until the row is mended (engine_health.py says what follows).

Not a value the row's reader refuses (JSON that does not parse, an unknown state): such a
row costs its job alone, set aside while the passes go on (engine_damaged.py). The row's
integer columns are not checked as it is read (every tick reads jobs: store_rows._ids), so
a GPU count as text reaches placement, which fails on it; were it ever checked there, this
needs another fault."""

from __future__ import annotations

import sqlite3

from conftest import Herd

UNPLACEABLE = "x"
"""A GPU count placement fails on."""


def set_gpus(herd: Herd, job_id: int, gpus: str | int) -> None:
    """Write job `job_id`'s GPU count behind the daemon's back: UNPLACEABLE breaks every pass
    that reads the job, a number mends it."""
    db = sqlite3.connect(herd.home / "herd.db")
    try:
        with db:
            db.execute("UPDATE jobs SET gpus = ? WHERE id = ?", (gpus, job_id))
    finally:
        db.close()


def break_passes(herd: Herd) -> int:
    """Make the running daemon's passes fail: a queued job (priority 5: read first) made
    unplaceable while the queue is paused, then the queue resumed. Its id, for the mend
    (`set_gpus(herd, job, 1)`)."""
    herd.cli("pause")
    unplaceable = herd.submit("--priority", "5", "--", "true")
    set_gpus(herd, unplaceable, UNPLACEABLE)
    herd.cli("resume")
    return unplaceable
