"""A wait for jobs that will not end by themselves says why on stderr, as `ls` does: a job
waiting for a held one, a paused job, and a paused queue. `wait 8`, a bare `wait` and
`submit --wait --after 7` (7 held) waited in silence, as though hung (cli/stuck_notes.py)."""

from __future__ import annotations

from conftest import Herd, read_line
from integration.test_q4_submit_wait_held import waits


def test_a_wait_names_the_held_job_its_job_waits_for(shared_daemon: Herd) -> None:
    herd = shared_daemon
    held = herd.submit("--hold", "--gpus", "0", "--", "true")
    behind = herd.submit("--after", str(held), "--gpus", "0", "--", "true")
    waited = herd.cli("wait", str(behind), "--timeout", "1", check=False)
    assert waited.returncode == 2  # gave up: it cannot end by itself
    note = f"gpuherd: job {behind} is waiting for job {held} (held: gpuherd release {held})"
    assert note in waited.stderr.splitlines(), waited.stderr
    quiet = herd.cli("wait", str(behind), "--timeout", "1", "-q", check=False)
    assert (quiet.returncode, quiet.stderr) == (2, "")  # -q: no note

    submitted = herd.popen("submit", "--wait", "--after", str(held), "--gpus", "0", "--", "true")
    with waits(submitted):
        assert submitted.stdout is not None and submitted.stderr is not None
        job = int(read_line(submitted.stdout.fileno(), bytearray()).decode().split()[-1])
        said = read_line(submitted.stderr.fileno(), bytearray()).decode()
        waiting = f"waiting for job {held} (held: gpuherd release {held})"
        assert said == f"gpuherd: job {job} is {waiting}"
        herd.cli("release", str(held))
        assert submitted.wait(timeout=60) == 0  # it ran once released


def test_a_wait_names_a_paused_job_and_a_paused_queue(daemon: Herd) -> None:
    running = daemon.submit("--gpus", "0", "--", "sleep", "300")
    daemon.wait_state(running, "running")
    daemon.cli("pause", str(running))
    daemon.cli("pause")  # the queue
    queued = daemon.submit("--gpus", "0", "--", "true")
    waited = daemon.cli("wait", "--timeout", "1", check=False)
    assert waited.returncode == 2
    lines = waited.stderr.splitlines()
    assert "gpuherd: the queue is paused: no job starts until gpuherd resume" in lines
    assert (
        f"gpuherd: job {running} is paused: waiting until it is resumed (gpuherd resume {running})"
    ) in lines
    daemon.cli("resume")
    daemon.cli("kill", str(running))
    assert daemon.wait_state(queued, "succeeded")["state"] == "succeeded"


def test_nothing_to_wait_for_names_the_last_job_ended_badly(shared_daemon: Herd) -> None:
    """`submit -- false; wait` said only "nothing to wait for", exit 0, where a moment
    sooner it said `0 of 1 job succeeded`, exit 1: it names the job submitted last, ended."""
    herd = shared_daemon
    job = herd.submit("--gpus", "0", "--", "false")
    herd.wait_state(job, "failed")
    waited = herd.cli("wait", "--project", "none-such")  # (a filter: no such words)
    assert "submitted last" not in waited.stdout
    bare = herd.cli("wait")
    assert bare.stdout == (
        "nothing to wait for: no job is queued or running (job "
        f"{job}, submitted last, ended: failed; gpuherd wait {job} exits with its verdict)\n"
    )
    assert herd.cli("wait", str(job), check=False).returncode == 1


def test_nothing_to_wait_for_after_the_last_job_was_removed(daemon: Herd) -> None:
    """A bare `wait` once the job submitted last was removed (`rm`, `clean`) said `no job N`,
    exit 1, where `wait -q` exited 0: a script's `gpuherd clean; gpuherd wait` broke."""
    job = daemon.submit("--gpus", "0", "--", "true")
    daemon.wait_state(job, "succeeded")
    daemon.cli("rm", str(job))
    bare = daemon.cli("wait", check=False)
    assert (bare.returncode, bare.stdout, bare.stderr) == (
        0,
        "nothing to wait for: no job is queued or running\n",
        "",
    )
