"""Giving a file's disk space back while a process still writes to it: a hole punched in it
(fallocate's FALLOC_FL_PUNCH_HOLE) frees the blocks of a range and keeps the file's size, so
the writer's offset stays valid and its writes go on after it. Reads of the range return
zeros; the readers skip it (a Ray job's log already pulled; a hook output's middle, which
hooks.log leaves out)."""

from __future__ import annotations

import os
from pathlib import Path

_PUNCH_HOLE = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE (linux/falloc.h)


def free_range(path: Path | str, start: int, end: int) -> None:
    """Give the file system back bytes `start` to `end` of `path`, keeping its size. Where
    the file system cannot punch holes, or the file is gone, nothing is freed."""
    if end <= start:
        return
    import ctypes  # (deferred: ~2 ms of every daemon's and `gpuherd run`'s start otherwise)

    libc = ctypes.CDLL(None, use_errno=True)
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return
    try:
        libc.fallocate(fd, _PUNCH_HOLE, ctypes.c_int64(start), ctypes.c_int64(end - start))
    finally:
        os.close(fd)
