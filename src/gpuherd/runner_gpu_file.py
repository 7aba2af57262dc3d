"""`gpuherd run --gpu-file FILE`: the GPUs to use, read from a file at the start and again
whenever it changes while the run goes on (gpu-hog's wish: change them without a restart).

Every GPU of the machine is configured for the run; those the file does not name are
draining, as `gpuherd gpus drain` leaves a GPU: a job running there finishes, nothing new
starts there. Draining rather than removing: a job that asks for more GPUs than the file names
now is not refused as one that can never run (the file may name more later); it waits. The
changes go through the daemon's own verbs (Service.gpu_add, gpu_state), so placement sees
them as it sees `gpuherd gpus add` and `gpus drain`, and is woken at once.

The file is looked at once a second (a stat: its inode, size and times), from a timer on the
run's loop: nothing is added to a job's start or end.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from gpuherd.core.idspec import format_ids
from gpuherd.core.model import DeviceState
from gpuherd.core.text import shell_word
from gpuherd.devices import DeviceTable
from gpuherd.errors import HerdError
from gpuherd.gpus.spec import parse_gpu_spec
from gpuherd.service import Service

CHECK_EVERY = 1.0
"""Seconds between two looks at the file."""
LONGEST_FILE = 64 * 1024
"""Bytes a GPU list may take: a bigger file is not one (a log named by mistake)."""

Stamp = tuple[int, int, int, int] | None
"""(inode, size, mtime, ctime) in nanoseconds; None when the file cannot be looked at."""


def gpus_in(text: str) -> dict[int, int]:
    """GPU index -> slots, as --gpus takes them (`0,1`, `0 1`, `1-3`, a repeat is another
    slot), over lines, with `#` comments; {} for a file that names none. ValueError, one line."""
    words = [w for line in text.splitlines() if (w := line.partition("#")[0].strip())]
    return parse_gpu_spec(words) if words else {}


def _named(path: Path) -> str:
    """`--gpu-file PATH` as the run's lines name it: PATH on one line, as a shell reads it."""
    return f"--gpu-file {shell_word(str(path))}"


def read_gpu_file(path: Path) -> dict[int, int]:
    """The file's GPUs; HerdError, one line naming the file, when it cannot be read or is no
    GPU list. Opened without blocking: a named pipe in its place must not stop the run."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise HerdError(f"{_named(path)}: not a plain file: give a text file")
            data = os.read(fd, LONGEST_FILE + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        raise HerdError(
            f"{_named(path)}: cannot read it ({exc.strerror or exc}): give a text file of "
            "GPU indices, such as 0,1"
        ) from None
    if len(data) > LONGEST_FILE:
        raise HerdError(f"{_named(path)}: bigger than {LONGEST_FILE // 1024} KiB: no GPU list")
    try:
        return gpus_in(data.decode("utf-8-sig"))  # a byte order mark dropped, as a job file's
    except UnicodeDecodeError:
        raise HerdError(f"{_named(path)}: not UTF-8 text: give GPU indices") from None
    except ValueError as exc:
        raise HerdError(f"{_named(path)}: {exc}") from None


def check_gpu_file(path: Path, machine: Iterable[int]) -> None:
    """At the start: refuse, in one line, a file that cannot be used or names a GPU that this
    machine does not have (mid-run such a GPU is ignored, with a line: GpuFile)."""
    named, have = read_gpu_file(path), sorted(machine)
    if absent := sorted(set(named) - set(have)):
        gpus = f"GPU {absent[0]}" if len(absent) == 1 else f"GPUs {format_ids(absent)}"
        raise HerdError(
            f"{_named(path)} names {gpus}, which this machine does not have (it has "
            f"{'GPUs ' + format_ids(have) if have else 'none'}): take it out of the file"
        )


def gpus_text(gpus: dict[int, int]) -> str:
    """`GPUs 0,2` (`GPU 1`; `GPUs 0 (2 slots),1`), as the run's lines say them."""
    named = [str(i) if n == 1 else f"{i} ({n} slots)" for i, n in sorted(gpus.items())]
    return f"GPU{'' if len(named) == 1 else 's'} {','.join(named)}" if named else "no GPU"


class GpuFile:
    """The run's GPUs kept as the file names them (call `start` on the run's loop)."""

    def __init__(
        self, path: Path, service: Service, say: Callable[[str], None], per_job: int = 1
    ) -> None:
        self._path = path
        self._per_job = per_job
        """--gpus-per-job: a file naming fewer GPUs leaves such jobs waiting, which is said."""
        self._service = service
        self._say = say
        self._stamp: Stamp = None
        self._used: dict[int, int] | None = None
        """The set last applied (the last good file's GPUs that the machine has)."""
        self._problem: str | None = None
        """What is wrong with the file, as last said; None while it is good."""
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Apply the file now (before anything is placed), then look again once a second."""
        self._check(self._stamp_now())
        self._timer = asyncio.get_running_loop().call_later(CHECK_EVERY, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        stamp = self._stamp_now()
        if stamp != self._stamp:
            self._check(stamp)
        self._timer = asyncio.get_running_loop().call_later(CHECK_EVERY, self._tick)

    def _stamp_now(self) -> Stamp:
        try:
            s = os.stat(self._path)
        except OSError:
            return None
        return s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns

    def _check(self, stamp: Stamp) -> None:
        self._stamp = stamp
        try:
            named = read_gpu_file(self._path)
        except HerdError as exc:
            if str(exc) != self._problem:  # once per problem, not once a second
                self._problem = str(exc)
                if self._used is None:  # none good yet (it changed since the start's check)
                    self._apply({})
                kept = gpus_text(self._used or {})
                self._say(f"{exc}; keeping {kept} until the file is valid again")
            return
        before, again = self._used, self._problem is not None
        self._problem = None
        used = self._apply(named)
        if not used and (again or used != before):
            # True whatever the jobs ask: CPU-only ones (--gpus-per-job 0, a yielder's) start
            # all the same; "waiting for GPUs" was said of a run that waited for nothing.
            self._say(
                f"{_named(self._path)} names no GPU to use: jobs that need a GPU wait until it"
                " names one"
            )
        elif again or used != before:
            said = " is valid again:" if again else ": using" if before is None else ": now"
            self._say(f"{_named(self._path)}{said} {gpus_text(used)}{self._short_of(used)}")

    def _short_of(self, used: dict[int, int]) -> str:
        """` (fewer than --gpus-per-job 2: ...)` when the file names fewer GPUs than a job
        asks: such jobs waited without a word."""
        n = self._per_job
        if len(used) >= n:
            return ""
        return f" (fewer than --gpus-per-job {n}: jobs that need {n} wait until it names {n})"

    def _apply(self, named: dict[int, int]) -> dict[int, int]:
        """Use the named GPUs with their slots and drain the others; a GPU the machine does
        not have is said and left out. Returns the GPUs now used."""
        service = self._service
        devices = service.engine.devices
        configured = devices.configured()
        used: dict[int, int] = {}
        for index, slots in named.items():
            config = configured.get(index)
            try:
                if config is None or config.slots != slots:
                    _refuse_unseen(devices, index)
                    service.gpu_add(index, slots)
            except HerdError as exc:
                self._say(f"{_named(self._path)}: {exc}: ignored")
                continue
            if config is not None and config.state is DeviceState.DRAINING:
                service.gpu_state(index, DeviceState.ENABLED)
            used[index] = slots
        for index, config in configured.items():
            if index not in named and config.state is DeviceState.ENABLED:
                service.gpu_state(index, DeviceState.DRAINING)
        self._used = used
        return used


def _refuse_unseen(devices: DeviceTable, index: int) -> None:
    """A HerdError for a GPU the probe does not see, as a run says it: the daemon's line
    (`gpus add`'s) tells what to do with `gpuherd gpus`, which a run has not."""
    if devices.reading(index) is None:
        known = sorted({*devices.configured(), *devices.unused()})
        said = ",".join(str(i) for i in known if devices.reading(i) is not None) or "none"
        raise HerdError(f"GPU {index} is not present (the probe sees: {said})")
