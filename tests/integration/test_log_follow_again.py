"""`log -f` and `submit --follow` of jobs that ran before or merge their streams.

- A job waiting out its --retry-delay, or held by `retry --hold`, was followed in silence
  (its last attempt's log, then nothing, for 10 minutes or until someone released it): it
  says why on stderr, as of a job that has not started yet.
- A job whose stderr goes to its stdout's file (`-o F`, `-o F -e F`) ended badly was pointed
  at `log --stderr`, which printed the followed text again."""

from __future__ import annotations

import signal
from pathlib import Path

from conftest import Herd, read_line, wait_for


def test_a_retry_waiting_its_delay_says_so(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--retries", "1", "--retry-delay", "10m", "--", "echo epoch 1; exit 1")
    wait_for(lambda: herd.job(job).get("retry_at"), 30, "the retry's wait")
    proc = herd.popen("log", "-f", str(job))
    assert proc.stdout is not None and proc.stderr is not None
    try:
        note = read_line(proc.stderr.fileno(), bytearray()).decode()
        printed = read_line(proc.stdout.fileno(), bytearray()).decode()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=15)
    said = f"gpuherd: job {job} has not run again yet: retrying at "
    assert note.startswith(said), note
    tail = "(--retry-delay 10m); its next attempt's log follows once it starts"
    assert note.endswith(tail), note
    assert printed == "epoch 1"  # its last attempt's, then the next one's


def test_a_job_held_by_retry_hold_says_how_to_release_it(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--", "echo run $GPUHERD_ATTEMPT")
    herd.wait_state(job, "succeeded")
    herd.cli("retry", "--hold", str(job))
    herd.wait_state(job, "held")
    proc = herd.popen("log", "-f", str(job))
    assert proc.stderr is not None
    try:
        note = read_line(proc.stderr.fileno(), bytearray()).decode()
        assert note == (
            f"gpuherd: job {job} has not run again yet: held; its next attempt's log follows"
            f" once it starts (gpuherd release {job} lets it run)"
        )
        herd.cli("release", str(job))
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=15)
    assert out.decode() == "run 1\nrun 2\n"


def test_stderr_in_the_stdout_file_is_not_pointed_at(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    together = herd.submit("-o", f"{tmp_path}/m-%j.log", "--", "echo all fine; exit 2")
    herd.wait_state(together, "failed")
    followed = herd.cli("log", "-f", str(together))
    assert followed.stdout == "all fine\n"
    assert followed.stderr == f"job {together}: failed (exit 2)\n"  # no `log --stderr`
    same = f"{tmp_path}/same-%j.log"
    both = herd.cli(
        "submit", "--follow", "-o", same, "-e", same, "--", "echo out; exit 3", check=False
    )
    assert (both.returncode, both.stdout) == (3, "out\n")
    job = submitted(both.stderr)
    assert both.stderr == f"submitted job {job}\njob {job}: failed (exit 3)\n"
    # Apart (`-e F` alone), as before: its stderr is where the traceback is.
    alone = f"{tmp_path}/e-%j.log"
    apart = herd.cli("submit", "--follow", "-e", alone, "--", "echo oops >&2; exit 4", check=False)
    job = submitted(apart.stderr)
    assert apart.stderr.endswith(
        f"job {job}: failed (exit 4); its stderr: gpuherd log {job} --stderr\n"
    )


def submitted(stderr: str) -> int:
    """The id of `submitted job N`, the first line of `submit --follow`'s stderr."""
    return int(stderr.splitlines()[0].removeprefix("submitted job "))


def test_a_follow_of_a_job_failed_already_points_at_its_stderr_once(
    shared_daemon: Herd,
) -> None:
    """`log -f` of a job that had failed, stdout empty, said `wrote nothing to stdout, but to
    stderr: gpuherd log -f 5 --stderr` (a follow of an ended job), then its end's pointer:
    the end's alone now."""
    herd = shared_daemon
    job = herd.submit("--gpus", "0", "--", "echo oops >&2; exit 3")
    herd.wait_state(job, "failed")
    followed = herd.cli("log", "-f", str(job))
    assert (
        followed.stderr == f"job {job}: failed (exit 3); its stderr: gpuherd log {job} --stderr\n"
    )
