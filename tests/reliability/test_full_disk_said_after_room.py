"""A job that filled the disk of its logs, where herd.db is too (the home's disk, the default
place of both): its end cannot be recorded until there is room again, and by then the disk
has room, so its end was recorded as a bare `exit 1`, the full disk unsaid (README: a failed
attempt whose log's disk was full says so). The folder is now noted full as the recording is
refused (real daemon; a small tmpfs holds the home: root can mount it, elsewhere it skips)."""

from __future__ import annotations

from pathlib import Path

from faults import grow, tmpfs

from conftest import Herd, wait_for

FILLS = "python3 -c \"[print('x' * 999, flush=True) for i in range(100000)]\""
REFUSED = "recording the queue's changes failed, retrying"


def test_a_full_disk_is_said_of_an_end_recorded_once_there_is_room(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "3m") as disk:
        herd = Herd(disk / "home")
        try:
            herd.start("--fake-gpus", "1")
            job = herd.submit("--", FILLS)
            log = herd.home / "daemon.log"
            process = herd.home / "jobs" / str(job) / "attempt-1" / "process"
            # (the file is not there until the job has started: under load, after a first look)
            wait_for(lambda: "exit" in _text(process), what="the job's end", timeout=30)
            wait_for(lambda: REFUSED in log.read_text(), what="its end refused", timeout=30)
            assert herd.job(job)["state"] == "running"  # (not recorded yet)
            grow(disk, "64m")  # room again: its end is recorded at the next try
            failed = herd.wait_state(job, "failed")
            folder = herd.home / "jobs" / str(job) / "attempt-1"
            assert failed["message"] == (
                f"the disk of its log folder {folder} was full as it ended, so its last output"
                f" may be missing: free some space, then gpuherd retry {job}"
            )
        finally:
            herd.cleanup()


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""
