"""Whether the disk a failed attempt's logs are on was full as it ended. A job whose writes
fail for want of space (a print raising ENOSPC) dies of it, and the traceback that would say
so cannot be written either: its log just stops, and `show` said only `exit 1`."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

FULL_BELOW = 1024 * 1024
"""Fewer bytes than this left to the job's user: full for a job's writes (a disk that
refused one may still have a partly used block or a few freed since)."""


def full_disk_folder(logs: Iterable[Path]) -> Path | None:
    """The folder of the first of `logs` whose disk has less than FULL_BELOW bytes left to
    this user (the daemon's, which is the job's), or None. A log that is not a file (its
    output sent to /dev/null, a pipe) or cannot be looked at (gone, on a disk unmounted
    since, on another node) is passed over: this only adds a reason. So is a disk that tells
    no size (a FUSE mount without statfs answers zeros). Root writes into the blocks kept for
    it (ext4's 5%): what is left to it is f_bfree, not f_bavail."""
    for log in logs:
        try:
            if not stat.S_ISREG(os.stat(log).st_mode):
                continue
            disk = os.statvfs(log.parent)
        except OSError:
            continue
        left = disk.f_bfree if os.geteuid() == 0 else disk.f_bavail
        if disk.f_blocks and left * disk.f_frsize < FULL_BELOW:
            return log.parent
    return None


def full_disk_message(folder: Path, job_id: int, retried: bool, one_shot: bool = False) -> str:
    """What a failed attempt says of its full disk; the way out, unless it is retried anyway
    (--retries: `gpuherd retry` of a queued job is refused). `one_shot`: a `gpuherd run`'s
    job, which no `gpuherd retry` reaches (nor the id, which its lines do not show)."""
    then = "before its next attempt starts" if retried else f"then gpuherd retry {job_id}"
    if one_shot and not retried:
        then = (
            "then run again into the same --output-dir with --skip-succeeded (only the jobs "
            "that did not succeed run)"
        )
    return (
        f"the disk of its log folder {folder} was full as it ended, so its last output may be"
        f" missing: free some space, {then}"
    )
