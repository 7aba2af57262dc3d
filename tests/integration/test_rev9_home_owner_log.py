"""Another user's home is refused before daemon.log is opened in it: its owner may have put
there a daemon.log that links to a file of yours, which the refusal was appended to (the
daemon refused the home, but `daemon start` and gpuherd.connect() had opened its log)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import HerdError

NOBODY = 65534


def _planted(herd: Herd, tmp_path: Path) -> Path:
    """Another user's home whose daemon.log links to a file of this user's."""
    mine = tmp_path / "mine.txt"
    mine.write_text("mine\n")
    herd.home.mkdir()
    (herd.home / "daemon.log").symlink_to(mine)
    os.chown(herd.home / "daemon.log", NOBODY, NOBODY, follow_symlinks=False)
    os.chown(herd.home, NOBODY, NOBODY)
    return mine


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another user")
def test_daemon_start_writes_nothing_through_a_planted_log(herd: Herd, tmp_path: Path) -> None:
    mine = _planted(herd, tmp_path)
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", check=False)
    assert refused.returncode == 1, refused
    assert "belongs to another user" in refused.stderr
    assert mine.read_text() == "mine\n"
    for_foreground = herd.cli("daemon", "start", "--foreground", "--fake-gpus", "1", check=False)
    assert for_foreground.returncode == 1, for_foreground
    assert mine.read_text() == "mine\n"


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another user")
def test_connect_writes_nothing_through_a_planted_log(herd: Herd, tmp_path: Path) -> None:
    mine = _planted(herd, tmp_path)
    with pytest.raises(HerdError, match="belongs to another user"):
        gpuherd.connect(herd.home, fake_gpus=1)
    assert mine.read_text() == "mine\n"
