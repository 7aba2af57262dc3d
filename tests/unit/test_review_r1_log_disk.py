"""log_disk.full_disk_folder: a disk is "full" for a job's writes only when the job could not
write there, as the daemon's user (the job's) sees it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuherd import log_disk


def _statvfs(blocks: int, free: int, available: int, size: int = 4096) -> os.statvfs_result:
    # (f_bsize, f_frsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree, f_favail, f_flag,
    # f_namemax)
    return os.statvfs_result((size, size, blocks, free, available, 0, 0, 0, 0, 255))


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "stdout.log"
    path.write_text("epoch 1\n")
    return path


def test_roots_reserved_blocks_are_room_for_a_root_daemons_jobs(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ext4 keeps 5% for root: at 95% used, f_bavail is 0 while root's jobs write on (here
    # 160 GB); their failure was said to be the full disk's.
    monkeypatch.setattr(log_disk.os, "statvfs", lambda _: _statvfs(10**8, 4 * 10**7, 0))
    monkeypatch.setattr(log_disk.os, "geteuid", lambda: 0)
    assert log_disk.full_disk_folder([log]) is None
    monkeypatch.setattr(log_disk.os, "geteuid", lambda: 1000)
    assert log_disk.full_disk_folder([log]) == log.parent
    # Full for root too: said so.
    monkeypatch.setattr(log_disk.os, "statvfs", lambda _: _statvfs(10**8, 10, 0))
    monkeypatch.setattr(log_disk.os, "geteuid", lambda: 0)
    assert log_disk.full_disk_folder([log]) == log.parent


def test_a_disk_that_tells_no_size_is_not_full(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A FUSE mount without statfs (libfuse's default answers zeros) tells nothing: every failed
    # job there was said to have filled its disk.
    monkeypatch.setattr(log_disk.os, "statvfs", lambda _: _statvfs(0, 0, 0))
    assert log_disk.full_disk_folder([log]) is None
