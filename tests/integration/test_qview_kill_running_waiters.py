"""`gpuherd kill` of a running job that other jobs wait for (`--after`): those jobs are
cancelled once it ends, and the kill's answer said nothing of them (a waiting job's kill
already named them: `cancelled, and job 5, which waited for it`). It names them now, in
the same words, as what will happen; `--after-any` and `--after-fail` waiters, which run
after its kill, are not named."""

from __future__ import annotations

from conftest import Herd

WILL = "which {wait} for it, will be cancelled once it ends"


def test_a_running_jobs_kill_names_the_waiters_its_end_cancels(shared_daemon: Herd) -> None:
    herd = shared_daemon
    runs = herd.submit("sleep 60")
    herd.wait_state(runs, "running")
    after = herd.submit("--after", str(runs), "true")
    after_after = herd.submit("--after", str(after), "true")  # cancelled with it, in turn
    after_any = herd.submit("--after-any", str(runs), "true")
    after_fail = herd.submit("--after-fail", str(runs), "true")

    said = herd.cli("kill", "--grace", "0", str(runs)).stdout
    assert said == (
        f"job {runs}: stopping (SIGTERM, then SIGKILL at once), and jobs {after}-{after_after}, "
        f"{WILL.format(wait='wait')}\n"
    )
    # What it said is what happened.
    herd.wait_state(runs, "killed")
    for waiter in (after, after_after):
        assert herd.wait_state(waiter, "cancelled")["outcome"] == "dependency_failed"
    for runs_after in (after_any, after_fail):
        herd.wait_state(runs_after, "succeeded")


def test_a_waiter_the_kill_names_too_is_said_on_its_own_line(shared_daemon: Herd) -> None:
    herd = shared_daemon
    runs = herd.submit("sleep 60")
    herd.wait_state(runs, "running")
    named = herd.submit("--after", str(runs), "true")
    behind_named = herd.submit("--after", str(named), "true")
    other = herd.submit("--after", str(runs), "true")

    lines = herd.cli("kill", "--grace", "0", str(runs), str(named)).stdout.splitlines()
    # `named`'s own kill cancels it and the job behind it: only `other` is left to the end.
    assert lines == [
        f"job {runs}: stopping (SIGTERM, then SIGKILL at once), and job {other}, "
        + WILL.format(wait="waits"),
        f"job {named}: cancelled, and job {behind_named}, which waited for it",
    ]
    herd.wait_state(runs, "killed")
    for waiter in (named, behind_named, other):
        herd.wait_state(waiter, "cancelled")


def test_a_kill_after_a_retry_of_a_running_job_names_its_waiters(shared_daemon: Herd) -> None:
    """A `retry` of a running job stops it to queue it again: its waiters wait on, and the
    retry names none. A kill during that stop has the last word (the job is not run again):
    it names them, as they are cancelled once the job ends."""
    herd = shared_daemon
    runs = herd.submit("--grace", "60", "trap '' TERM; sleep 60")
    herd.wait_state(runs, "running")
    waiter = herd.submit("--after", str(runs), "true")
    assert herd.cli("retry", str(runs)).stdout == f"job {runs}: stopping, then queued again\n"
    said = herd.cli("kill", "--grace", "0", str(runs)).stdout
    assert said.endswith(f", and job {waiter}, {WILL.format(wait='waits')}\n"), said
    herd.wait_state(runs, "killed")
    herd.wait_state(waiter, "cancelled")
