"""A job reaches the daemon that runs it: `gpuherd` and `gpuherd.connect()` in a job use the
GPUHERD_HOME the submitter had, made absolute (a relative one named nothing from the job's
own folder)."""

from __future__ import annotations

from pathlib import Path

from conftest import GPUHERD_BIN, Herd


def test_a_relative_gpuherd_home_reaches_the_daemon_from_the_jobs_folder(
    daemon: Herd, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    relative = {**daemon.env, "GPUHERD_HOME": daemon.home.name}  # as `export GPUHERD_HOME=home`
    out = daemon.cli(
        "submit",
        "-q",
        "--cwd",
        str(elsewhere),
        "--",
        f"{GPUHERD_BIN} ls -q --all",
        env=relative,
        cwd=daemon.home.parent,
    )
    job_id = int(out.stdout)
    job = daemon.wait_state(job_id, "succeeded", "failed")
    assert job["state"] == "succeeded", daemon.cli("log", str(job_id), "--stderr").stdout
    assert daemon.cli("log", str(job_id)).stdout.split() == [str(job_id)]
