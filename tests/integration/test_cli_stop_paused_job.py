"""A `kill` or `retry` (or `daemon stop --kill`) of a paused job resumes it for its grace,
and says so.

The executor sends a paused job SIGCONT with its SIGTERM (it could not act on the SIGTERM
stopped), but the job stayed `paused` in the queue: `ls` and `show` said `paused` while it
ran its handler, `pause` answered `already paused` where a stopping job's pause is refused,
`resume` answered `resumed`, and a daemon restarted in the grace sent it SIGSTOP again,
freezing it in the time it had to save its work. Real daemon, 4 fake GPUs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd, communicated, wait_for


def _paused_job(daemon: Herd, folder: Path) -> int:
    """A paused job that, on SIGTERM, writes `term` then waits for `go` before it ends."""
    term, go = folder / "term", folder / "go"
    job = daemon.submit(
        f"trap 'touch {term}; while [ ! -e {go} ]; do sleep 0.02; done; exit 0' TERM; "
        "while :; do sleep 0.05; done"
    )
    daemon.wait_state(job, "running")
    daemon.cli("pause", str(job))
    daemon.wait_state(job, "paused")
    return job


@pytest.mark.parametrize(
    ("verb", "said"),
    [
        ("kill", "stopping (SIGTERM, then SIGKILL after 60s)"),
        ("retry", "stopping, then queued again"),
    ],
)
def test_a_stopped_paused_job_runs_its_grace(
    shared_daemon: Herd, tmp_path: Path, verb: str, said: str
) -> None:
    job = _paused_job(shared_daemon, tmp_path)
    try:
        grace = ("--grace", "60s") if verb == "kill" else ()
        answer = shared_daemon.cli(verb, *grace, str(job))
        assert answer.stdout == f"job {job}: {said}\n"
        wait_for(lambda: (tmp_path / "term").exists(), what="the job's SIGTERM handler")
        # It runs its handler: it is no longer paused, in the queue's words too.
        shown = shared_daemon.job(job)
        assert shown["state"] == "running", shown["state"]
        assert str(job) in shared_daemon.cli("ls", "-q", "--state", "running").stdout.split()
        refused = shared_daemon.cli("pause", str(job), check=False)
        assert refused.returncode == 1
        assert "it is not paused during its grace" in refused.stderr, refused.stderr
        assert shared_daemon.cli("resume", str(job)).stdout == f"job {job}: already running\n"
        events = [e["event"] for e in shown["events"]]
        assert events[-2:] == ["resume", "stop"], events
    finally:  # its handler ends it, whatever failed above
        (tmp_path / "go").touch()
    if verb == "kill":
        assert shared_daemon.wait_state(job, "killed")["state"] == "killed"
    else:  # queued again, then running anew (no longer paused)
        wait_for(lambda: shared_daemon.job(job)["attempt"] == 2, what="its second attempt")
        assert shared_daemon.wait_state(job, "running")["state"] == "running"


def test_daemon_stop_kill_resumes_a_paused_job_for_its_grace(daemon: Herd, tmp_path: Path) -> None:
    """`daemon stop --kill` stops a paused job as `kill` does: resumed, in the queue's words
    too (it stayed `paused` there through its grace, and a daemon started again before it
    ended sent it SIGSTOP again)."""
    job = _paused_job(daemon, tmp_path)
    stopping = daemon.popen("daemon", "stop", "--kill", "--grace", "60s")
    term = tmp_path / "term"
    try:
        # (or the stop's end: one that failed, say under load, is told with its words, not
        # as a handler that never ran, as it once was at a load of 8, the cause unknown)
        wait_for(lambda: term.exists() or stopping.poll() is not None, what="the SIGTERM handler")
        assert term.exists(), communicated(stopping)
        shown = daemon.job(job)
        assert shown["state"] == "running", shown["state"]
        assert [e["event"] for e in shown["events"]][-2:] == ["resume", "stop"]
    finally:  # its handler ends it, whatever failed above
        (tmp_path / "go").touch()
        _out, err = communicated(stopping)
    assert stopping.returncode == 0, err
