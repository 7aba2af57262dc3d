"""What the verbs say of a job in the grace of a stop (SIGTERM sent, its SIGKILL due): what is
true then and what works, not a running job's advice (`hold`: "it can: kill, pause, retry",
pause refused then; `rm`: "kill it first", done already)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from conftest import Herd, wait_for
from gpuherd.errors import NotFound

DEAF = "trap '' TERM; echo deaf; sleep 100"
"""A job that ignores SIGTERM: it stays in its grace until its SIGKILL (once it has said so:
a SIGTERM before its trap, as a loaded machine's slow shell let one land, ends it)."""


def refused(herd: Herd, *args: str) -> str:
    """The one line `gpuherd ARGS` is refused with (exit 1), without its `gpuherd: error: `."""
    answer = herd.cli(*args, check=False)
    assert (answer.returncode, answer.stdout) == (1, ""), answer
    assert answer.stderr.startswith("gpuherd: error: ") and answer.stderr.count("\n") == 1
    return answer.stderr.removeprefix("gpuherd: error: ").rstrip("\n")


@contextlib.contextmanager
def deaf_job(herd: Herd, *options: str) -> Iterator[int]:
    """A job that ignores SIGTERM, its grace 60 s: SIGKILLed at the end, whatever happened (a
    failed test would leave the fixture's teardown waiting for its grace)."""
    job = herd.submit("--grace", "60s", *options, "--", DEAF)
    try:
        deaf_now(herd, job)
        yield job
    finally:
        sigkill(herd, job)


def deaf_now(herd: Herd, job: int) -> None:
    """Until the job's trap is set (its line is in its log)."""
    log = herd.home / "jobs" / str(job) / "attempt-1" / "stdout.log"
    wait_for(lambda: log.exists() and log.read_text() == "deaf\n", what="the job's trap")


def sigkill(herd: Herd, job: int) -> None:
    """Its SIGKILL, now, if it still runs."""
    try:
        shown = herd.job(job)
    except NotFound:  # removed
        return
    if shown["state"] in ("running", "paused") and shown["pid"]:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shown["pid"], signal.SIGKILL)


def stopping(herd: Herd, job: int, how: str) -> None:
    wait_for(lambda: herd.job(job)["reason"] == f"stopping ({how})", what=f"stopping ({how})")


def test_a_job_being_killed_is_told_what_works_then(shared_daemon: Herd) -> None:
    with deaf_job(shared_daemon) as job:
        told_what_works(shared_daemon, job)


def told_what_works(shared_daemon: Herd, job: int) -> None:
    """Each verb's refusal while the kill, then a retry, then a kill again is under way."""
    shared_daemon.wait_state(job, "running")
    shared_daemon.cli("kill", str(job))
    stopping(shared_daemon, job, "killed")
    being = f"job {job} is being stopped (killed)"
    wait_rm = f"gpuherd wait -q {job}; gpuherd rm {job}"
    assert refused(shared_daemon, "rm", str(job)) == (
        f"{being}: rm it once it has ended, or `{wait_rm}`"
    )
    assert refused(shared_daemon, "hold", str(job)) == (
        f"{being}: once it has ended, `gpuherd retry --hold {job}` puts it back held"
    )
    assert refused(shared_daemon, "edit", str(job), "--gpus", "2") == (
        f"{being}: once it has ended, `gpuherd retry --hold {job}` puts it back held, to edit it"
    )
    assert refused(shared_daemon, "retry", "--hold", str(job)) == (
        f"{being}: retry --hold it once it has ended, or `gpuherd wait -q {job}; "
        f"gpuherd retry --hold {job}`"
    )
    assert refused(shared_daemon, "release", str(job)) == (
        f"job {job}: cannot release a job that is being stopped (killed) (it can: retry)"
    )
    assert re.fullmatch(
        rf"{re.escape(being)}: it is not paused during its grace; it ends by itself or at its "
        r"SIGKILL in \d+\.\ds",
        refused(shared_daemon, "pause", str(job)),
    )

    # A retry replaces the kill: it is queued again once stopped, and the advice says so.
    shared_daemon.cli("retry", str(job))
    stopping(shared_daemon, job, "killed, then queued again")
    again = f"job {job} is being stopped (killed, then queued again)"
    # Queued again, it starts again at once: the advice is a kill first, then the verb.
    first = (
        f"{again}: it starts again as soon as it is queued; "
        f"`gpuherd kill {job}; gpuherd wait -q {job}; "
    )
    assert refused(shared_daemon, "rm", str(job)) == f"{first}gpuherd rm {job}` removes it"
    held = f"{first}gpuherd retry --hold {job}` puts it back held"
    assert refused(shared_daemon, "hold", str(job)) == held
    assert refused(shared_daemon, "retry", "--hold", str(job)) == held
    assert refused(shared_daemon, "move", str(job), "--first") == f"{held}, to move it"
    assert re.fullmatch(
        rf"{re.escape(again)}: it is not paused during its grace; it ends by itself or at its "
        r"SIGKILL in \d+\.\ds, then it is queued again",
        refused(shared_daemon, "pause", str(job)),
    )
    assert refused(shared_daemon, "release", str(job)) == (
        f"job {job}: cannot release a job that is being stopped (killed, then queued again) "
        "(it can: kill)"
    )

    # A kill again (the last word wins), said so: it was "already stopping", as if the kill
    # changed nothing. Then the advice, run as given, removes the job.
    assert re.fullmatch(
        rf"job {job}: stopping \(SIGKILL in \d+\.\ds\): it ends killed, no longer queued again\n",
        shared_daemon.cli("kill", str(job)).stdout,
    )
    stopping(shared_daemon, job, "killed")
    bin_dir = str(Path(sys.executable).parent)
    env = {**shared_daemon.env, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    advice = subprocess.Popen(
        ["sh", "-c", wait_rm], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        sigkill(shared_daemon, job)  # now: the grace's 60 s would be the suite's
        out, err = advice.communicate(timeout=30)
    finally:
        advice.kill()
    assert (advice.returncode, out) == (0, f"job {job}: removed\n"), err


def test_a_job_stopped_at_its_timeout_can_be_killed_or_retried(shared_daemon: Herd) -> None:
    with deaf_job(shared_daemon, "--timeout", "0.5s") as job:
        stopping(shared_daemon, job, "timeout")
        assert refused(shared_daemon, "hold", str(job)) == (
            f"job {job} is being stopped (timeout): once it has ended, `gpuherd retry --hold "
            f"{job}` puts it back held"
        )
        assert refused(shared_daemon, "release", str(job)) == (
            f"job {job}: cannot release a job that is being stopped (timeout) (it can: kill, retry)"
        )
        # A kill makes it end killed, not failed by its timeout: said so.
        assert re.fullmatch(
            rf"job {job}: stopping \(SIGKILL in \d+\.\ds\): it ends killed, no longer by its "
            r"--timeout\n",
            shared_daemon.cli("kill", str(job)).stdout,
        )
        stopping(shared_daemon, job, "killed")
        assert shared_daemon.cli("kill", str(job)).stdout.startswith(
            f"job {job}: already stopping (SIGKILL in "
        )
    shared_daemon.wait_state(job, "killed")


def test_the_advice_during_a_retrys_stop_works_as_given(shared_daemon: Herd) -> None:
    """`hold` while a retry stops the job: queued again, it would start again at once (its
    own GPU is free), so "hold it once it is queued again" had no moment to be done in, and
    `retry --hold` takes no queued job. The command the refusal gives, run as given, puts it
    back held, and it never starts again."""
    with deaf_job(shared_daemon) as job:
        shared_daemon.wait_state(job, "running")
        shared_daemon.cli("retry", str(job))
        stopping(shared_daemon, job, "killed, then queued again")
        said = refused(shared_daemon, "hold", str(job))
        steps = re.search(r"`([^`]*)`", said)
        assert steps is not None, said
        bin_dir = str(Path(sys.executable).parent)
        env = {**shared_daemon.env, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        advice = subprocess.Popen(
            ["sh", "-c", steps.group(1)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stopping(shared_daemon, job, "killed")  # the advice's kill: not queued again
            sigkill(shared_daemon, job)  # now: the grace's 60 s would be the suite's
            out, err = advice.communicate(timeout=30)
        finally:
            advice.kill()
        assert advice.returncode == 0, (out, err)
        shown = shared_daemon.job(job)
        assert shown["state"] == "held", shown
        assert shown["attempt"] == 1, shown  # it did not start again meanwhile
