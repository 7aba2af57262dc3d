"""`gpuherd kill` of a job that already ended is an answer, not a refusal: a script's
`gpuherd kill $(gpuherd ls -q)` exited 1 (and ended a `set -e` script) whenever a job it
listed ended before the kill reached it, though what it asked for, that job not running, held.
The CLI, the HTTP API, the dashboard and the Python API say it in the same words; an id that
names no job is still refused. Also `submit --file` of a file that is not there: exit 2, as
every other mistake of the command line (it was 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

from conftest import Herd, UnixConnection
from gpuherd.pyapi import connect

NO_SUCH_JOB = "no job 99999: `gpuherd ls --all` lists the jobs there are"


def ended_jobs(herd: Herd) -> tuple[list[int], int, int]:
    """Two jobs that succeeded (consecutive ids), one that failed, one cancelled, all ended."""
    succeeded = herd.submit_lines(["true", "true"], "--gpus", "0")
    failed = herd.submit("--gpus", "0", "--", "exit 3")
    cancelled = herd.submit("--hold", "--", "true")
    herd.cli("kill", str(cancelled))
    for job in succeeded:
        herd.wait_state(job, "succeeded")
    herd.wait_state(failed, "failed")
    herd.wait_state(cancelled, "cancelled")
    return succeeded, failed, cancelled


def test_a_kill_of_jobs_that_already_ended_says_so_on_stdout_and_exits_0(
    shared_daemon: Herd,
) -> None:
    (first, second), failed, cancelled = ended_jobs(shared_daemon)
    done = shared_daemon.cli("kill", f"{first}-{second}", str(failed), str(cancelled), check=False)
    # Grouped as every verb's answers are: the jobs with one answer share a line.
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout == (
        f"jobs {first}-{second}: already ended (succeeded)\n"
        f"job {failed}: already ended (failed)\n"
        f"job {cancelled}: already ended (cancelled)\n"
    )
    states = [shared_daemon.job(job)["state"] for job in (first, failed, cancelled)]
    assert states == ["succeeded", "failed", "cancelled"]  # as they were: nothing changed


def test_running_and_ended_jobs_together_the_running_one_is_killed_exit_0(
    shared_daemon: Herd,
) -> None:
    ended = shared_daemon.submit("--gpus", "0", "--", "true")
    shared_daemon.wait_state(ended, "succeeded")
    running = shared_daemon.submit("--", "sleep 60")
    shared_daemon.wait_state(running, "running")
    done = shared_daemon.cli("kill", str(ended), str(running), check=False)
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout.splitlines() == [
        f"job {ended}: already ended (succeeded)",
        f"job {running}: stopping (SIGTERM, then SIGKILL after 10s)",
    ]
    shared_daemon.wait_state(running, "killed")


def test_the_readme_script_survives_a_job_that_ends_between_ls_and_kill(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """The scripting trial's case, made certain: the job ends after `ls -q` listed it and
    before the kill (a project keeps the listing to this test's jobs on the shared daemon)."""
    go = tmp_path / "go"
    quick = shared_daemon.submit(
        "--project", "ke", "--", f"while [ ! -e {go} ]; do sleep 0.02; done"
    )
    slow = shared_daemon.submit("--project", "ke", "--", "sleep 60")
    shared_daemon.wait_state(quick, "running")
    shared_daemon.wait_state(slow, "running")
    script = (
        "set -e\n"
        "ids=$(gpuherd ls -q --project ke)\n"
        f"touch {go}\n"
        f"gpuherd wait -q {quick}\n"  # (a timeout-free wait: the job ends once `go` exists)
        "gpuherd kill $ids\n"
        "echo reached the end\n"
    )
    # The `gpuherd` of this Python first: the script types it as a user does.
    env = {**shared_daemon.env, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout == (
        f"job {quick}: already ended (succeeded)\n"
        f"job {slow}: stopping (SIGTERM, then SIGKILL after 10s)\n"
        "reached the end\n"
    )
    shared_daemon.wait_state(slow, "killed")


def test_an_id_that_names_no_job_is_still_refused_exit_1(shared_daemon: Herd) -> None:
    ended = shared_daemon.submit("--gpus", "0", "--", "true")
    shared_daemon.wait_state(ended, "succeeded")
    running = shared_daemon.submit("--", "sleep 60")
    shared_daemon.wait_state(running, "running")
    done = shared_daemon.cli("kill", str(ended), str(running), "99999", check=False)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"job {ended}: already ended (succeeded)",
        f"job {running}: stopping (SIGTERM, then SIGKILL after 10s)",
    ]
    assert done.stderr == f"gpuherd: error: {NO_SUCH_JOB}\n"
    shared_daemon.wait_state(running, "killed")


def test_the_http_api_the_dashboard_and_the_python_api_agree(shared_daemon: Herd) -> None:
    ended = shared_daemon.submit("--gpus", "0", "--", "true")
    shared_daemon.wait_state(ended, "succeeded")
    answer = shared_daemon.client.post("/jobs/kill", {"ids": [ended]})
    assert answer["results"] == [{"id": ended, "ok": True, "message": "already ended (succeeded)"}]

    # The dashboard's Kill button on a page drawn before the job ended: a message, not an
    # error, and the page's live parts are redrawn (the button goes).
    conn = UnixConnection(shared_daemon.client.socket_path, timeout=15)
    try:
        headers = {"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}
        body = urlencode({"action": "kill", "ids": str(ended)})
        conn.request("POST", "/ui/jobs/act", body=body, headers=headers)
        response = conn.getresponse()
        page = response.read().decode()
    finally:
        conn.close()
    assert response.status == 200, page
    assert f'<div class="flash ok">job {ended}: already ended (succeeded)</div>' in page, page
    assert response.headers["hx-trigger-after-swap"] == "refresh"

    herd = connect(shared_daemon.home, start=False)
    assert herd.job(ended).kill() == "already ended (succeeded)"  # returned, never raised
    assert shared_daemon.job(ended)["state"] == "succeeded"


def test_submit_file_that_cannot_be_opened_is_a_usage_error_exit_2(
    herd: Herd, tmp_path: Path
) -> None:
    # Refused before any daemon is asked (none runs here), so nothing can be queued.
    missing = tmp_path / "nosuch.txt"
    said = herd.usage_error("submit", "--file", str(missing))
    assert said == (
        f"gpuherd: error: cannot read {missing}: No such file or directory: check the path, "
        "or give - to read the jobs from standard input (see gpuherd submit --help)\n"
    )
    folder = herd.usage_error("submit", "--file", str(tmp_path))
    assert f"cannot read {tmp_path}: Is a directory" in folder
    # Empty standard input stays exit 1: the command line is right, the input holds no job.
    empty = herd.cli("submit", "--file", "-", input="", check=False)
    assert empty.returncode == 1
    assert empty.stderr == (
        "gpuherd: error: standard input holds no command (only comments or blank lines): pipe "
        "in one command a line, as python train.py --lr 0.1\n"
    )
