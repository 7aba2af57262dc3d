"""A job that writes nothing (`exec sleep 300`: its shell replaced, no log) and whose daemon
crashed (SIGKILL: no `seen_alive` left at a stop) was found lost at the next start with no
sign of life but its start: run time 0.0s, however long it had run. A daemon running jobs
now notes when it last saw them alive (herd.db's `seen_alive`, every SEEN_EVERY seconds,
GPUHERD_TEST_SEEN_ALIVE_EVERY here), which the next start takes as their last sign."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from test_lost_end import _kill_unwatched

from conftest import Herd, wait_for


def _noted(home: Path) -> dict[str, Any]:
    """The daemon's last note of its running jobs ({} when none), read as another reader."""
    with sqlite3.connect(f"file:{home / 'herd.db'}?mode=ro", uri=True) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'seen_alive'").fetchone()
    db.close()
    return json.loads(row[0]) if row and row[0] else {}


def test_a_silent_job_lost_after_a_crash_ran_until_it_was_last_seen_alive(herd: Herd) -> None:
    herd.env["GPUHERD_TEST_SEEN_ALIVE_EVERY"] = "0.5"
    herd.start("--fake-gpus", "1")
    job = herd.submit("--", "exec sleep 300")
    started = herd.wait_state(job, "running")["started_at"]
    wait_for(
        lambda: float(_noted(herd.home).get("at", 0.0)) > started + 1.0,
        what="a note of the job alive a second into its run",
    )
    _kill_unwatched(herd, job)
    note = _noted(herd.home)  # the crashed daemon's last
    assert note["attempts"] == [[job, 1]]
    wait_for(lambda: time.time() > float(note["at"]) + 1.0, what="a second to pass")
    herd.start()

    lost = herd.wait_state(job, "lost")
    assert abs(lost["ended_at"] - float(note["at"])) < 1e-6, (lost, note)
    assert lost["ended_at"] - lost["started_at"] > 1.0  # before: 0.0s, ended at its start
    assert _noted(herd.home).get("attempts", []) == []  # taken by that start: once only
    said = herd.cli("daemon", "log", "-n", "20").stdout
    assert ", when it was last seen alive): the job is lost" in said
