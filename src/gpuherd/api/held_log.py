"""A followed log kept open between reads, as `tail -f` keeps it (`log -f`, log_follow.py, and
a job's page, dashboard_streams.py): a log deleted under a running job (an `rm` of it, a
clean-up) is still the file the job writes to, and is read on through this handle until the
job ends. Its name is not followed (`tail -F`): a file made anew under it is none of the job's
output. Only where the job writes its log itself (`keep_open`: the local executor's); the Ray
executor's daemon appends to it by name, making it anew: there it is opened for each read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from gpuherd.errors import Forbidden
from gpuherd.jobfiles import open_job_file


class HeldLog:
    """One log file at a time, held open until another is read or `close`: a reader that
    goes away closes it (its stream's `finally`), so nothing is held past its follow."""

    def __init__(self, keep_open: bool = True) -> None:
        self.keep_open = keep_open
        self.path: Path | None = None
        self.file: BinaryIO | None = None
        self.deleted_said = False

    @contextlib.contextmanager
    def opened(self, path: Path) -> Iterator[BinaryIO | None]:
        """The log at `path`, held (opened the first time); None while it is not there, or
        is a planted link (not served)."""
        if path != self.path:  # another attempt's log: another file
            self.close()
            self.path, self.deleted_said = path, False
        if self.file is None:
            with contextlib.suppress(FileNotFoundError, Forbidden):
                self.file = open_job_file(path)
        try:
            yield self.file
        finally:
            if not self.keep_open:
                self.close()

    def read(self, path: Path, offset: int, size: int) -> bytes:
        """Up to `size` bytes from `offset` (none while the log is not there, nor from past its
        end: an offset up to 2**63 - 1 is taken, and a seek past the file system's largest
        file failed, EINVAL, cutting the follow short after its 200)."""
        with self.opened(path) as f:
            if f is None or offset >= os.fstat(f.fileno()).st_size:
                return b""
            f.seek(offset)
            data: bytes = f.read(size)
            return data

    def shrunk_below(self, path: Path, offset: int) -> bool:
        """Whether the log now holds fewer than `offset` bytes: emptied or cut under the
        reader (`: > stdout.log`, logrotate's copytruncate), whose next text is written from
        its new end, below `offset`, where a reader that waited for `offset` never looked."""
        with self.opened(path) as f:
            return f is not None and os.fstat(f.fileno()).st_size < offset

    def position_in_next(self, followed: Path | None, path: Path, position: int) -> int:
        """Where the next attempt's log, at `path`, is read from: its start; on from
        `position` in the file followed (`--output` without %a: a retry adds to it), unless
        that was deleted, when the retry's is a new file of that name (read from its start,
        opened anew: the one held is the deleted one)."""
        if followed == path and self._named():
            return position
        self.close()
        self.path = None  # (a new file: its deletion is said again)
        return 0

    def newly_deleted(self) -> bool:
        """Whether the log read is no longer under its name (deleted, or replaced), said
        once a file."""
        if self.deleted_said or self.file is None:
            return False
        self.deleted_said = not self._named()
        return self.deleted_said

    def _named(self) -> bool:
        """Whether the log's name still leads to the file held (True with none held: the
        name is all there is to go by)."""
        if self.file is None or self.path is None:
            return True
        held = os.fstat(self.file.fileno())
        try:
            named = os.lstat(self.path)
        except FileNotFoundError:
            return False
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
