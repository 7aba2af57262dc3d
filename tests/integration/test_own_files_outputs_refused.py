"""A job's `output`/`error` file naming one of gpuherd's own in its home, refused at
submission and at edit by every client. It was taken: a job whose output was herd.db emptied
it as it started (the whole queue lost, the next `daemon start` refused the damaged
database), and one could write daemon.log, ui_token or another job's logs in `jobs/`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect


def refusal(herd: Herd, path: str) -> str:
    """The words of a refused file `path` in `herd`'s home (both as the daemon resolves them)."""
    return (
        f"{os.path.realpath(path)} is in gpuherd's home {os.path.realpath(herd.home)}: the home "
        "is gpuherd's own (herd.db, daemon.log, every job's folder and logs): name a file "
        "outside it"
    )


def posted(herd: Herd, cwd: Path, **fields: str) -> tuple[int, dict[str, object]]:
    """POST /jobs of one held job run in `cwd` with `fields`: the status and the answer."""
    job = {"command": "echo x", "cwd": str(cwd), "hold": True, **fields}
    status, _, body = herd.request("POST", "/api/v1/jobs", json.dumps({"jobs": [job]}))
    return status, json.loads(body)


def test_a_job_may_not_write_the_homes_own_files_over_http(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    database = herd.home / "herd.db"
    before = database.stat().st_size
    known = [job["id"] for job in herd.all_jobs()]
    for name in ("herd.db", "herd.db-wal", "herd.db-shm", "daemon.log", "ui_token"):
        for field in ("output", "error"):
            status, answer = posted(herd, shared_work, **{field: str(herd.home / name)})
            assert status == 422, answer
            given = str(herd.home / name)
            assert answer == {"error": f"{field} (--{field}) {given}: {refusal(herd, given)}"}
    # A relative file taken from a job's folder in the home, and a placeholder's: its folder.
    status, answer = posted(herd, herd.home, output="x-%j.log")
    assert status == 422 and refusal(herd, f"{herd.home}/x-%j.log") in str(answer["error"])
    status, answer = posted(herd, shared_work, error=f"{herd.home}/jobs/%j/%x.log")
    assert status == 422 and refusal(herd, f"{herd.home}/jobs/%j/%x.log") in str(answer["error"])
    assert [job["id"] for job in herd.all_jobs()] == known  # nothing submitted
    assert database.stat().st_size >= before  # (never emptied)


def test_another_jobs_log_and_a_link_into_the_home_are_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    # A file beside the home is still taken (tmp_path/work: the home is tmp_path/home).
    command = "echo mine; echo oops >&2"
    done = herd.submit("--cwd", str(shared_work), "-e", "err-%j.log", "--", command)
    herd.wait_state(done, "succeeded")
    assert (shared_work / f"err-{done}.log").read_text() == "oops\n"
    log = herd.home / "jobs" / str(done) / "attempt-1" / "stdout.log"  # (its own, there)
    status, answer = posted(herd, shared_work, error=str(log))
    assert status == 422 and refusal(herd, str(log)) in str(answer["error"])
    # Links are followed, as the job's start follows them: a link to the home is the home.
    os.symlink(herd.home, shared_work / "to-home")
    status, answer = posted(herd, shared_work, output="to-home/herd.db")
    assert status == 422 and refusal(herd, str(herd.home / "herd.db")) in str(answer["error"])
    assert herd.cli("log", str(done)).stdout == "mine\n"


def test_the_cli_and_the_python_api_are_refused_and_an_edit_too(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    database = str(herd.home / "herd.db")
    said = herd.usage_error("submit", "--hold", "-o", database, "--", "echo x")  # exit 2
    assert f"--output {database}: {refusal(herd, database)}" in said
    job = int(herd.cli("submit", "-q", "--hold", "--", "echo x", cwd=shared_work).stdout)
    said = herd.usage_error("edit", str(job), "-e", database)
    assert f"--error {database}: {refusal(herd, database)}" in said
    # A relative file of an edit is the job's folder's, which only the daemon knows.
    relative = os.path.relpath(herd.home / "daemon.log", shared_work)
    refused = herd.cli("edit", str(job), "-o", relative, check=False)
    assert refused.returncode == 1
    log = str(herd.home / "daemon.log")
    assert refused.stderr == (
        f"gpuherd: error: job {job}: output (--output) {relative}: {refusal(herd, log)}\n"
    )
    status, _, body = herd.request(
        "POST", "/api/v1/jobs/edit", json.dumps({"ids": [job], "error": database})
    )
    assert status == 200
    assert json.loads(body)["results"][0]["status"] == 422
    api = connect(herd.home, start=False)
    with pytest.raises(InvalidValue, match="is in gpuherd's home"):
        api.submit("echo x", cwd=shared_work, output=database, hold=True)
    with pytest.raises(InvalidValue, match="is in gpuherd's home"):
        api.job(job).edit(output=herd.home / "ui_token")
    assert (herd.job(job)["output"], herd.job(job)["error"]) == (None, None)
