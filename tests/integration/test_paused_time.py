"""A paused job's time stands still: `ls`, `show` and the dashboard count only the time it ran
(core/run_time.py), while it is paused and after it ends."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Any

from conftest import Herd, stays, wait_for
from gpuherd.executors.local_escaped import stopped

_SECONDS = re.compile(r"\s(\d+\.\d)s\s")
"""A time under a minute as `ls` shows it (`12.3s`): these tests' jobs run for seconds."""


def _shown(herd: Herd, job_id: int) -> float:
    """The TIME `gpuherd ls` shows for the job, in seconds."""
    for line in herd.cli("ls", "--all").stdout.splitlines()[1:]:
        if line.split()[0] == str(job_id):
            found = _SECONDS.search(line)
            assert found, f"no time in {line!r}"
            return float(found[1])
    raise AssertionError(f"job {job_id} is not listed")


def _dashboard_time(herd: Herd, job_id: int) -> str:
    """The run time the dashboard's jobs table shows for the job."""
    row = re.search(rf'<tr id="job-{job_id}".*?</tr>', herd.page("/ui/jobs"), re.S)
    assert row, f"job {job_id} is not in the dashboard's table"
    found = re.search(r'<td class="num">([^<]*)</td>', row[0])
    assert found
    return found[1]


def test_a_paused_jobs_time_stands_still_and_goes_on_once_resumed(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("sleep 60")
    herd.wait_state(job, "running")
    herd.cli("pause", str(job))
    herd.wait_state(job, "paused")
    frozen = _shown(herd, job)
    # Before, TIME went on counting the pause (by this window's 1.5 s).
    stays(lambda: _shown(herd, job) <= frozen + 0.1, 1.5, "the paused job's time to stand still")
    shown = herd.cli("show", str(job)).stdout
    assert re.search(r"run time +\d+\.\ds \(and \d+\.\ds paused\)", shown), shown

    herd.cli("resume", str(job))
    herd.wait_state(job, "running")
    wait_for(lambda: _shown(herd, job) >= frozen + 0.3, 10, "the resumed job's time to go on")


def test_a_job_killed_while_paused_shows_the_time_it_ran(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("sleep 60")
    herd.wait_state(job, "running")
    herd.cli("pause", str(job))
    paused = herd.wait_state(job, "paused")
    ran = _shown(herd, job)
    # Paused for 1.5 s: the time it ends with must not count them. (`ran` is rounded to a
    # tenth, up by as much as 0.05 s: after a pause of 1.0 s, a 0.0986 s run read 0.1 and the
    # whole 1.0986 s came 1.4 ms short of the bound below.)
    wait_for(lambda: time.time() >= paused["paused_at"] + 1.5, 5, "1.5 s of pause")
    herd.cli("kill", str(job))
    ended = herd.wait_state(job, "killed")

    whole = ended["ended_at"] - paused["started_at"]
    shown = _shown(herd, job)
    # The kill resumed it (its grace runs), and it ran on from there to its end: how long
    # that took (slow on a loaded machine) is read from its events, not assumed short.
    events = [(e["event"], e["at"]) for e in herd.json("show", str(job))["events"]]
    paused_at = next(at for event, at in events if event == "pause")
    resumed_at = next(at for event, at in events if event == "resume" and at > paused_at)
    after = ended["ended_at"] - resumed_at
    assert resumed_at - paused_at >= 1.5, events
    # What ran before the pause and after it, each shown to a tenth; the pause not counted.
    assert abs(shown - (ran + after)) <= 0.11, (shown, ran, after, whole)
    assert shown < whole - 1.4, (shown, ran, whole)
    assert _dashboard_time(herd, job) == f"{shown:.1f}s"
    assert "paused)" in herd.page(f"/ui/jobs/{job}")  # the job's page: "(and 1.2s paused)"


def test_a_paused_sweep_points_time_stands_still(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    name = f"paused-{tmp_path.name}"
    herd.cli("sweep", "sleep 60 # {x}", "-p", "x", "1", "--name", name, "--gpus", "0", cwd=tmp_path)

    def point() -> dict[str, Any]:
        (row,) = herd.json("sweep", "status", name)["rows"]
        return dict(row)

    job = wait_for(lambda: point()["job_id"], 10, "the point's job")
    herd.wait_state(job, "running")
    herd.cli("pause", str(job))
    herd.wait_state(job, "paused")
    frozen = point()["seconds"]
    stays(lambda: point()["seconds"] <= frozen + 0.1, 1.5, "the paused point's time to stand still")
    herd.cli("kill", str(job))


def test_a_job_cancelled_while_waiting_to_run_again_counts_no_wait_as_run_time(
    shared_daemon: Herd,
) -> None:
    """A failed job put back (`retry --hold`) and then killed waiting: the run it had lasted
    an instant, and its time in the queue since is no run. ls and show counted that whole
    wait as its TIME (the earlier attempt's start to the cancel: 3m03s for a 0.0s run)."""
    herd = shared_daemon
    job = herd.submit("exit 1")
    failed = herd.wait_state(job, "failed")
    herd.cli("retry", "--hold", str(job))
    herd.wait_state(job, "held")
    wait_for(lambda: time.time() >= failed["ended_at"] + 1.5, 5, "1.5 s in the queue")
    herd.cli("kill", str(job))
    herd.wait_state(job, "cancelled")

    listed = herd.cli("ls", "--all").stdout.splitlines()
    (row,) = [line for line in listed if line.startswith(f"{job} ")]
    counted = _SECONDS.search(row)
    assert counted is None or float(counted[1]) < 1.0, row
    run_time = re.search(r"run time +(\d+\.\d)s", herd.cli("show", str(job)).stdout)
    assert run_time is None or float(run_time[1]) < 1.0, run_time


def test_a_job_left_stopped_while_herd_db_says_it_runs_is_resumed_by_a_restart(
    daemon: Herd, tmp_path: Path
) -> None:
    """A `pause` sends SIGSTOP, then commits: a daemon killed between the two left the job
    stopped while herd.db said it ran, and nothing resumed it (its GPUs held for ever). Made
    here by stopping the job's group by hand, as that crash leaves it."""
    go = tmp_path / "go"
    job = daemon.submit("--", f"while [ ! -e {go} ]; do sleep 0.02; done")
    pid = int(wait_for(lambda: daemon.job(job)["pid"], what="the job's pid"))
    os.killpg(pid, signal.SIGSTOP)
    # Stopped as the daemon tells it: the shell's state is T, or, stopped as it vforked
    # `sleep`, D with its child T (psutil's status of the shell stayed "disk-sleep").
    wait_for(lambda: stopped(pid), what="the stop")
    daemon.kill9()
    go.touch()
    daemon.start()
    ended = daemon.wait_state(job, "succeeded", "failed", timeout=10)
    assert ended["state"] == "succeeded"
    assert daemon.job(job)["state"] == "succeeded"
