"""`gpuherd ls --columns ...,pid` (GPUPeasy showed each job's PID): a running or paused job's
pid, as `kill` and nvidia-smi name it; an ended job's is left out of the table, as it may
name another program by now, and kept in --csv (the field --json gives)."""

from __future__ import annotations

import csv
import io
import os
from uuid import uuid4

from conftest import Herd, wait_for


def test_the_pid_column_shows_a_live_jobs_pid_and_only_csv_keeps_an_ended_ones(
    shared_daemon: Herd,
) -> None:
    herd, project = shared_daemon, f"p{uuid4().hex[:8]}"
    job = herd.submit("--project", project, "--", "sleep 300")
    herd.wait_state(job, "running")
    pid = wait_for(lambda: herd.job(job)["pid"], what="the job's pid recorded")
    assert os.getpgid(pid) == pid  # the job's own process (its group's leader)
    table = herd.cli("ls", "--project", project, "--columns", "id,state,pid").stdout
    assert table.split() == ["ID", "STATE", "PID", str(job), "running", str(pid)]
    herd.cli("kill", str(job))
    herd.wait_state(job, "killed")
    ended = herd.cli("ls", "--project", project, "--columns", "id,state,pid").stdout
    assert ended.split() == ["ID", "STATE", "PID", str(job), "killed"]
    listed = herd.cli("ls", "--project", project, "--csv", "--columns", "id,pid").stdout
    rows = list(csv.reader(io.StringIO(listed)))
    assert rows == [["id", "pid"], [str(job), str(pid)]]
