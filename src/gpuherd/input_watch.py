"""Whether `gpuherd run`'s input thread holds lines it has read and not handed over yet.

A run stopped (Ctrl-C) counts every job of its input it read as `not run`. Lines the thread
had taken from a pipe but was still turning into jobs (waiting for git's answer, or in the
read buffer behind the line being handed over) were counted nowhere: `3 not run` went
missing from the summary. The thread is settled once it is blocked reading the stream (all
it read before is handed over) or has ended; the run waits for that before it counts.
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

SETTLE = 0.5
"""Seconds a stopped run waits at most for its input thread to settle: a stream that never
pauses (`yes | gpuherd run`) never blocks it."""


class InputWatch:
    """Where the input's thread is: blocked in a read, or at its input's end."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._reading = False
        self._ended = False

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Around a read of the stream that may block."""
        with self._changed:
            self._reading = True
            self._changed.notify_all()
        try:
            yield
        finally:
            with self._changed:
                self._reading = False

    def ended(self) -> None:
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def settled(self, timeout: float = SETTLE) -> bool:
        """Wait until the thread has handed over all it read (False: not within `timeout`)."""
        until = time.monotonic() + timeout
        with self._changed:
            while not (self._reading or self._ended):
                left = until - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True


class WatchedStream(io.RawIOBase):
    """A pipe, a terminal or a device read through `watch`: the buffered reader over it reads
    from it only when it holds no whole line (so while blocked here, every line read before
    is out of the buffer)."""

    def __init__(self, stream: BinaryIO, watch: InputWatch) -> None:
        super().__init__()
        self._stream = stream  # (kept open: it owns the file descriptor)
        self._watch = watch

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._stream.fileno()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        with self._watch.reading():
            return os.readv(self._stream.fileno(), [buffer])

    def close(self) -> None:
        self._stream.close()
        super().close()
