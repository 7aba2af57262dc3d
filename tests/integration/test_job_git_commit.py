"""Every job records the git commit it is submitted from (not only a sweep's points): `submit`,
`submit --file`, the HTTP API, the dashboard's form, `gpuherd run`; a retry keeps it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import Herd, form_submitted, job_info, wait_for

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(shared_work: Path) -> Path:
    """A git work tree with one commit of a tracked file, train.py (jobs run in it are
    killed at the end, as shared_work's)."""
    folder = shared_work / "repo"
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / "train.py").write_text("print('v1')\n")
    git(folder, "add", "train.py")
    git(folder, "commit", "-q", "-m", "v1")
    return folder


def shown_git(herd: Herd, job_id: int) -> str:
    """The `git` row of `gpuherd show`."""
    rows = herd.cli("show", str(job_id)).stdout.splitlines()
    return next(line.split(None, 1)[1] for line in rows if line.startswith("git "))


def test_submit_and_submit_file_record_the_commit_and_dirty(
    shared_daemon: Herd, repo: Path, shared_work: Path
) -> None:
    herd = shared_daemon
    sha = git(repo, "rev-parse", "HEAD")
    job = int(herd.cli("submit", "-q", "--", "true", cwd=repo).stdout)
    herd.wait_state(job, "succeeded")
    assert herd.job(job)["git"] == sha
    assert shown_git(herd, job) == sha
    assert json.loads((Path(herd.job(job)["job_dir"]) / "job.json").read_text())["git"] == sha

    (repo / "train.py").write_text("print('v2')\n")  # a tracked file changed: +dirty
    (repo / "notes.txt").write_text("untracked: not dirty\n")
    lines = "true\ntrue\n"
    out = herd.cli("submit", "-q", "--hold", "--file", "-", input=lines, cwd=repo).stdout
    batch = [int(word) for word in out.split()]
    assert [herd.job(i)["git"] for i in batch] == [f"{sha}+dirty"] * 2
    listed = herd.cli("ls", "--all", "--columns", "id,state,git").stdout
    rows = [line.split() for line in listed.splitlines()]
    assert [str(batch[0]), "held", f"{sha[:12]}+dirty"] in rows  # the table's: shortened
    csv = herd.cli("ls", "--all", "--csv", "--columns", "id,git").stdout.splitlines()
    assert f"{batch[0]},{sha}+dirty" in csv

    outside = herd.submit("--hold", "--", "true")  # (from the home's folder: no repository)
    assert herd.job(outside)["git"] is None
    assert shown_git(herd, outside) == "-"
    elsewhere = int(herd.cli("submit", "-q", "--hold", "--", "true", cwd=shared_work).stdout)
    assert herd.job(elsewhere)["git"] is None


def test_a_retry_keeps_the_commit_it_was_submitted_from(shared_daemon: Herd, repo: Path) -> None:
    herd = shared_daemon
    sha = git(repo, "rev-parse", "HEAD")
    job = int(herd.cli("submit", "-q", "--", "false", cwd=repo).stdout)
    herd.wait_state(job, "failed")
    (repo / "train.py").write_text("print('v2')\n")
    git(repo, "commit", "-q", "-am", "v2")  # a new commit before the retry
    herd.cli("retry", str(job), cwd=repo)
    herd.wait_state(job, "failed")
    assert herd.job(job)["git"] == sha  # the job reruns as submitted


def test_the_api_and_the_dashboard_form_record_it(shared_daemon: Herd, repo: Path) -> None:
    herd = shared_daemon
    sha = git(repo, "rev-parse", "HEAD")
    item = {"command": "true", "cwd": str(repo), "env": dict(os.environ), "hold": True}
    (job,) = herd.client.post("/jobs", {"jobs": [item]})["ids"]
    assert herd.job(job)["git"] == sha
    given = herd.client.post("/jobs", {"jobs": [{**item, "git": "abc123"}]})["ids"][0]
    assert herd.job(given)["git"] == "abc123"  # (a client that says its own is taken at its word)
    from_form = form_submitted(herd, repo)
    assert herd.job(from_form)["git"] == sha
    assert f'<code id="job-git">{sha}</code>' in herd.page(f"/jobs/{from_form}")


def test_a_slow_git_does_not_hold_the_answer_and_fills_in_later(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """A `git` that answers only once told to (a large repository's `git status`): the jobs
    are stored and the submission answered meanwhile; their commit comes once it answers."""
    herd = shared_daemon
    go = shared_work / "go"
    bin_dir = shared_work / "bin"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f"i=0; while [ ! -e {go} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
        'for a in "$@"; do case "$a" in\n'
        "  rev-parse) echo feedbeef; exit 0;;\n"
        "  status) exit 0;;\n"
        "esac; done\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = {**herd.env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    out = herd.cli("submit", "-q", "--hold", "--file", "-", input="true\ntrue\n", env=env)
    jobs = [int(word) for word in out.stdout.split()]
    assert [herd.job(i)["git"] for i in jobs] == [None, None]  # answered before git did
    go.touch()
    wait_for(lambda: all(herd.job(i)["git"] == "feedbeef" for i in jobs), what="the commit")


def test_gpuherd_run_records_it_in_job_json(herd: Herd, repo: Path, tmp_path: Path) -> None:
    sha = git(repo, "rev-parse", "HEAD")
    out = tmp_path / "out"
    herd.cli("run", "--fake-gpus", "1", "--output-dir", str(out), "-", input="true\n", cwd=repo)
    (job_json,) = out.rglob("job.json")
    assert job_info(job_json.parent)["git"] == sha
