"""`gpuherd wait` of a job held for a run that a restored herd.db did not know (section 24 of
docs/reliability.md) says it waits for that run's end, which decides the job. It said the
job waited for a release (`gpuherd release N lets it run`): advice that runs the job a second
time beside its run."""

from __future__ import annotations

from pathlib import Path

from test_restored_database import held_for_its_run, job_command, started

from conftest import Herd, wait_for


def test_a_wait_for_a_job_held_for_its_run_waits_for_the_run_not_a_release(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    runs, go = tmp_path / "runs", tmp_path / "go"
    before = held_for_its_run(herd, tmp_path / "backup.db", "--", job_command(runs, go))
    job, pid = before["id"], before["pid"]
    reason = f"held: attempt 1 runs unwatched (pid {pid}), GPU 0 reserved for it"
    wait_for(lambda: herd.job(job)["reason"] == reason, what=f"job {job}: {reason!r}")

    waited = herd.cli("wait", str(job), "--timeout", "1s", check=False)
    assert waited.returncode == 2, waited  # --timeout: the run goes on
    assert waited.stderr.splitlines()[0] == (
        f"gpuherd: job {job} is {reason}: waiting for that run to end, which decides the job "
        f"(gpuherd release {job} would run it again beside it)"
    )

    go.touch()
    assert herd.cli("wait", str(job)).returncode == 0  # the run's end is the job's
    assert herd.job(job)["state"] == "succeeded"
    assert started(runs) == [f"1 {pid}"]  # run once
