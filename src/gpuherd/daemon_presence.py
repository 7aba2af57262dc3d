"""Whether a daemon runs for a home whose socket a client cannot reach, and what to say then.

A cleaner of temporary files (or a logout's of XDG_RUNTIME_DIR) removes the socket of a daemon
that runs on: it makes it again at its next look (daemon_home.SocketKeeper). Meanwhile a
client told the user that no daemon ran, and to start one, which `daemon start` then refused
("already running"). A running daemon is known by the home's lock (home_lock.acquire_lock):
it notes its pid in daemon.lock and holds that file open for its life (and locks the home
folder, which names it while a removed daemon.lock is not back yet). The client looks, and
takes no lock itself: a lock a client held for a moment could make a starting daemon's own
fail. Read by the client on its error path: kept light (no import of the daemon's modules).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd import paths
from gpuherd.errors import HerdError
from gpuherd.home_lock import folder_lock_holder, holds_open
from gpuherd.typed_name import typed_name

if TYPE_CHECKING:
    import psutil

ALREADY_RUNNING = "a daemon is already running"
"""How a daemon that found the home's lock taken says so (home_lock.acquire_lock): a start
that raced another for it, which `daemon start` and `gpuherd.connect()` tell apart."""


class AlreadyUp(HerdError):
    """`daemon start` refused: a daemon of this home runs (`pid`), started by another call
    (a restart told apart the one that won a race with it)."""

    def __init__(self, message: str, pid: int) -> None:
        super().__init__(message)
        self.pid = pid


SOCKET_CHECK = 5.0
"""Seconds between looks at the daemon's socket file while it runs. Its folder under
XDG_RUNTIME_DIR is removed at the user's last logout (systemd-logind) or by a cleaner of
temporary files, and the daemon, its jobs and its queue then ran on out of every client's
reach: `ls` said no daemon ran, `daemon start` that one did, and `daemon stop` could not stop
it. A look is one stat(): nothing next to the engine's work."""
SOCKET_BACK_WITHIN = SOCKET_CHECK + 2.0
"""Seconds a client waits for the socket of a daemon that runs to come back: one look of the
daemon, and the time to listen again (or, for a daemon that starts, to read its queue)."""


def lock_holder(home: Path) -> int | None:
    """The pid of the daemon that holds the home's lock; None when none does. The pid the
    lock file notes counts only while that process holds the file open: after a crash the
    file still names the dead daemon, whose pid may since be another program's. A daemon
    whose lock file was removed (or replaced by a new one) is known by its lock on the home
    folder until it puts the file back (home_lock.py)."""
    lock = paths.lock_file(home)
    try:
        held = lock.stat()
        pid = int(lock.read_text().strip())
    except (OSError, ValueError):  # no lock file, or no pid in it
        return folder_lock_holder(home)
    return pid if holds_open(pid, held) else folder_lock_holder(home)


def started_process(pid: int) -> psutil.Process | None:
    """The daemon just started, known by its pid and start time (a pid used again later is
    not it); None if it has already exited."""
    import psutil  # deferred: only a start that watches its daemon needs it

    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def still_running(process: psutil.Process | None) -> bool:
    """Whether a daemon from started_process() runs on (not exited, nor exited and unreaped)."""
    import psutil

    try:
        return process is not None and process.is_running() and process.status() != "zombie"
    except psutil.NoSuchProcess:
        return False


def socket_gone(home: Path, pid: int, socket_path: Path) -> str:
    """The one line for a daemon that runs but whose socket did not come back in time (it
    cannot be made again, or the daemon is stuck)."""
    name = typed_name()  # (not as_typed over the line: the home's path may hold "gpuherd ")
    return (
        f"the daemon for {home} runs (pid {pid}), but its socket {socket_path} is gone and did "
        f"not come back within {SOCKET_BACK_WITHIN:g}s: `{name} daemon log` says why; "
        f"`kill {pid}` stops the daemon (its running jobs go on), then `{name} daemon start` "
        "starts one that listens again"
    )


def answer_within() -> float:
    """Seconds `daemon start`, `stop` and `status` wait for the answer of a daemon that listens:
    5. One that serves answers in milliseconds, and one that holds its home but is stopped
    (SIGSTOP, Ctrl-Z) or stuck kept them waiting the client's 60 s, then `start` started
    another. (GPUHERD_TEST_ANSWER_WITHIN is the tests': each of theirs would wait the whole
    5 s. Read at each use, not at import: their CLI calls are forks of a process that has
    imported gpuherd, tests/forks.py.)"""
    return float(os.environ.get("GPUHERD_TEST_ANSWER_WITHIN") or 5.0)


def not_answering(home: Path, pid: int | None, within: float | None = None) -> str:
    """The one line for a daemon that listens but did not answer within `within` seconds
    (answer_within's by default), and what ends the wait: SIGCONT for a stopped one (SIGTERM
    would wait for it too), else SIGKILL, which a daemon that does not run its loop cannot
    put off; jobs outlive the daemon."""
    within = answer_within() if within is None else within
    name = typed_name()
    if pid is None:  # it let go of the home meanwhile (it ended, or its lock file was removed)
        said = f"a daemon listens for {home} but did not answer within {within:g}s"
        return f"{said}; `{name} daemon status` looks again"
    said = f"a daemon (pid {pid}) holds {home} but did not answer within {within:g}s"
    end = (
        f"`kill -9 {pid}` ends it (its running jobs go on, and the next `{name} daemon start` "
        "re-attaches to them)"
    )
    if is_stopped(pid):
        return f"{said}: it is stopped (SIGSTOP, or Ctrl-Z): `kill -CONT {pid}` resumes it; {end}"
    # (Busy: a daemon answers in milliseconds, but a submission of tens of thousands of
    # jobs or sweep points holds it for seconds; a SIGKILL then loses that submission.)
    busy = "busy with a large submission (wait a moment and try again)"
    return f"{said}: stuck, {busy}, or still starting (`{name} daemon log` may say which); {end}"


def is_stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP, Ctrl-Z): its state is T."""
    import psutil  # deferred: read only once a daemon has been silent for seconds

    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_STOPPED)
    except psutil.Error:
        return False
