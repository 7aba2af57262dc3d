"""git_lookups.py: one git lookup in flight per place, its answer reused for a second, and
a stop that kills the gits running; git_commit.py's `+unknown` when `git status` cannot say."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import psutil

from conftest import load_stretch, wait_for
from gpuherd.git_commit import git_commit
from gpuherd.git_lookups import GitLookups


def fake_git(folder: Path, status: str = "exit 0") -> tuple[str, Path]:
    """A `git` first on the returned PATH, logging its calls (pid, arguments) to the returned
    file; its `status` does `status` (a shell command)."""
    calls, bin_dir = folder / "calls", folder / "bin"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$$ $*" >> {calls}\n'
        'for a in "$@"; do case "$a" in\n'
        "  rev-parse) echo feedbeef; exit 0;;\n"
        f"  status) {status};;\n"
        "esac; done\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}", calls


def runs(calls: Path) -> int:
    return sum("rev-parse" in line for line in calls.read_text().splitlines())


def test_an_answer_is_reused_for_a_second_then_looked_up_again(tmp_path: Path) -> None:
    path, calls = fake_git(tmp_path)
    now = [100.0]
    lookups = GitLookups(clock=lambda: now[0], reuse=1.0)
    place = (str(tmp_path), path)
    assert lookups.commit(place).result(timeout=10) == "feedbeef"
    now[0] += 0.9
    assert lookups.commit(place).result(timeout=10) == "feedbeef"
    assert runs(calls) == 1  # within the second: reused
    other = (str(tmp_path), path + os.pathsep)  # (another PATH: another place)
    assert lookups.commit(other).result(timeout=10) == "feedbeef"
    assert runs(calls) == 2
    now[0] += 0.2
    assert lookups.commit(place).result(timeout=10) == "feedbeef"
    assert runs(calls) == 3  # the second is over: git runs again


def test_a_failed_or_timed_out_status_is_unknown_not_clean(tmp_path: Path) -> None:
    path, _ = fake_git(tmp_path, status="exit 128")
    assert git_commit(str(tmp_path), path) == "feedbeef+unknown"
    slow = tmp_path / "slow"
    slow.mkdir()
    gate = tmp_path / "gate"  # (made once the test is done: a status never answers in time)
    wait = f"i=0; while [ ! -e {gate} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"
    path, calls = fake_git(slow, status=wait)  # (30 s at most: a test that hangs fails)
    # One timeout for both calls: long enough for the fake rev-parse to start and answer on
    # a loaded machine (else None, not a commit), while the status waits for ever.
    try:
        assert git_commit(str(slow), path, timeout=2 * load_stretch()) == "feedbeef+unknown"
        assert "status" in calls.read_text()  # (asked, and timed out)
    finally:
        gate.touch()


def test_places_asked_together_are_looked_up_on_one_thread_and_each_once(
    tmp_path: Path,
) -> None:
    path, calls = fake_git(tmp_path)
    lookups = GitLookups()
    places = [(str(tmp_path), path), (str(tmp_path), path + os.pathsep)]
    found = lookups.commits(iter(places * 2))  # (a generator, each place twice)
    assert sorted(found) == sorted(places)
    assert [f.result(timeout=10) for f in found.values()] == ["feedbeef"] * 2
    assert runs(calls) == 2


def test_stop_kills_the_gits_running_and_their_lookups_never_answer(tmp_path: Path) -> None:
    """A process that stops (the daemon, `gpuherd run`) leaves no git behind: left, it ran on
    past its timeout (its thread enforced it) for as long as git took. Cut short, its status
    is no answer (not `+unknown`); nothing is looked up after the stop."""
    gate = tmp_path / "gate"
    wait = f"i=0; while [ ! -e {gate} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"
    path, calls = fake_git(tmp_path, status=wait)
    lookups = GitLookups()
    try:
        answer = lookups.commit((str(tmp_path), path))
        wait_for(lambda: calls.exists() and "status" in calls.read_text(), what="git status")
        (pid,) = [
            int(line.split()[0]) for line in calls.read_text().splitlines() if "status" in line
        ]
        began = time.monotonic()
        lookups.stop()
        assert time.monotonic() - began < 1.0 * load_stretch()
        assert not psutil.pid_exists(pid)  # killed, and reaped
        assert not answer.done()
        later = lookups.commit((str(tmp_path), path + os.pathsep))
        assert not later.done()
        assert runs(calls) == 1
    finally:
        gate.touch()
