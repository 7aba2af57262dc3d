"""What a raw HTTP submission may name, refused at submit in one line where the job could
only do harm or never start (real daemon, 4 fake GPUs):

- a `folder` that is a file (`/etc/passwd` was renamed aside at the job's start, a folder
  made in its place), or a link of the user's own (moved aside alike);
- a `folder` in the daemon's home: another job's `jobs/<id>` (its log showed this job's
  output, and `rm` of one deleted the other's logs), or the home itself;
- an `env_overrides` name no shell passes on (`1A`, `a-b`: silently lost), also in an edit;
- a name or project whose GPUHERD_JOB_* variable is over Linux's 128 KiB (the job failed at
  its start, blaming the submitter's environment);
- a name or project with a C1 control character or a line separator (NEL, U+2028, CSI).

And the submitter's GPUHERD_TOKEN (the daemon's secret) is not stored in herd.db.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd


def post(herd: Herd, path: str, body: object) -> tuple[int, dict[str, Any]]:
    status, _, raw = herd.request("POST", f"/api/v1{path}", json.dumps(body))
    return status, json.loads(raw)


def submitted(herd: Herd, cwd: Path, **fields: Any) -> tuple[int, dict[str, Any]]:
    item = {"command": "true", "cwd": str(cwd), "gpus": 0, **fields}
    return post(herd, "/jobs", {"jobs": [item]})


def test_a_folder_that_is_a_file_is_refused_and_the_file_left_as_it_was(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    data = tmp_path / "important.txt"
    data.write_text("my data\n")
    before = shared_daemon.all_jobs()
    status, answer = submitted(shared_daemon, tmp_path, folder=str(data))
    assert (status, answer) == (
        422,
        {
            "error": f"folder {data} is a file: give the absolute path of a folder (one not "
            "there yet is made as the job starts)"
        },
    )
    # What no path can be is said as before (the checks of every field, after these).
    status, answer = submitted(shared_daemon, tmp_path, folder=f"{data}\0x")
    assert (status, answer) == (
        422,
        {"error": "a NUL byte in folder: remove it (no program can receive it)"},
    )
    assert shared_daemon.all_jobs() == before
    assert data.read_text() == "my data\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["important.txt"]


def test_a_folder_that_is_a_link_is_refused_naming_the_folder_it_leads_to(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    real, link = tmp_path / "realdir", tmp_path / "mylink"
    real.mkdir()
    link.symlink_to(real)
    for given in (str(link), f"{link}/"):
        status, answer = submitted(shared_daemon, tmp_path, folder=given)
        assert (status, answer) == (
            422,
            {
                "error": f"folder {given} is a symbolic link: give the folder itself, {real} "
                "(a job's folder is never a link)"
            },
        )
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [
        "mylink",
        "realdir",
    ]
    # The folder itself is taken, and the job runs in it.
    status, answer = submitted(shared_daemon, tmp_path, folder=str(real))
    assert status == 200, answer
    shared_daemon.wait_state(answer["ids"][0], "succeeded")
    assert (real / "SUCCESS").exists()


def test_a_folder_of_the_daemons_home_is_refused(shared_daemon: Herd, tmp_path: Path) -> None:
    other = shared_daemon.submit("--gpus", "0", "--", "echo", "AAA")
    shared_daemon.wait_state(other, "succeeded")
    home = shared_daemon.home.resolve()
    jobs = f"is in {home}/jobs, the folder of gpuherd's own jobs' folders"
    before = shared_daemon.all_jobs()
    for given, said in [
        (str(home / "jobs" / str(other)), jobs),
        (str(home), "is gpuherd's home"),
        (f"{home}/jobs/{other}/..", jobs),
        (f"{home}/jobs/", jobs),
    ]:
        status, answer = submitted(shared_daemon, tmp_path, folder=given)
        assert (status, answer) == (
            422,
            {
                "error": f"folder {given} {said}: the home is gpuherd's own (herd.db, every "
                "job's folder): give a folder outside it"
            },
        )
    # Reached through a link to the home, too (compared by real paths).
    (tmp_path / "to-home").symlink_to(home)
    status, answer = submitted(shared_daemon, tmp_path, folder=f"{tmp_path}/to-home/jobs/x")
    assert status == 422 and jobs in answer["error"], answer
    # In a batch, the job is named.
    items = [
        {"command": "true", "cwd": str(tmp_path), "hold": True},
        {"command": "true", "cwd": str(tmp_path), "folder": str(home / "jobs" / "x")},
    ]
    status, answer = post(shared_daemon, "/jobs", {"jobs": items})
    assert status == 422 and answer["error"].startswith("job 2 of the submission: folder "), answer
    assert shared_daemon.all_jobs() == before
    assert shared_daemon.cli("log", str(other)).stdout == "AAA\n"
    # A folder of the user's own under the home is theirs (tests keep results there).
    status, answer = submitted(shared_daemon, tmp_path, folder=str(home / "results" / "x=1"))
    assert status == 200, answer
    shared_daemon.wait_state(answer["ids"][0], "succeeded")


def test_env_override_names_no_shell_passes_on_are_refused_in_the_clis_words(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    words = "is not an environment variable name: use letters, digits and _, not starting with"
    for name in ("1A", "a-b", "a b"):
        status, answer = submitted(shared_daemon, tmp_path, env_overrides={name: "x"})
        assert (status, answer) == (
            422,
            {"error": f"env_overrides (--env): {name!r} {words} a digit (e.g. SEED)"},
        )
    job = shared_daemon.submit("--hold", "--env", "OK=z", "--", "true")
    status, answer = post(shared_daemon, "/jobs/edit", {"ids": [job], "env_overrides": {"1A": "x"}})
    said = f"job {job}: env_overrides (--env): '1A' {words} a digit (e.g. SEED)"
    refused = {"id": job, "ok": False, "message": said, "status": 422}
    assert (status, answer["results"]) == (200, [refused])
    assert shared_daemon.job(job)["env_overrides"] == {"OK": "z"}
    # The CLI says it as before (its own check).
    proc = shared_daemon.cli("submit", "--env", "1A=x", "--", "true", check=False)
    assert proc.returncode == 2 and f"'1A' {words}" in proc.stderr


LIMIT = 128 * 1024 - 1
"""The longest NAME=VALUE Linux takes as one variable (MAX_ARG_STRLEN, with its NUL)."""


@pytest.mark.parametrize(
    ("field", "variable"), [("name", "GPUHERD_JOB_NAME"), ("project", "GPUHERD_JOB_PROJECT")]
)
def test_a_name_too_long_for_its_variable_is_refused_and_the_longest_runs(
    shared_daemon: Herd, tmp_path: Path, field: str, variable: str
) -> None:
    most = LIMIT - len(variable) - 1
    status, answer = submitted(shared_daemon, tmp_path, **{field: "n" * (most + 1)})
    assert (status, answer) == (
        422,
        {
            "error": f"the {field} is {most + 1:,} bytes, over the {most:,} it may have: jobs "
            f"get it as {variable}, and Linux caps an environment variable at 128 KiB with "
            "its name: give a shorter one"
        },
    )
    command = f'test "${{#{variable}}}" -eq {most}' if field == "name" else "true"
    status, answer = submitted(shared_daemon, tmp_path, command=command, **{field: "n" * most})
    assert status == 200, answer
    shared_daemon.wait_state(answer["ids"][0], "succeeded")


@pytest.mark.parametrize(
    ("text", "char"),
    [
        ("\u0085x\u2028y", "\\x85"),
        ("x\u2028y", "\\u2028"),
        ("p\u2029", "\\u2029"),
        ("x\u009b31mred", "\\x9b"),
        ("a\u0080", "\\x80"),
    ],
    ids=["nel", "line-separator", "paragraph-separator", "csi", "c1"],
)
def test_a_name_or_project_with_a_c1_control_or_a_line_separator_is_refused(
    shared_daemon: Herd, tmp_path: Path, text: str, char: str
) -> None:
    before = shared_daemon.all_jobs()
    for field in ("name", "project"):
        status, answer = submitted(shared_daemon, tmp_path, **{field: text})
        assert status == 422, answer
        said = answer["error"]
        assert (
            said.startswith(f"{field} (--{field}) ")
            and f"holds a control character ('{char}')" in said
        )
        assert said.endswith(f": give a {field} of one line, without tabs"), said
    assert shared_daemon.all_jobs() == before
    # The CLI gets the daemon's line.
    proc = shared_daemon.cli("submit", "--hold", "--name", text, "--", "true", check=False)
    assert proc.returncode != 0 and f"('{char}')" in proc.stderr


def test_the_submitters_gpuherd_token_is_not_stored_in_herd_db(daemon: Herd) -> None:
    token = "T0kenOfTheDaemonKeptSecret_0123456789abcdef"
    env = {**daemon.env, "GPUHERD_TOKEN": token}
    job = int(daemon.cli("submit", "-q", "--gpus", "0", "--", "true", env=env).stdout)
    daemon.wait_state(job, "succeeded")
    with sqlite3.connect(f"file:{daemon.home / 'herd.db'}?mode=ro", uri=True) as db:
        stored = [row[0] for row in db.execute("SELECT json FROM envs")]
    assert stored and not any(token in text for text in stored)
    assert all("PATH" in json.loads(text) for text in stored)  # (the rest is kept)


def test_rm_of_a_task_that_never_ran_deletes_its_staged_file_alone(daemon: Herd) -> None:
    staged = daemon.home / "task-params"
    staged.mkdir(mode=0o700)
    params, folder = staged / "p.json", staged / "sub"
    params.write_text("{}")
    folder.mkdir()
    kept = daemon.submit("--hold", "--", "echo", "one")
    slips = [
        daemon.submit("--hold", "--", "true", "--params-file", f"{staged}/.."),
        daemon.submit("--hold", "--", "true", "--function-file", f"{staged}/sub"),
        daemon.submit("--hold", "--", "true", "--params-file", f"{staged}/sub/../../herd.db"),
    ]
    task = daemon.submit("--hold", "--", "true", "--params-file", str(params))
    proc = daemon.cli("rm", *map(str, [*slips, task]))
    assert proc.returncode == 0, proc.stderr
    assert (daemon.home / "herd.db").is_file() and folder.is_dir()
    assert not params.exists()  # (a staged file: the task's first run would have moved it)
    assert daemon.job(kept)["state"] == "held"
    assert [job["id"] for job in daemon.all_jobs()] == [kept]
