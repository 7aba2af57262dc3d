"""A full disk under the home, met by `gpuherd ui`, `rm` and `sweep`: each says so in one line
and leaves nothing behind. `ui` said "internal error (OSError: [Errno 28] ...)" and left an
empty ui_token; `rm` left an empty removing/*.json; a sweep said to choose a results folder
"you can write", which it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from faults import fill, free_port, tmpfs

from conftest import Herd


@pytest.fixture
def full_home(tmp_path: Path) -> Iterator[Herd]:
    """A home on a 4 MiB tmpfs, its daemon running (2 fake GPUs), the disk then filled."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        herd = Herd(disk / "home")
        try:
            herd.start("--fake-gpus", "2")
            yield herd
        finally:
            herd.cleanup()  # before the unmount: no process may keep a file open in it


def test_ui_on_a_full_disk_says_so_and_leaves_no_empty_token(full_home: Herd) -> None:
    filler = fill(full_home.home.parent)
    address = f"127.0.0.1:{free_port()}"
    done = full_home.cli("ui", "--listen", address, check=False)
    token = full_home.home / "ui_token"
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"gpuherd: error: the disk holding {full_home.home} is full: the dashboard's token "
        f"cannot be written to {token}: free some space on it, then try again\n"
    )
    assert not token.exists()
    filler.unlink()  # room again: the same address is free, and taken
    shown = full_home.cli("ui", "--listen", address).stdout
    assert shown.startswith(f"dashboard: http://{address}/?token=")
    assert shown.split("token=")[1].strip() == token.read_text().strip()


def test_rm_on_a_full_disk_leaves_no_empty_removal_note(full_home: Herd) -> None:
    job = full_home.submit("--", "true")
    full_home.wait_state(job, "succeeded")
    fill(full_home.home.parent)
    full_home.cli("rm", str(job), check=False)  # (removed, or refused for want of room)
    notes = full_home.home / "removing"
    assert not notes.exists() or list(notes.iterdir()) == []


def test_a_sweep_on_a_full_disk_says_the_disk_is_full(full_home: Herd) -> None:
    results = full_home.home.parent / "sweep"
    fill(full_home.home.parent)
    done = full_home.cli(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--results-dir", str(results), check=False
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"gpuherd: error: cannot write {results}/x=1/params.json: its disk is full (No space "
        "left on device): free some space on it, or choose a results folder on another disk "
        "(--results-dir); nothing was submitted\n"
    )
    assert full_home.ls_all() == []
