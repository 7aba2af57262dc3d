"""`--order longest-first` goes by run times measured to their end. A point whose job was
lost (it died while no daemon ran: its end is its last sign of life) or killed had its few
seconds taken for its length, so it ran last, as a short one, when it may be the longest.
Its run time is not known now, and such a point goes first, with those never run (real
daemon, a lost job made as a crash makes one)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from conftest import Herd, group_members, wait_for

ARGS = ("python3 -c 'import time, sys; time.sleep(float(sys.argv[1]))' {s}", "-p", "s")
NAME = ("--name", "lpt", "--results-dir", "lpt")


def test_lost_and_killed_points_are_not_taken_for_short_ones(daemon: Herd, work: Path) -> None:
    # s=1.5 runs to its end; s=300 is lost, s=301 is killed, each well before 1.5 s.
    first = json.loads(
        daemon.cli("sweep", *ARGS, "1.5", "300", "301", *NAME, "--json", cwd=work).stdout
    )
    measured, lost, killed = first["ids"]
    daemon.wait_state(killed, "running")
    daemon.cli("kill", str(killed))
    daemon.wait_state(killed, "killed")
    daemon.wait_state(measured, "succeeded")
    pid = int(daemon.wait_state(lost, "running")["pid"])
    daemon.kill9()  # the job dies while no daemon watches it: found lost at the restart
    os.killpg(pid, signal.SIGKILL)
    wait_for(lambda: not group_members(pid), what=f"job group {pid} to be gone")
    daemon.start()
    ran = {
        job_id: daemon.wait_state(job_id, "succeeded", "lost", "killed") for job_id in first["ids"]
    }
    assert ran[measured]["ended_at"] - ran[measured]["started_at"] >= 1.5
    for job_id in (lost, killed):
        assert ran[job_id]["ended_at"] - ran[job_id]["started_at"] < 1.5, ran[job_id]

    daemon.cli("pause")  # the queue's order is the ids' order: nothing starts meanwhile
    again = json.loads(
        daemon.cli(
            "sweep",
            *ARGS,
            "1.5",
            "300",
            "301",
            *NAME,
            "--force",
            "--order",
            "longest-first",
            "--json",
            cwd=work,
        ).stdout
    )
    order = [daemon.job(job_id)["command"].split()[-1] for job_id in sorted(again["ids"])]
    assert order == ["300", "301", "1.5"]  # before: 1.5, then the two taken for short
