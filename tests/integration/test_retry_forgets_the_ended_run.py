"""A job put back by `retry` (held or queued) has not ended: `show`, `show --json` and `ls
--json` give it no outcome, exit code, message, end time or pid. A job cancelled while queued,
then `retry --hold`, said `message  cancelled by the user` while held; a failed one kept its
`exit 3` and the pid of its ended process. Its attempts and history keep how it ended.
Real daemon, 4 fake GPUs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Herd

ENDED = ("outcome", "exit_code", "signal", "message", "ended_at", "pid")


def listed(herd: Herd, job_id: int) -> dict[str, Any]:
    """The job as `ls --json` lists it."""
    (job,) = [j for j in herd.json("ls", "--all") if j["id"] == job_id]
    return dict(job)


def nothing_ended(herd: Herd, job_id: int, state: str) -> None:
    """The job waits in `state`, and no view of it says how a run ended."""
    shown, in_list = herd.json("show", str(job_id)), listed(herd, job_id)
    assert shown["state"] == in_list["state"] == state
    assert {key: shown[key] for key in ENDED} == dict.fromkeys(ENDED)
    assert {key: in_list[key] for key in ENDED} == dict.fromkeys(ENDED)
    text = herd.cli("show", str(job_id)).stdout
    assert "message" not in text and "cancelled by the user" not in text.split("history")[0]
    assert "\npid        -\n" in text and "\nended      -\n" in text


@pytest.mark.parametrize("hold", [True, False])
def test_a_cancelled_job_retried_says_nothing_of_its_cancel(
    shared_daemon: Herd, tmp_path: Path, hold: bool
) -> None:
    herd = shared_daemon
    blocker = herd.submit("--gpus", "4", f"while [ ! -e {tmp_path / 'go'} ]; do sleep 0.05; done")
    herd.wait_state(blocker, "running")
    job_id = herd.submit("--gpus", "1", "echo again")  # queued behind it
    herd.cli("kill", str(job_id))
    assert herd.wait_state(job_id, "cancelled")["message"] == "cancelled by the user"
    herd.cli("retry", *(["--hold"] if hold else []), str(job_id))
    nothing_ended(herd, job_id, "held" if hold else "queued")
    events = [(e["event"], e["detail"]) for e in herd.job(job_id)["events"]]
    assert ("cancel", "cancelled by the user") in events  # its history keeps it
    (tmp_path / "go").touch()
    herd.wait_state(blocker, "succeeded")
    if hold:
        herd.cli("release", str(job_id))
    assert herd.wait_state(job_id, "succeeded")["message"] is None


def test_a_failed_job_retried_held_keeps_its_end_in_its_attempt(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job_id = herd.submit("echo oops >&2; exit 3")
    failed = herd.wait_state(job_id, "failed")
    assert (failed["exit_code"], failed["pid"] is not None) == (3, True)
    herd.cli("retry", "--hold", str(job_id))
    nothing_ended(herd, job_id, "held")
    (attempt,) = herd.json("show", str(job_id))["attempts"]
    assert (attempt["outcome"], attempt["exit_code"], attempt["pid"]) == (
        "exit",
        3,
        failed["pid"],
    )


def test_a_running_job_retried_waits_with_no_end_of_its_own(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """`retry` of a running job stops it and queues it again: queued (behind a job of higher
    priority that took its GPUs), it said `killed`, signal 15, an end time and the stopped
    process's pid, as no job retried when it had ended did."""
    herd = shared_daemon
    job_id = herd.submit("--gpus", "4", "--grace", "5", "sleep 60")
    herd.wait_state(job_id, "running")
    go = tmp_path / "go"
    ahead = herd.submit("--gpus", "4", "-p", "10", f"while [ ! -e {go} ]; do sleep 0.05; done")
    herd.cli("retry", str(job_id))
    herd.wait_state(ahead, "running")  # on the GPUs the retried job left
    nothing_ended(herd, job_id, "queued")
    (attempt,) = herd.json("show", str(job_id))["attempts"]
    assert attempt["outcome"] == "killed" and attempt["pid"] is not None  # its attempt's
    go.touch()
    assert herd.wait_state(job_id, "running")["attempt"] == 2
