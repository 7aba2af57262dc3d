"""The sweep of a node's scratch folders (executors/ray_scratch.py): only a folder that no
process will ever remove goes, that of an actor killed before its supervisor took over.
The Ray test of that moment: tests/ray/test_ray_scratch_unowned.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from gpuherd.executors.ray_scratch import UNOWNED_AFTER, claim, sweep


def folder(root: Path, name: str, owner: str | None = None) -> Path:
    made = root / name
    made.mkdir()
    (made / "spec.json").write_text("{}")
    if owner is not None:
        (made / "owner").write_text(owner)
    return made


@pytest.fixture(name="gone")
def gone_fixture() -> str:
    """The `owner` text of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", ""])
    started = psutil.Process(proc.pid).create_time()
    proc.wait()
    return f"{proc.pid} {started!r}\n"


@pytest.fixture(name="supervisor")
def supervisor_fixture(tmp_path: Path) -> Iterator[Path]:
    """The folder of a running supervisor (a process naming it) whose actor has ended."""
    made = tmp_path / "gpuherd-abc-2-1"
    code = "import sys; sys.stdin.read()"
    with subprocess.Popen([sys.executable, "-c", code, str(made)], stdin=subprocess.PIPE) as proc:
        made.mkdir()
        (made / "supervisor.pid").write_text(f"{proc.pid}\n")
        yield made
        assert proc.stdin is not None
        proc.stdin.close()


def test_the_folder_of_an_ended_actor_whose_supervisor_never_started_goes(
    tmp_path: Path, gone: str
) -> None:
    abandoned = folder(tmp_path, "gpuherd-abc-1-1", owner=gone)
    mine = tmp_path / "gpuherd-abc-1-2"
    mine.mkdir()
    claim(mine)  # (this process: alive)
    assert sweep(tmp_path) == ["gpuherd-abc-1-1"]
    assert not abandoned.exists() and mine.exists()


def test_a_running_supervisors_folder_stays_its_actor_gone(supervisor: Path, gone: str) -> None:
    (supervisor / "owner").write_text(gone)  # (it removes the folder itself, as it ends)
    assert sweep(supervisor.parent) == []


def test_an_owner_whose_pid_another_process_took_is_gone(tmp_path: Path) -> None:
    me = psutil.Process()
    folder(tmp_path, "gpuherd-abc-1-1", owner=f"{me.pid} {me.create_time() - 100.0!r}")
    assert sweep(tmp_path) == ["gpuherd-abc-1-1"]


def test_an_older_gpuherds_folder_goes_only_long_after_its_supervisor_did_not_start(
    tmp_path: Path,
) -> None:
    unstarted = folder(tmp_path, "gpuherd-abc-1-1")
    started = folder(tmp_path, "gpuherd-abc-2-1")
    (started / "supervisor.pid").write_text("1\n")  # (its actor may hold a status still)
    now = unstarted.stat().st_mtime
    assert sweep(tmp_path, now + 60.0) == []  # (its actor may be starting it)
    os.utime(started, (now - 2 * UNOWNED_AFTER, now - 2 * UNOWNED_AFTER))
    assert sweep(tmp_path, now + UNOWNED_AFTER + 1.0) == ["gpuherd-abc-1-1"]
    assert started.exists()


def test_an_unreadable_owner_is_taken_to_run(tmp_path: Path) -> None:
    folder(tmp_path, "gpuherd-abc-1-1", owner="not a pid\n")
    assert sweep(tmp_path) == []
