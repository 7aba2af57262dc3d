"""A `kill` cut off by a crash of the daemon (real daemon, real kill -9): a kill the daemon
answered is carried out by the next daemon (the job ends `killed`, not retried); one cut off
before its commit is lost whole (the job runs on, re-adopted), never half done. The SIGTERM
was sent before the commit: a crash in between left a job signalled with no record that it
was asked to stop, which ended `failed (signal 15)`, or with --retries ran again.

GPUHERD_TEST_STOP_HOLD holds the daemon once it has handled a stop, before its commit (where
the SIGTERM had gone), until the test removes the file it names."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, wait_for

HOLD = "GPUHERD_TEST_STOP_HOLD"


def job_command(runs: Path, terms: Path, ends: bool) -> str:
    """Notes its attempt in `runs`, and a SIGTERM in `terms`; `ends`: exits at the SIGTERM,
    else goes on (a checkpoint that outlasts the grace): only the SIGKILL ends it."""
    exits = "; exit 143" if ends else ""
    return (
        f'echo "$GPUHERD_ATTEMPT" >> {runs}; trap "echo term >> {terms}{exits}" TERM; '
        "while :; do sleep 0.1; done"
    )


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def start_and_kill(herd: Herd, tmp_path: Path, answered: bool) -> tuple[int, list[int], int]:
    """A running job (--retries 2) and three queued behind it; `kill` of all four, the daemon
    held before the kill's commit and killed -9 there, or (`answered`) once the kill is
    answered. The ids, and the running job's pid."""
    mark = tmp_path / "hold"
    herd.env[HOLD] = str(mark)
    herd.start("--fake-gpus", "1")
    runs, terms = tmp_path / "runs", tmp_path / "terms"
    command = job_command(runs, terms, ends=not answered)
    job = herd.submit("--retries", "2", "--grace", "2s", "--", command)
    queued = herd.submit_lines(["true"] * 3)
    wait_for(lambda: herd.job(job)["pid"] and lines(runs) == ["1"], what=f"job {job} to run")
    pid = herd.job(job)["pid"]
    kill = herd.popen("kill", f"{job}-{queued[-1]}")
    try:
        wait_for(mark.exists, 30, "the daemon to hold before the kill's commit")
        if answered:
            mark.unlink()
            assert kill.wait(timeout=30) == 0, kill.communicate()
        herd.kill9_held()
    finally:
        out, err = kill.communicate(timeout=30)
    assert answered or kill.returncode != 0, (out, err)  # (its daemon died under it)
    del herd.env[HOLD]
    herd.start("--fake-gpus", "1")
    return job, queued, pid


def test_a_kill_cut_off_before_its_commit_leaves_the_job_running(
    herd: Herd, tmp_path: Path
) -> None:
    job, queued, pid = start_and_kill(herd, tmp_path, answered=False)
    after = herd.job(job)
    # Was: the job had its SIGTERM, then ran again as attempt 2 (`retry -> queued  signal 15`).
    assert (after["state"], after["attempt"], after["pid"]) == ("running", 1, pid), after
    assert lines(tmp_path / "terms") == []  # no signal for a kill that was not stored
    assert [herd.job(i)["state"] for i in queued] == ["queued"] * 3  # lost whole
    herd.cli("kill", str(job))  # asked again, it is done
    wait_for(lambda: herd.job(job)["state"] != "running", 30, f"job {job} to end")
    ended = herd.job(job)
    assert (ended["state"], ended["attempt"]) == ("killed", 1), ended
    assert lines(tmp_path / "runs") == ["1"] and lines(tmp_path / "terms") == ["term"]


def test_a_kill_answered_before_a_crash_ends_the_job_killed(herd: Herd, tmp_path: Path) -> None:
    job, queued, _ = start_and_kill(herd, tmp_path, answered=True)
    # The restarted daemon carries the stop on: the SIGKILL at the end of its grace.
    wait_for(lambda: herd.job(job)["state"] != "running", 30, f"job {job} to end")
    ended = herd.job(job)
    assert (ended["state"], ended["attempt"]) == ("killed", 1), ended
    assert lines(tmp_path / "runs") == ["1"] and lines(tmp_path / "terms") == ["term"]
    assert "retry" not in herd.cli("show", str(job)).stdout
    assert [herd.job(i)["state"] for i in queued] == ["cancelled"] * 3
