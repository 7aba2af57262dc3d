"""A job name that names nothing, '' (`submit --name "$RUN"`, RUN unset) or only white space,
is refused in one line by the CLI (exit 2), the HTTP API and the Python API, as `edit --name
''` was: `submit` made such a job unnamed, or named `'  '`, shown as none, and no `ls --name`
found it. An empty name in an HTTP edit still clears it (as `--clear name`, on purpose); the
dashboard's blank box is no name (it sends none). Real daemon, 4 fake GPUs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, UnixConnection
from gpuherd.errors import InvalidValue


def post(herd: Herd, path: str, body: object) -> tuple[int, dict[str, object]]:
    conn = UnixConnection(herd.client.socket_path, timeout=15)
    try:
        headers = {"Content-Type": "application/json"}
        conn.request("POST", f"/api/v1{path}", json.dumps(body).encode(), headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--name", ""], "--name is empty"),
        (["-n", "  "], "--name '  ' is only white space"),
        (["--name="], "--name is empty"),
    ],
    ids=["empty", "spaces", "joined"],
)
def test_submit_refuses_a_blank_name(shared_daemon: Herd, args: list[str], said: str) -> None:
    before = shared_daemon.all_jobs()
    proc = shared_daemon.cli("submit", "--hold", *args, "--", "true", check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"gpuherd: error: {said}: give a name, or leave --name out (see gpuherd submit --help)\n"
    )
    assert shared_daemon.all_jobs() == before


def test_edit_refuses_a_name_of_white_space(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("--hold", "--name", "kept", "--", "true")
    proc = shared_daemon.cli("edit", str(job_id), "--name", " ", check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "gpuherd: error: --name ' ' is only white space: give a name, or --clear name to unset"
        " it (see gpuherd edit --help)\n"
    )
    assert shared_daemon.job(job_id)["name"] == "kept"


def test_http_api_refuses_a_blank_name_and_an_edit_clears_with_an_empty_one(
    shared_daemon: Herd, shared_work: Path
) -> None:
    for name, said in [("", "is empty"), (" ", "' ' is only white space")]:
        item = {"command": "true", "cwd": str(shared_work), "name": name, "hold": True}
        status, answer = post(shared_daemon, "/jobs", {"jobs": [item]})
        assert (status, answer) == (
            422,
            {"error": f"name (--name) {said}: give a name, or leave it out"},
        )
    job_id = shared_daemon.submit("--hold", "--name", "kept", "--", "true")
    status, answer = post(shared_daemon, "/jobs/edit", {"ids": [job_id], "name": "\t"})
    assert (status, answer) == (
        422,
        {"error": "name '\\t' is only white space: give a name, or clear it"},
    )
    assert shared_daemon.job(job_id)["name"] == "kept"
    status, _ = post(shared_daemon, "/jobs/edit", {"ids": [job_id], "name": ""})
    assert status == 200
    assert shared_daemon.job(job_id)["name"] is None


def test_python_api_refuses_a_blank_name(shared_daemon: Herd, shared_work: Path) -> None:
    api = gpuherd.connect(shared_daemon.home, start=False)
    with pytest.raises(InvalidValue, match=r"^name \(--name\) is empty: give a name, or leave"):
        api.submit("true", hold=True, cwd=shared_work, name="")
    job = api.submit("true", hold=True, cwd=shared_work, name="kept")
    with pytest.raises(InvalidValue, match=r"""^name '  ' is only white space: give a name, or"""):
        job.edit(name="  ")
    assert shared_daemon.job(job.id)["name"] == "kept"


@pytest.mark.parametrize("verb", ["submit", "sweep"])
@pytest.mark.parametrize(
    ("project", "said"), [("", "is empty"), (" ", "' ' is only white space")], ids=["empty", "sp"]
)
def test_a_blank_project_is_refused_as_a_blank_name_is(
    shared_daemon: Herd, shared_work: Path, verb: str, project: str, said: str
) -> None:
    # (`submit --project ''` was taken, and `' '` stored: a project no `ls --project` finds.)
    before = shared_daemon.all_jobs()
    job = ["--", "true"] if verb == "submit" else ["echo {x}", "-p", "x", "1"]
    proc = shared_daemon.cli(verb, "--hold", "--project", project, *job, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"gpuherd: error: --project {said}: give a project, or leave --project out (see gpuherd"
        f" {verb} --help)\n"
    )
    item = {"command": "true", "cwd": str(shared_work), "project": project, "hold": True}
    status, answer = post(shared_daemon, "/jobs", {"jobs": [item]})
    assert (status, answer) == (
        422,
        {"error": f"project (--project) {said}: give a project, or leave it out"},
    )
    assert shared_daemon.all_jobs() == before
