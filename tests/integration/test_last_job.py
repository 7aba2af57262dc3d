"""`last` where the verbs take job ids: the job submitted last (`gpuherd kill last`, as
task-spooler's `tsp -k` kills the last job), as `--after last`, `log` and `show` have it."""

from __future__ import annotations

from conftest import Herd


def test_the_verbs_take_last_for_the_job_submitted_last(daemon: Herd) -> None:
    nothing = daemon.cli("kill", "last", check=False)
    assert nothing.returncode == 1
    assert nothing.stderr == "gpuherd: error: last: there is no job yet\n"
    first = daemon.submit("--gpus", "0", "--", "sleep 60")
    newest = daemon.submit("--gpus", "0", "--", "sleep 60")
    daemon.wait_state(newest, "running")
    killed = daemon.cli("kill", "last")
    assert killed.stdout.startswith(f"job {newest}: stopping"), killed.stdout
    waited = daemon.cli("wait", "last", check=False)  # ends once the kill has
    assert waited.returncode == 1 and waited.stdout == "0 of 1 job succeeded\n", waited
    assert daemon.job(first)["state"] == "running"  # only the last one
    assert daemon.cli("hold", str(first), "last", check=False).stderr == (
        f"gpuherd: error: job {first}: cannot hold a job that is running (it can: kill, pause, "
        f"retry)\ngpuherd: error: job {newest}: cannot hold a job that has ended (killed) "
        "(it can: retry, rm)\n"
    )
    assert daemon.cli("retry", "last").stdout == f"job {newest}: queued again\n"
    assert daemon.wait_state(newest, "running")["attempt"] == 2
    daemon.cli("kill", str(first), "last")
