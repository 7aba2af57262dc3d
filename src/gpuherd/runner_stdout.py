"""`gpuherd run`'s standard output: written by a thread of its own, and never the run's end.

The run says each job's start and end there, from its event loop. A write blocks while a
pipe's reader does not read (`| less` not scrolled, a slow reader) or a terminal is stopped
(Ctrl-S): the loop stood still with it, no job started, no --timeout fired, a Ctrl-C waited.
So the lines go through a queue to a thread that writes them, and the loop never waits on
the reader; the run's end does (`drain`), once its jobs are over.

A reader that went away (a closed terminal: EIO; a pipe whose reader left: EPIPE) or a disk
that takes no more (ENOSPC: `> run.log` on a full disk, `> /dev/full`) stops the output, not
the run: the descriptor is pointed at /dev/null, what is written after is dropped, and the
run goes on to record every job's end. A failure other than a reader gone is kept
(`failure`) for the run to say at its end; before, the run died of it, leaving its jobs
running with no end recorded.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import queue
import threading
from typing import TextIO

GONE = (errno.EIO, errno.EPIPE)
"""What a write gets from a terminal that was closed and from a pipe whose reader left."""

_FLUSH = object()
_END = object()


class Tolerant(io.TextIOBase):
    """A text stream (stdout) written by a thread, whose reader may go away or stall."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self.gone = False
        self.failure: OSError | None = None
        """Why the output stopped, when not for a reader gone (a full disk)."""
        self._pending: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_all, name="run-output", daemon=True)
        self._writer.start()

    def write(self, text: str) -> int:
        if self._writer.is_alive():
            self._pending.put(text)
        else:  # (drained: the run is over, nothing waits on the reader any more)
            self._write_now(text)
        return len(text)

    def flush(self) -> None:
        if self._writer.is_alive():
            self._pending.put(_FLUSH)
        else:
            self._write_now(_FLUSH)

    def drain(self) -> None:
        """Wait until all that was written has reached the stream (or been dropped); what is
        written after goes there at once."""
        if self._writer.is_alive():
            self._pending.put(_FLUSH)
            self._pending.put(_END)
            self._writer.join()

    def failure_said(self, folder: str | None) -> str:
        """The `failure`, as the run's last word: its jobs ran on, their logs in `folder`."""
        lost = self.failure.strerror if self.failure is not None else None
        where = f": their logs are in {folder}" if folder else ""
        return (
            f"the run's output could not be written ({lost or self.failure}); its jobs ran{where}"
        )

    def isatty(self) -> bool:
        return not self.gone and self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # (an attribute in typeshed)
        return self._stream.encoding

    def _write_all(self) -> None:
        while (item := self._pending.get()) is not _END:
            self._write_now(item)

    def _write_now(self, item: object) -> None:
        if self.gone:
            return
        try:
            if item is _FLUSH:
                self._stream.flush()
            else:
                self._stream.write(str(item))
        except OSError as exc:
            self._lost(exc)

    def _lost(self, exc: OSError) -> None:
        if exc.errno not in GONE:
            self.failure = exc
        self.gone = True
        with contextlib.suppress(OSError, ValueError):  # (ValueError: no descriptor)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()  # what the stream still buffers goes to /dev/null
