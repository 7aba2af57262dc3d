"""A running job's GPU memory peak outlives a restart of the daemon (real daemon, real
kill -9). docs/gpus.md: a job holds the larger of its request and its measured use for its
whole life. The peak lived in the daemon's memory alone until the job's end: a restarted
daemon held the job to its --mem, started another job in the memory it had used, and
recorded the lower use seen since as the attempt's peak (which --oom-retry and a sweep's
learned memory read)."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from pathlib import Path

from conftest import Herd, wait_for

GiB = 2**30

# Uses 20 GiB, then 1 GiB once `drop` is there, and ends once `end` is (fake probe: the job
# says what it uses in its folder's fake_gpu_usage.json).
USES = r"""
import json, os, sys, time
folder, drop, end = os.environ["GPUHERD_JOB_DIR"], sys.argv[1], sys.argv[2]
def use(amount):
    with open(os.path.join(folder, "fake_gpu_usage.json.tmp"), "w") as f:
        json.dump({"memory": amount}, f)
    os.replace(os.path.join(folder, "fake_gpu_usage.json.tmp"),
               os.path.join(folder, "fake_gpu_usage.json"))
use("20GiB")
while not os.path.exists(drop):
    time.sleep(0.05)
use("1GiB")
while not os.path.exists(end):
    time.sleep(0.05)
"""


def stored_peak(home: Path, job_id: int) -> int | None:
    with contextlib.closing(sqlite3.connect(home / "herd.db")) as db:
        row = db.execute(
            "SELECT peak_mem FROM attempts WHERE job_id = ? AND number = 1", (job_id,)
        ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def test_a_restarted_daemon_holds_a_job_to_the_peak_it_used(herd: Herd, tmp_path: Path) -> None:
    script, drop, end = tmp_path / "uses.py", tmp_path / "drop", tmp_path / "end"
    script.write_text(USES)
    herd.start("--fake-gpus", "1x24GiB")
    holder = herd.submit("--mem", "5GiB", "--", sys.executable, str(script), str(drop), str(end))
    try:
        # Recorded as it is seen, while the job runs (not only at its end).
        wait_for(lambda: stored_peak(herd.home, holder) == 20 * GiB, what="the peak recorded")
        drop.touch()
        wait_for(lambda: herd.json("gpus")["gpus"][0]["memory_used"] == GiB, what="1 GiB used")
        herd.kill9()
        herd.start("--fake-gpus", "1x24GiB")
        assert herd.job(holder)["state"] == "running"  # re-attached
        waiting = herd.submit("--mem", "5GiB", "--", "true")
        reason = wait_for(lambda: herd.job(waiting).get("reason"), what="a reason")
        assert reason == (
            f"waiting for 5.0 GiB free on 1 GPU (job {holder} holds 20.0 GiB of GPU 0)"
        )
        assert herd.job(waiting)["state"] == "queued"
    finally:
        end.touch()
    herd.wait_state(holder, "succeeded")
    herd.wait_state(waiting, "succeeded")
    assert stored_peak(herd.home, holder) == 20 * GiB  # not the 1 GiB seen after the restart
    assert "peak 20.0 GiB" in herd.cli("show", str(holder)).stdout
