"""The client's wait for the daemon's answer (a part of client.py), which tells a daemon that
is stopped (SIGSTOP, Ctrl-Z) from one that is busy.

A stopped daemon answers nothing until it is resumed: every command but `daemon start`,
`status` and `stop` waited the client's whole 60 s for it, then said "the daemon did not
answer within 60s", naming neither the daemon nor `kill -CONT`. The wait is now cut in
slices: once the daemon has been silent answer_within() seconds, the holder of the home's lock
is looked at between slices, and a stopped one is said at once (daemon_presence's line).
A daemon that runs is waited for as before, up to the client's timeout of silence: a big
listing, a sweep's creation or a wait's long poll may take long, legitimately. The request
is sent the same way (`sender`): a big one (`submit --file` of 20,000 lines) fills the
socket's buffer, which a stopped daemon never empties.
"""

from __future__ import annotations

import io
import select
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd.client_http import BadResponse, CutOff, Sender
from gpuherd.daemon_presence import answer_within, is_stopped, lock_holder, not_answering
from gpuherd.errors import LostConnection, NoAnswer, Suspended
from gpuherd.typed_name import as_typed

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

LOOK_EVERY = 1.0
"""Seconds between looks at a daemon that is silent past answer_within(). A look is a listing
of its open files and a read of its state in /proc: nothing next to a second of waiting."""


def answers(sock: socket.socket, home: Path, timeout: float | None) -> io.BufferedReader:
    """The daemon's answer on `sock`, to read as a file: a read waits at most `timeout`
    seconds of silence (NoAnswer; None: no limit), and less for a daemon that is stopped
    (Suspended), also without a limit: it answers nothing until it is resumed."""
    return io.BufferedReader(_Sliced(sock, home, float("inf") if timeout is None else timeout))


def silent_at_most(answer: io.BufferedReader, timeout: float | None) -> None:
    """From now on, a read of `answer` (answers()) waits at most `timeout` seconds of silence
    (None: no limit): an event stream's, once its head has said how often its daemon speaks."""
    raw = answer.raw
    if isinstance(raw, _Sliced):
        raw.timeout = float("inf") if timeout is None else timeout


def sender(sock: socket.socket, answer: io.BufferedReader) -> Sender:
    """What sends the request on `sock` whose answer is read from `answer` (answers()): each
    piece waited for as a read is, so a stopped daemon is said within seconds here too."""
    raw = answer.raw
    return raw if isinstance(raw, _Sliced) else sock


def no_answer(home: Path, seconds: float | None) -> NoAnswer:
    """The one line for a daemon silent for `seconds` (None: no limit, never said), naming it
    and what ends the wait."""
    within = float("inf") if seconds is None else seconds
    pid = lock_holder(home)
    if pid is None:  # none holds the home (another's socket, or it went meanwhile)
        return NoAnswer(f"the daemon did not answer within {within:g}s")
    return NoAnswer(not_answering(home, pid, within))


class Sent:
    """A Sender that notes whether the whole request went out: a daemon that is stopped or
    hung reads it once it runs again, and carries it out; one cut short it never does."""

    def __init__(self, sock: Sender) -> None:
        self._sock = sock
        self.whole = False

    def sendall(self, data: bytes, /) -> None:
        self._sock.sendall(data)
        self.whole = True


def done_later(exc: NoAnswer, path: str = "", body: Any = None) -> NoAnswer:
    """The line for a change asked of a daemon that did not answer (`submit`, `kill`, ...):
    it sits in the socket, and a daemon resumed (`kill -CONT`) or unstuck carries it out. A
    user who ran the script again queued its jobs twice: what to look at first is said, for
    the kind of request at `path` (with `body`): a setting's change pointed to the jobs."""
    return type(exc)(
        f"{exc}; "
        + as_typed(
            "the request was sent, so the daemon may still carry it out once it answers: "
            f"look with {_where_to_look(path, body)} before asking again"
        )
    )


def _where_to_look(path: str, body: Any) -> str:
    """The command that shows whether the change asked at `path` was carried out."""
    if path == "/config":  # `config set NAME VALUE`, `config unset NAME`
        from gpuherd.core.text import shell_word  # (on this error's path alone)

        name = body.get("name") if isinstance(body, dict) else None
        said = shell_word(name) if isinstance(name, str) and name else "NAME"
        return f"`gpuherd config get {said}` (was it set?)"
    return "`gpuherd ls --all` (were the jobs queued? killed?)"


WENT_AWAY = (
    "lost the connection to the daemon: it went away before it answered in full (a stop, "
    "a restart or a crash)"
)
"""What a request whose connection the daemon cut says (lost()), in place of the socket's
own words: `ConnectionResetError(104, 'Connection reset by peer')` (a daemon killed before it
read the request), BrokenPipeError, an answer cut off, which named neither the daemon nor
what to do."""


def lost(exc: OSError | BadResponse, done_maybe: bool = False) -> LostConnection:
    """The line for a request the daemon did not answer whole (`exc`, which the caller raises
    it from, as its __cause__). `done_maybe`: a change was asked for, which a daemon that
    went before answering (a crash, a kill -9) may have committed, or not: submitting again
    blindly could queue the jobs twice."""
    if isinstance(exc, OSError | CutOff):
        said = WENT_AWAY
        then = "; start it again if none runs (`gpuherd daemon start`), "
        then += "then ask again"
    else:  # garbled, not the daemon's HTTP (another program's socket): what is wrong with it
        said, then = f"lost the connection to the daemon: {exc}", ""
    if done_maybe:
        then = "; it may have been done before the daemon went: `gpuherd ls --all` shows the "
        then += "queue as it is (after `gpuherd daemon start`)"
    return LostConnection(said + as_typed(then))


def gone_while_waiting(home: Path) -> str:
    """The line for a wait (`Client.wait_for`, `as_completed`) whose daemon went away and
    none came back: what the daemon said last ("the daemon is stopping; wait again once it
    is back"), or the socket's words, is not what to do now."""
    return (
        f"the daemon went away while this waited for jobs, and none came back for {home}: "
        + as_typed(
            "start it again (`gpuherd daemon start`, or gpuherd.connect()): jobs go on meanwhile, "
            "and the next daemon re-attaches to them. Then wait again"
        )
    )


class _Sliced(io.RawIOBase):
    """The socket's bytes, each read waited for in slices (the buffer above reads only when
    it is empty: an answer that streams in is never looked at)."""

    def __init__(self, sock: socket.socket, home: Path, timeout: float) -> None:
        self._sock, self._home, self.timeout = sock, home, timeout
        self._reading, self._writing = select.poll(), select.poll()
        self._reading.register(sock, select.POLLIN)
        self._writing.register(sock, select.POLLOUT)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        self._wait(self._reading)
        return self._sock.recv_into(buffer)

    def sendall(self, data: bytes, /) -> None:
        """socket.sendall, with each piece's room in the socket waited for in slices."""
        view = memoryview(data)
        while view:
            self._wait(self._writing)
            view = view[self._sock.send(view) :]

    def _wait(self, ready: select.poll) -> None:
        """Until `ready` says the socket is: NoAnswer after the timeout's silence, Suspended
        as soon as the daemon is seen stopped once it has been silent answer_within()."""
        began = time.monotonic()
        give_up, look = began + self.timeout, began + answer_within()
        while not ready.poll(max(0.0, min(give_up, look) - time.monotonic()) * 1000):
            now = time.monotonic()
            if now >= give_up:
                raise no_answer(self._home, self.timeout)
            if now >= look:
                pid = lock_holder(self._home)
                if pid is not None and is_stopped(pid):
                    raise Suspended(not_answering(self._home, pid))
                look = now + LOOK_EVERY


@dataclass
class Waited:
    """What `Client.wait_for` found (here, as client.py has room for no more)."""

    states: dict[int, str]
    """Each job's last state seen."""
    done: bool
    """Whether every job has finished."""
    endings: dict[int, dict[str, Any]]
    """How each job that ended but did not succeed ended: its state, outcome, exit_code,
    signal and message, as `show --json` has them."""
