"""A commit git gives late (test_job_git_commit.py's slow git): the jobs waiting for it are
noted in the transaction that stores them, never after it; a job that ended before it came
gets it in its job.json then."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
from test_job_git_commit import SlowGit, slow_git_fixture, slow_git_in  # noqa: F401

from conftest import Herd, Runs, job_info, one_gpu_engine, serving, wait_for
from gpuherd import job_commits, pending_commits
from gpuherd.executors.local import LocalExecutor
from gpuherd.git_lookups import GitLookups
from gpuherd.store import Store
from gpuherd.wire import SubmitItem


class Killed(BaseException):
    """The daemon killed (SIGKILL) here: nothing after this point runs, and herd.db keeps
    nothing its transaction had not committed."""


def test_jobs_are_never_stored_without_their_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed as it notes the jobs git has yet to answer for: they were stored, in a
    transaction of their own, and the next daemon never looked their commit up again."""
    git = slow_git_in(tmp_path)
    store = Store(tmp_path / "herd.db")
    lookups = GitLookups()  # (its own: killed at the end, the process's left alone)
    env = {**os.environ, "PATH": git.path}
    items = [SubmitItem(command="true", cwd=str(tmp_path), env=env, hold=True) for _ in "ab"]

    def killed(*_: object) -> None:
        raise Killed

    async def main() -> None:
        async with serving(one_gpu_engine(tmp_path, store, LocalExecutor()), tmp_path) as service:
            fill = await job_commits.note_commits(items, 0.0, lookups)
            assert fill is not None  # (git has not answered)
            with monkeypatch.context() as patched, pytest.raises(Killed):
                patched.setattr(pending_commits, "note", killed)
                job_commits.submit(service, items, fill)
            after = job_commits.submit(service, items, fill)  # (not killed: noted)
            assert pending_commits.pending(store) == {(str(tmp_path), git.path): set(after.ids)}

    try:
        asyncio.run(main())
    finally:
        lookups.stop()
        git.go.touch()
        store.close()
    store = Store(tmp_path / "herd.db")  # (as the next daemon finds it)
    try:
        noted = set().union(*pending_commits.pending(store).values())
        stored = store.get_jobs(list(range(1, 5)))
        assert {i for i, job in stored.items() if job.spec.git is None} == noted
    finally:
        store.close()


def files_of(herd: Herd, job: int) -> tuple[Path, Path]:
    """The job's job.json and its (only) attempt's attempt.json."""
    folder = Path(herd.job(job)["job_dir"])
    (attempt,) = folder.glob("*/attempt.json")
    return folder / "job.json", attempt


def commit_in(path: Path) -> str | None:
    git: str | None = json.loads(path.read_text())["git"]
    return git


def test_a_job_that_ended_before_git_answered_gets_the_commit_in_its_job_json(
    shared_daemon: Herd, slow_git: SlowGit
) -> None:
    """Its job.json, written as it ended, had none (`show` had it). One whose folder went
    meanwhile, and one whose file cannot be written (a full disk), are said, no more."""
    herd = shared_daemon
    lines = "true\ntrue\ntrue\n"
    out = herd.cli("submit", "-q", "--file", "-", input=lines, env=slow_git.env(herd))
    ended, gone, unwritable = (int(word) for word in out.stdout.split())
    for job in (ended, gone, unwritable):
        herd.wait_state(job, "succeeded")
    job_json, attempt_json = files_of(herd, ended)
    assert commit_in(job_json) is None  # (ended before git answered)
    gone_folder = files_of(herd, gone)[0].parent
    shutil.rmtree(gone_folder)  # (`gpuherd clean`)
    (files_of(herd, unwritable)[1].parent / "attempt.json.tmp").mkdir()  # (no file made there)
    slow_git.go.touch()
    wait_for(lambda: herd.job(ended)["git"] == "feedbeef", what="the commit")
    wait_for(lambda: commit_in(job_json) == "feedbeef", what="the commit in job.json")
    assert commit_in(attempt_json) == "feedbeef"
    assert not gone_folder.exists()  # (not made again)
    said = f"job {unwritable}: its commit (git answered after it ended) could not be written"
    wait_for(lambda: said in (herd.home / "daemon.log").read_text(), what="the warning")
    assert commit_in(files_of(herd, unwritable)[0]) is None
    assert "Traceback" not in (herd.home / "daemon.log").read_text()


def test_gpuherd_runs_jobs_read_before_git_answered_get_the_commit_when_it_comes(
    runs: Runs, tmp_path: Path
) -> None:
    # Before: every job read before git answered (a whole input file, in a repository whose
    # `git status` takes over 0.1 s) kept `git: null` in its job.json.
    git, gate, out = slow_git_in(tmp_path), tmp_path / "gate", tmp_path / "out"
    runs.env["PATH"] = git.path
    try:
        run = runs.start("--fake-gpus", "1", "--output-dir", str(out), "-")
        run.write(f"true\ntrue\nwhile [ ! -e {gate} ]; do sleep 0.05; done\n")
        run.close_stdin()
        ended = [out / f"job_{n}" for n in (0, 1)]
        wait_for(lambda: all((folder / "job.json").exists() for folder in ended), what="2 ends")
        assert [job_info(folder)["git"] for folder in ended] == [None, None]
        git.go.touch()  # git answers while the third job runs
        wait_for(
            lambda: [job_info(folder)["git"] for folder in ended] == ["feedbeef"] * 2,
            what="the commit in the ended jobs' job.json",
        )
    finally:
        git.go.touch()
        gate.touch()
    status, _, _ = run.finish()
    assert status == 0
    assert job_info(out / "job_2")["git"] == "feedbeef"  # (stored: its end wrote it)


def test_gpuherd_run_waits_at_its_end_for_a_git_that_has_yet_to_answer(
    runs: Runs, tmp_path: Path
) -> None:
    """Every job ended before git answered: the run ended then, killing git, and every job
    kept `git: null` (a run of quick jobs in a large repository). It now waits for git's
    answer (its own timeouts bound the wait) and writes it into their job.json."""
    git, out = slow_git_in(tmp_path), tmp_path / "out"
    runs.env["PATH"] = git.path
    try:
        run = runs.start("--fake-gpus", "1", "--output-dir", str(out), "-")
        run.write("true\ntrue\n")
        run.close_stdin()
        ended = [out / f"job_{n}" / "job.json" for n in (0, 1)]
        wait_for(lambda: all(path.exists() for path in ended), what="the 2 jobs' ends")
        wait_for(lambda: bool(git.running()), what="git still asked")
    finally:
        git.go.touch()  # it answers once both jobs have ended
    status, _, _ = run.finish()
    assert status == 0
    assert [job_info(path.parent)["git"] for path in ended] == ["feedbeef"] * 2


def test_a_run_job_whose_end_could_not_be_recorded_stays_so_when_git_answers_late(
    runs: Runs, tmp_path: Path
) -> None:
    """Its commit, come later, is not written into a job.json that is not its end's, and the
    run still says at its end that the job's end could not be recorded (it said nothing: the
    commit's write, finding no job.json, counted as its end written)."""
    git, out = slow_git_in(tmp_path), tmp_path / "out"
    runs.env["PATH"] = git.path
    try:
        run = runs.start("--fake-gpus", "1", "--output-dir", str(out), "-")
        run.write(f"mkdir {out}/job_0/job.json.tmp\n")  # (where its job.json is written first)
        run.close_stdin()
        run.expect_line("[0] ")  # its start
        run.expect_line("[0] ")  # and its end, recorded in the run's database, not its folder
    finally:
        git.go.touch()
    status, _, err = run.finish()
    assert (status, err.count("gpuherd: error: the end of job_0 could not be recorded")) == (1, 1)
    assert not (out / "job_0" / "job.json").exists()
