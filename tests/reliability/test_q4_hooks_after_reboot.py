"""On-end hooks across restarts when jobs share one end time. After a reboot, every job found
lost ends at the boot: before, a start ran the hooks of the jobs that ended after the end
time of the last hook started, so a daemon stopped or crashed while their hooks waited their
turn left the rest of them never run. Each job's hook now runs once (a mark per job)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from conftest import Herd, group_members, stays, wait_for

TICKS = "while :; do echo tick; sleep 0.1; done"
"""A job that writes to its log ten times a second: its last sign of life comes after the
pretended boot, so its end is recorded at the boot, as all the others'."""


def test_jobs_a_reboot_found_lost_each_get_their_hook_across_a_crash(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "6")  # the 6 jobs run at once
    started, done, go = tmp_path / "started", tmp_path / "done", tmp_path / "go"
    started.mkdir()
    # 4 hooks run at once: they hold on until `go`, so the other ends wait their turn.
    herd.cli(
        "config",
        "set",
        "on-end",
        f'touch "{started}/$GPUHERD_JOB_ID"; while [ ! -e {go} ]; do sleep 0.02; done; '
        f'echo "$GPUHERD_JOB_ID" >> {done}',
    )
    ids = [herd.submit("--", TICKS) for _ in range(6)]
    pids = [int(wait_for(lambda j=j: herd.wait_state(j, "running")["pid"])) for j in ids]
    booted = time.time()
    logs = [herd.home / "jobs" / str(j) / "attempt-1" / "stdout.log" for j in ids]
    for log in logs:
        wait_for(lambda log=log: log.stat().st_mtime > booted + 0.2, what="ticks past the boot")
    herd.kill9()  # then a "reboot": the jobs die with no exit status, no daemon watching
    for pid in pids:
        os.killpg(pid, signal.SIGKILL)
    for pid in pids:
        wait_for(lambda pid=pid: not group_members(pid), what=f"job group {pid} to be gone")
    herd.env["GPUHERD_TEST_BOOT_TIME"] = repr(booted)
    herd.start()
    ends = {herd.wait_state(j, "lost")["ended_at"] for j in ids}
    assert ends == {booted}, ends  # one end time for all
    wait_for(lambda: len(os.listdir(started)) == 4, what="4 hooks to start")
    herd.kill9()  # 2 hooks still waiting their turn
    herd.start()
    go.touch()
    wait_for(lambda: done.exists() and len(done.read_text().split()) == len(ids), timeout=30)
    stays(lambda: len(done.read_text().split()) == len(ids))  # none twice
    assert sorted(map(int, done.read_text().split())) == ids
