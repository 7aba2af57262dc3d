"""The Python API with a real daemon: an edit's warning gives its fix with the job's command
as written (its own `--name` was respelt `name=`); a job handle of a home removed and made
again refuses, where it went on with the new queue's job of its number (and `kill()` stopped
that one); a relative GPUHERD_HOME is one home for the whole process, after an os.chdir too
(each connect() after it started a second daemon in a second home)."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import NotFound
from gpuherd.pyapi import connect


def test_an_edits_fix_keeps_the_jobs_own_options(shared_daemon: Herd, tmp_path: Path) -> None:
    (tmp_path / "job.sh").write_text("#!/bin/sh\necho ran\n")
    (tmp_path / "job.sh").chmod(0o755)
    api = connect(shared_daemon.home, start=False)
    job = api.submit("true", gpus=0, hold=True, cwd=tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        job.edit(command="job.sh --name x --cwd y --force")
    fix = f"gpuherd edit {job.id} --command './job.sh --name x --cwd y --force' (or sh job.sh)"
    [said] = [str(w.message) for w in caught]
    assert said.endswith(f'will fail with "not found"; {fix}'), said


def test_a_handle_of_a_home_made_again_refuses(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    api = connect(herd.home, start=False)
    first, last = (api.submit("true", gpus=0, hold=True) for _ in range(2))
    herd.cli("daemon", "restart")  # the same queue: its handles go on
    assert last.state() == "held"
    herd.cli("daemon", "stop")
    shutil.rmtree(herd.home)  # (ext4 gives the new folder the same inode)
    herd.start("--fake-gpus", "1")
    new = herd.submit("--hold", "--", "echo", "new")
    assert new == first.id
    for use in (first.info, first.kill, api.jobs):
        with pytest.raises(NotFound, match=f"^the queue of {herd.home} is not the one"):
            use()
    assert connect(herd.home, start=False).job(new).state() == "held"  # (never killed)


def test_a_relative_home_is_one_home_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, other = tmp_path / "first", tmp_path / "other"
    first.mkdir()
    other.mkdir()
    monkeypatch.chdir(first)
    monkeypatch.setenv("GPUHERD_HOME", "home")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    herd = Herd(first / "home")
    try:
        api = connect(fake_gpus=1)
        monkeypatch.chdir(other)
        again = connect()  # (each task's submit connects so)
        assert again.client.home == api.client.home == first / "home"
        assert os.environ["GPUHERD_HOME"] == str(first / "home")  # (what jobs get, too)
        assert not (other / "home").exists()  # no second home, no second daemon
        assert again.submit("true", gpus=0).wait(30) == "succeeded"
    finally:
        herd.cleanup()
