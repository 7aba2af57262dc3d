"""A job's own grace of 0 (SIGKILL at once on every stop) is refused by the daemon, for every
client, in the words the CLI refuses `--grace 0` in: the Python API and the JSON API stored it
before. A stop's own grace (`kill --grace 0`, `kill(grace=0)`) may still be 0."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import Herd, UnixConnection
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect

SAID = (
    "grace (--grace) must be greater than zero, at most 100 years; a kill may choose 0 "
    "(SIGKILL at once)"
)


def post_json(herd: Herd, path: str, body: object) -> tuple[int, str]:
    """A raw POST to the JSON API: its status and its body's text."""
    conn = UnixConnection(herd.client.socket_path, timeout=15)
    try:
        headers = {"Content-Type": "application/json"}
        conn.request("POST", "/api/v1" + path, json.dumps(body), headers)
        answer = conn.getresponse()
        return answer.status, answer.read().decode()
    finally:
        conn.close()


def test_a_zero_grace_is_refused_for_a_job_by_every_client(shared_daemon: Herd) -> None:
    herd = shared_daemon
    api = connect(herd.home, start=False)
    before = api.submit("true", gpus=0, hold=True)
    # The CLI's words, which the daemon's line repeats.
    assert "--grace: invalid duration '0': must be greater than zero" in herd.usage_error(
        "submit", "--grace", "0", "--", "true"
    )
    for grace in (0, 0.0, -1):
        with pytest.raises(InvalidValue) as from_python:
            api.submit("true", gpus=0, hold=True, grace=grace)
        assert str(from_python.value) == SAID
    item = {"command": "true", "cwd": str(herd.home), "gpus": 0, "hold": True, "grace": 0}
    status, body = post_json(herd, "/jobs", {"jobs": [item]})
    assert (status, json.loads(body)) == (422, {"error": SAID})
    spec = {"name": "graceless", "command": "echo {x}", "grids": [{"x": [1]}]}
    sweep = {"spec": spec, "cwd": str(herd.home), "options": {"gpus": 0, "grace": 0}}
    status, body = post_json(herd, "/sweeps", sweep)
    assert (status, json.loads(body)) == (422, {"error": SAID})
    with pytest.raises(InvalidValue, match="must be greater than zero"):
        api.sweep("echo {x}", {"x": [1]}, name="graceless", grace=0, gpus=0, cwd=herd.home)
    after = api.submit("true", gpus=0, hold=True)
    assert after.id == before.id + 1  # nothing was queued in between


def test_a_zero_grace_is_refused_to_an_edit_by_every_client(shared_daemon: Herd) -> None:
    herd = shared_daemon
    api = connect(herd.home, start=False)
    job = api.submit("true", gpus=0, hold=True, grace="30s")
    with pytest.raises(InvalidValue) as from_python:  # as submit(grace=0) raises
        job.edit(grace=0)
    assert str(from_python.value) == f"job {job.id}: {SAID}"
    status, body = post_json(herd, "/jobs/edit", {"ids": [job.id], "grace": 0})
    assert status == 200  # an edit answers job by job, each refusal in its result
    refused = {"id": job.id, "ok": False, "message": f"job {job.id}: {SAID}", "status": 422}
    assert json.loads(body)["results"] == [refused]
    assert herd.job(job.id)["grace"] == 30  # unchanged


def test_a_kill_may_still_choose_a_zero_grace(shared_daemon: Herd) -> None:
    herd = shared_daemon
    api = connect(herd.home, start=False)
    job = api.submit("sleep 60", gpus=0, grace="60s")
    herd.wait_state(job.id, "running")
    assert job.kill(grace=0) == "stopping (SIGTERM, then SIGKILL at once)"
    assert herd.wait_state(job.id, "killed", timeout=10)["outcome"] == "killed"


def test_an_edit_keeps_a_zero_grace_an_older_version_stored(shared_daemon: Herd) -> None:
    """An older daemon stored a grace of 0 from the Python and JSON APIs. An edit of another
    field of such a job is not refused for the grace it did not type (it was, in words that
    named --grace only); the grace stays as it was, as a retry keeps it, until edited."""
    herd = shared_daemon
    job = herd.submit("--gpus", "0", "--hold", "--", "true")
    db = sqlite3.connect(herd.home / "herd.db")
    try:
        with db:
            db.execute("UPDATE jobs SET grace = 0 WHERE id = ?", (job,))
    finally:
        db.close()
    edited = herd.cli("edit", str(job), "--name", "renamed", "--retries", "2", check=False)
    assert (edited.returncode, edited.stderr) == (0, "")
    assert edited.stdout == f"job {job}: edited (name none -> renamed, retries 0 -> 2)\n"
    assert (herd.job(job)["name"], herd.job(job)["grace"]) == ("renamed", 0)
    # Its grace itself: 0 is refused as ever, a grace of more than 0 taken.
    assert "must be greater than zero" in herd.usage_error("edit", str(job), "--grace", "0")
    assert herd.cli("edit", str(job), "--grace", "5s").stdout == (
        f"job {job}: edited (grace 0s -> 5s)\n"
    )
