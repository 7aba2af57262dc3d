"""--max-log-size holds for a log deleted or renamed away while its job runs: the job writes
on to that file, filling the disk all the same (log_cap_watch.LogCapWatch, through the job's
own descriptor, /proc/PID/fd). Real files, and a real process holding one as a job does."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, BinaryIO

import pytest

from gpuherd.log_cap_watch import LogCapWatch

MiB = 2**20


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "stdout.log"


@pytest.fixture
def writer(log: Path) -> Iterator[BinaryIO]:
    """The log, open for appending here; the test writes through it as the job would."""
    with log.open("ab") as f:
        yield f


@pytest.fixture
def job(writer: BinaryIO) -> Iterator[subprocess.Popen[bytes]]:
    """A job's process whose stdout is the log, as the job's shell has it."""
    process = subprocess.Popen(["sleep", "60"], stdout=writer)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def _live(log: Path, pid: int) -> Any:
    return SimpleNamespace(
        job_id=1, pid=pid, max_log_size=MiB, logs=(("stdout", log),),
        stop_reason=None, paused=False, log_bases={},
    )  # fmt: skip


def _deleted(log: Path) -> None:
    log.unlink()


def _renamed(log: Path) -> None:
    log.rename(log.with_suffix(".log.1"))


def _rotated(log: Path) -> None:
    """As logrotate's `create`: renamed, and a new empty file made in its place."""
    _renamed(log)
    log.touch()


@pytest.mark.parametrize("gone", [_deleted, _renamed, _rotated])
def test_a_log_gone_from_its_path_counts_what_its_job_writes_on(
    log: Path, writer: BinaryIO, job: subprocess.Popen[bytes], gone: Callable[[Path], None]
) -> None:
    stopped: list[int] = []
    watch = LogCapWatch({1: _live(log, job.pid)}, stopped.append)
    assert watch.check() == []  # (seen where it is)
    gone(log)
    writer.write(b"x" * (MiB + 1))
    writer.flush()
    assert watch.check() == [1]
    assert stopped == [1]


def test_a_log_deleted_before_any_look_is_found_by_its_name(
    log: Path, writer: BinaryIO, job: subprocess.Popen[bytes]
) -> None:
    """Deleted within the job's first seconds, or while no daemon ran (a re-attached job)."""
    log.unlink()
    writer.write(b"x" * (MiB + 1))
    writer.flush()
    assert LogCapWatch({1: _live(log, job.pid)}, lambda _: None).check() == [1]


def test_a_deleted_log_no_process_of_the_job_holds_counts_nothing(
    log: Path, writer: BinaryIO, job: subprocess.Popen[bytes]
) -> None:
    watch = LogCapWatch({1: _live(log, job.pid)}, lambda _: None)
    assert watch.check() == []
    log.unlink()
    writer.write(b"x" * (MiB + 1))  # (held here alone, once the job ended)
    writer.flush()
    job.kill()
    job.wait()
    assert watch.check() == []
