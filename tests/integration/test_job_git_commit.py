"""Every job records the git commit it is submitted from (not only a sweep's points): `submit`,
`submit --file`, the HTTP API, the dashboard's form, `gpuherd run`; a retry keeps it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from conftest import Herd, Runs, form_submitted, job_info, load_stretch, wait_for
from gpuherd.git_commit import dies_with_us

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
    job = int(herd.cli("submit", "-q", "--hold", "--", "true", cwd=repo).stdout)
    # (held till git answered: on a loaded machine it may answer after the 0.1 s a
    # submission waits, and after `true` ended; the test below has a job it misses)
    wait_for(lambda: herd.job(job)["git"] == sha, what="the commit")
    herd.cli("release", str(job))
    herd.wait_state(job, "succeeded")
    assert shown_git(herd, job) == sha
    assert json.loads((Path(herd.job(job)["job_dir"]) / "job.json").read_text())["git"] == sha

    (repo / "train.py").write_text("print('v2')\n")  # a tracked file changed: +dirty
    (repo / "notes.txt").write_text("untracked: not dirty\n")
    lines = "true\ntrue\n"
    # (from a sub-folder: the folder's lookup, clean, is reused for a second: git_lookups.py)
    (sub := repo / "sub").mkdir()
    out = herd.cli("submit", "-q", "--hold", "--file", "-", input=lines, cwd=sub).stdout
    batch = [int(word) for word in out.split()]
    # (each wait_for below: git may answer after the 0.1 s a submission waits for it)
    dirty = [f"{sha}+dirty"] * 2
    wait_for(lambda: [herd.job(i)["git"] for i in batch] == dirty, what="the commit")
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
    wait_for(lambda: herd.job(job)["git"] == sha, what="the commit")  # (before the change)
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
    wait_for(lambda: herd.job(job)["git"] == sha, what="the commit")
    given = herd.client.post("/jobs", {"jobs": [{**item, "git": "abc123"}]})["ids"][0]
    assert herd.job(given)["git"] == "abc123"  # (a client that says its own is taken at its word)
    from_form = form_submitted(herd, repo)
    wait_for(lambda: herd.job(from_form)["git"] == sha, what="the commit")
    assert f'<code id="job-git">{sha}</code>' in herd.page(f"/jobs/{from_form}")


@dataclass
class SlowGit:
    """A `git` first on `path` that answers only once `go` exists (a large repository's `git
    status`, a slow disk): `rev-parse` says feedbeef, `status` says clean (or fails, with
    `status_fails`). Each call appends its pid and arguments to `calls` as it starts."""

    path: str
    go: Path
    calls: Path

    def env(self, herd: Herd) -> dict[str, str]:
        return {**herd.env, "PATH": self.path}

    def item(self, cwd: Path) -> dict[str, object]:
        """A held job for POST /jobs, submitted with this git first on its PATH."""
        return {"command": "true", "cwd": str(cwd), "env": {"PATH": self.path}, "hold": True}

    def rev_parses(self) -> int:
        return sum("rev-parse" in line for line in self._lines())

    def left(self) -> list[int]:
        """The pids of the gits started that are still there (running, or not reaped)."""
        return [pid for line in self._lines() if psutil.pid_exists(pid := int(line.split()[0]))]

    def running(self) -> list[int]:
        """Those of `left` that still run: not zombies (a killed gpuherd's gits are reaped by
        whoever inherits them, if ever: a container's first process may not)."""
        return [pid for pid in self.left() if _runs(pid)]

    def _lines(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []


def _runs(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def slow_git_in(folder: Path, status_fails: bool = False) -> SlowGit:
    go, calls, bin_dir = folder / "go", folder / "git-calls", folder / "bin"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$$ $*" >> {calls}\n'
        # (20 s at most: a test that fails before it touches `go` leaves no git for long)
        f"i=0; while [ ! -e {go} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n"
        'for a in "$@"; do case "$a" in\n'
        "  rev-parse) echo feedbeef; exit 0;;\n"
        f"  status) exit {128 if status_fails else 0};;\n"
        "esac; done\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return SlowGit(f"{bin_dir}{os.pathsep}{os.environ['PATH']}", go, calls)


@pytest.fixture(name="slow_git")
def slow_git_fixture(shared_work: Path) -> Iterator[SlowGit]:
    """A slow `git` (SlowGit), told to answer at the end of the test whatever happened."""
    git = slow_git_in(shared_work)
    try:
        yield git
    finally:
        git.go.touch()


def test_a_slow_git_does_not_hold_the_answer_and_fills_in_later(
    shared_daemon: Herd, slow_git: SlowGit
) -> None:
    """A `git` that answers only once told to (a large repository's `git status`): the jobs
    are stored and the submission answered meanwhile; their commit comes once it answers."""
    herd = shared_daemon
    env = slow_git.env(herd)
    out = herd.cli("submit", "-q", "--hold", "--file", "-", input="true\ntrue\n", env=env)
    jobs = [int(word) for word in out.stdout.split()]
    assert [herd.job(i)["git"] for i in jobs] == [None, None]  # answered before git did
    slow_git.go.touch()
    wait_for(lambda: all(herd.job(i)["git"] == "feedbeef" for i in jobs), what="the commit")


def test_a_job_that_started_before_git_answered_has_the_commit_in_its_job_json(
    shared_daemon: Herd, slow_git: SlowGit, shared_work: Path
) -> None:
    """Its job.json, written as it ends, has the commit that came while it ran."""
    herd = shared_daemon
    ended = shared_work / "end"
    wait = f"while [ ! -e {ended} ]; do sleep 0.05; done"
    job = int(herd.cli("submit", "-q", "--", "sh", "-c", wait, env=slow_git.env(herd)).stdout)
    herd.wait_state(job, "running")
    assert herd.job(job)["git"] is None
    slow_git.go.touch()
    wait_for(lambda: herd.job(job)["git"] == "feedbeef", what="the commit")
    ended.touch()
    herd.wait_state(job, "succeeded")
    assert (
        json.loads((Path(herd.job(job)["job_dir"]) / "job.json").read_text())["git"] == "feedbeef"
    )


def test_ls_answers_while_git_is_slow_and_one_lookup_serves_all(
    shared_daemon: Herd, slow_git: SlowGit, shared_work: Path
) -> None:
    """Submissions from a slow repository take no thread another request needs (they took
    asyncio's shared pool, which `ls` reads the database on: `ls` waited for git); those
    from one folder while its git runs share that one lookup."""
    herd = shared_daemon
    count = min(32, (os.cpu_count() or 1) + 4) + 1  # (more than the shared pool's threads)
    jobs = [
        herd.client.post("/jobs", {"jobs": [slow_git.item(shared_work)]})["ids"][0]
        for _ in range(count)
    ]
    began = time.monotonic()
    herd.cli("ls", timeout=10)
    assert time.monotonic() - began < min(8.0, 3 * load_stretch())
    assert all(herd.job(i)["git"] is None for i in jobs)  # (git has not answered yet)
    slow_git.go.touch()
    wait_for(lambda: all(herd.job(i)["git"] == "feedbeef" for i in jobs), what="the commits")
    assert slow_git.rev_parses() == 1


def test_a_failed_git_status_records_the_commit_as_unknown(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """`git status` failed (or ran out of time): the sha, but not as if clean."""
    herd = shared_daemon
    git = slow_git_in(shared_work, status_fails=True)
    git.go.touch()
    (job,) = herd.client.post("/jobs", {"jobs": [git.item(shared_work)]})["ids"]
    wait_for(lambda: herd.job(job)["git"] == "feedbeef+unknown", what="the commit")


def test_the_daemon_stops_promptly_while_git_is_slow_and_the_next_looks_again(
    herd: Herd, tmp_path: Path
) -> None:
    """A daemon stopping waits for no git (asyncio.run waited for the shared pool's threads,
    git's 10 s and more), kills the git it was waiting for (left running, it ran on past its
    timeout for as long as git took), and a lookup cut short is no traceback in daemon.log.
    The job's commit is not lost: the next daemon looks it up again (it stayed unknown)."""
    herd.start("--fake-gpus", "1")
    git = slow_git_in(tmp_path)
    try:
        (job,) = herd.client.post("/jobs", {"jobs": [git.item(tmp_path)]})["ids"]
        assert herd.job(job)["git"] is None
        wait_for(git.left, what="git to start")
        began = time.monotonic()
        herd.cli("daemon", "stop", timeout=30)
        assert time.monotonic() - began < min(8.0, 3 * load_stretch())
        assert git.left() == []  # killed, and reaped
    finally:
        git.go.touch()
    assert "Traceback" not in (herd.home / "daemon.log").read_text()
    herd.start()
    wait_for(lambda: herd.job(job)["git"] == "feedbeef", what="the commit looked up again")
    said = f"job {job}: the last daemon stopped before git gave the commit; looking it up again"
    assert said in (herd.home / "daemon.log").read_text()


NO_PDEATHSIG = pytest.mark.skipif(
    not dies_with_us(), reason="no util-linux setpriv with --pdeathsig here"
)


@NO_PDEATHSIG
def test_a_daemon_killed_while_git_is_slow_leaves_the_commit_to_the_next(
    herd: Herd, tmp_path: Path
) -> None:
    """A daemon that crashed (SIGKILL) before git answered: its git dies with it (it ran on
    till it ended: a git hung on a network file system, for ever); the next daemon looks the
    commit up. (The slow git ends by itself after 20 s: the wait is shorter.)"""
    herd.start("--fake-gpus", "1")
    git = slow_git_in(tmp_path)
    try:
        (job,) = herd.client.post("/jobs", {"jobs": [git.item(tmp_path)]})["ids"]
        wait_for(git.left, what="git to start")
        herd.kill9()
        wait_for(lambda: not git.running(), timeout=5.0, what="its git to die with it")
    finally:
        git.go.touch()
    herd.start()
    wait_for(lambda: herd.job(job)["git"] == "feedbeef", what="the commit looked up again")


def test_gpuherd_run_starts_its_first_job_while_git_is_slow(herd: Herd, tmp_path: Path) -> None:
    """`gpuherd run` looks git up beside its jobs, not before them: a job read before git
    answers goes without its commit; the git still running as the run ends is killed."""
    git = slow_git_in(tmp_path)
    out = tmp_path / "out"
    try:
        began = time.monotonic()
        env = {**herd.env, "PATH": git.path}
        herd.cli("run", "--fake-gpus", "1", "--output-dir", str(out), "-", input="true\n", env=env)
        assert time.monotonic() - began < min(8.0, 4 * load_stretch())
        assert git.left() == []  # its end killed it (it ran on, past its timeout)
    finally:
        git.go.touch()
    (job_json,) = out.rglob("job.json")
    assert job_info(job_json.parent)["git"] is None


@NO_PDEATHSIG
def test_a_killed_gpuherd_run_leaves_no_git_running(runs: Runs, tmp_path: Path) -> None:
    """`gpuherd run` killed (SIGKILL) while git is slow: its git dies with it."""
    git = slow_git_in(tmp_path)
    runs.env["PATH"] = git.path
    try:
        run = runs.start("--fake-gpus", "1", "--output-dir", str(tmp_path / "out"), "-")
        wait_for(git.left, what="git to start")
        run.stop()  # (SIGKILL)
        wait_for(lambda: not git.running(), timeout=5.0, what="its git to die with it")
    finally:
        git.go.touch()


def test_gpuherd_run_records_it_in_job_json(runs: Runs, repo: Path, tmp_path: Path) -> None:
    """A job read once git answered has the commit. (Its line comes after git's two calls
    and a first job: a loaded machine's git may answer after the 0.1 s a first job waits.)"""
    sha = git(repo, "rev-parse", "HEAD")
    calls, bin_dir, out = tmp_path / "git-calls", tmp_path / "bin", tmp_path / "out"
    bin_dir.mkdir()
    counted = bin_dir / "git"  # (the real git, each call written down as it ends)
    counted.write_text(
        f'#!/bin/sh\n{shutil.which("git")} "$@"; rc=$?\necho "$*" >> {calls}\nexit $rc\n'
    )
    counted.chmod(0o755)
    runs.cwd, runs.env["PATH"] = repo, f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    run = runs.start("--fake-gpus", "1", "--output-dir", str(out), "-")
    wait_for(lambda: calls.exists() and len(calls.read_text().splitlines()) == 2, what="git")
    run.write("true\n")
    run.expect_line("[0] succeeded")
    run.write("true\n")
    assert run.finish()[0] == 0
    assert job_info(out / "job_1")["git"] == sha  # (job_0's may have none)
