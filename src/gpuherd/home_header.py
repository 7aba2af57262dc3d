"""Which home a request is for (its `Gpuherd-Home` header): a daemon serves its own home alone.

Two homes may share one socket: GPUHERD_SOCKET exported once (~/.bashrc), then
`GPUHERD_HOME=/other gpuherd kill 16` reached the first home's daemon and killed its job 16
(`ls` listed its queue, `submit` queued there), exit 0. `daemon start`, `stop` and `restart`
refused already, having asked the daemon its home; every other command sent its request as
it was. Now the client names its home in every request, and the daemon refuses one for
another home (421 Misdirected Request) before anything of it is done. The check is the
daemon's, not the client's: the client learns the daemon's home only from an answer (one
request per connection), and an answer comes after the request was carried out; asking
first would cost every command a second request.

A home is known by its device and inode, so the same folder by two paths (a link to it) is
one home; by its path where the client cannot look at it (a home not made yet). A request
without the header (an older client, curl, the dashboard's pages) is served as before, and
an older daemon ignores it (served as before too). Read by the client at every request:
standard library only.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote_to_bytes

HEADER = "Gpuherd-Home"
MISDIRECTED = 421
"""The status of a request for another home (RFC 9110: "a request that was directed at a
server that is unable or unwilling to produce an authoritative response")."""
_UNSEEN = "-"
"""The identity of a home the client cannot look at (not made yet, or not its to read)."""


Asked = tuple[str | None, str]
"""The home a request names: its identity (DEV:INO, None if unknown) and its path. (A plain
tuple: a typing.NamedTuple cost every CLI call ~0.9 ms to define.)"""


def identity(home: Path | str) -> str | None:
    """DEV:INO of the folder `home` names (through links); None if it cannot be looked at."""
    try:
        found = os.stat(home)
    except (OSError, ValueError):  # (ValueError: a path holding a NUL byte)
        return None
    return f"{found.st_dev}:{found.st_ino}"


def home_moved(home: Path, running: bool = True) -> str:
    """What a daemon whose home folder was renamed or removed while it ran says of it (its
    herd.db is no longer at its path), with what to do; `running`: said while it runs, else
    as it stops."""
    if running:
        return (
            f"the home {home} was moved or removed while the daemon ran: the daemon goes on "
            "with the folder it opened, wherever that is now; stop it (`GPUHERD_HOME="
            "WHERE-IT-IS-NOW gpuherd daemon stop`), then start the daemon on the home where "
            "you want it"
        )
    return (
        f"the home {home} was moved or removed while the daemon ran: its queue went with the "
        "folder; `gpuherd daemon start` with GPUHERD_HOME naming where it is now goes on with it"
    )


def same_home(one: Path | str, other: Path | str) -> bool:
    """Whether two paths name one home: the same text, or the same folder (through a link)."""
    found = identity(one)
    return str(one) == str(other) or (found is not None and found == identity(other))


def header_value(home: Path) -> str:
    """`DEV:INO PATH` (`-` for an identity unknown), the path percent-encoded: any bytes a
    path holds (a newline, a name in no encoding) travel in an ASCII header."""
    return f"{identity(home) or _UNSEEN} {quote(os.fsencode(home))}"


def asked(value: bytes) -> Asked | None:
    """The home a header's `value` names; None for one this daemon cannot read (a later
    client's form, say), served as a request without the header is."""
    ident, _, path = value.decode("latin-1").partition(" ")
    dev, colon, ino = ident.partition(":")
    if not path or not (ident == _UNSEEN or (colon and dev.isdigit() and ino.isdigit())):
        return None
    return None if ident == _UNSEEN else ident, os.fsdecode(unquote_to_bytes(path))


def is_home(request: Asked, own: str | None, home: Path) -> bool:
    """Whether `request` is for the daemon's `home`, of identity `own` (its start's: a home
    renamed since is still it). Its path too: a home removed and made again under the daemon
    is not the folder it started in, but no other home's either."""
    ident, path = request
    return (ident is not None and ident == own) or path == str(home)


def another_homes_daemon(socket: str, pid: int, theirs: Path, yours: str) -> str:
    """The one line for a request of home `yours` that reached the daemon of home `theirs`
    (pid `pid`, listening on `socket`); its start as `daemon start`'s refusal of that daemon."""
    return (
        f"another daemon listens on {socket} (pid {pid}, home {theirs}; a GPUHERD_SOCKET shared "
        f"by two homes?): nothing was done for {yours}; give each home its own socket, or "
        "unset GPUHERD_SOCKET"
    )


_PEER = struct.Struct("3i")  # struct ucred (SO_PEERCRED): pid, uid, gid


class QueueKnown:
    """What a client knows of the queue it talks to, to tell when it is no longer that queue:
    a home removed and made again (or a herd.db put back from an older backup) numbers its
    jobs from 1 again, so a handle of job 3 (a notebook's, a `wait`'s) went on with the new
    job 3, and `job.kill()` stopped it. Not by the home's DEV:INO: ext4 gives a folder made
    again the inode of the one removed (`rm -rf`, then `mkdir`).

    Cheap: each connection reads its daemon's pid (SO_PEERCRED, no request), and answers are
    looked at for the highest job id they name; only once another daemon answers (a restart,
    a stop and start) is it asked its highest id ever given, which only a new queue has
    lower than one this client was answered of. A new queue given as many jobs as the first
    one before the client looks again is not told apart."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.highest = 0
        """The highest job id an answer named (a submission's, a job's, a listing's)."""
        self.gone: str | None = None
        """Why the queue is not the one known: every request refused so, once found."""
        self.checking = False

    def another_daemon(self, sock: socket.socket) -> int | None:
        """The pid of the daemon `sock` is connected to if it is another than the last one,
        where a job id was answered of: it is then to be asked its highest id (`check`)."""
        if self.checking:  # (the check's own request)
            return None
        pid = _PEER.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER.size))[0]
        if self.pid is not None and pid != self.pid and self.highest > 0:
            return int(pid)
        self.pid = pid
        return None

    def check(self, home: Path, pid: int, status: Callable[[], dict[str, Any]]) -> None:
        """Note the `status()` (`GET /daemon`'s) of the queue of `home`, served by `pid`: its
        `last_job` is the highest id it ever gave (None: none yet; not said: a daemon older
        than that). A status not had is asked again at the next connection."""
        self.checking = True
        try:
            last_job = status().get("last_job", self.highest)
        finally:
            self.checking = False
        self.pid = pid
        if (last_job or 0) < self.highest:
            self.gone = (
                f"the queue of {home} is not the one this connection knew: its job ids go up "
                f"to {last_job or 0}, and job {self.highest} was one of it (the home removed "
                "and made again, or a herd.db put back from a backup?): its job handles name "
                "other jobs now; connect again (gpuherd.connect(), or run the command again)"
            )

    def answered(self, answer: object) -> None:
        """Note the highest job id `answer` names: `ids` (a submission's), `id` (a job's), or
        `jobs` (a listing's)."""
        if not isinstance(answer, dict):
            return
        ids = answer.get("ids")
        found = [answer.get("id"), *(ids if isinstance(ids, list) else [])]
        jobs = answer.get("jobs")
        if isinstance(jobs, list) and jobs and isinstance(jobs[0], dict):
            found += [job.get("id") for job in jobs]
        self.highest = max([self.highest, *(i for i in found if isinstance(i, int))])
