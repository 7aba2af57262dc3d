"""The fork server of tests/forks.py: it imports gpuherd's modules once, then forks a child
for each request, which becomes `python -m gpuherd ARGS` as subprocess.run would start it
(forks.py's docstring says what that takes, and what differs). Run as
`python tests/forks_server.py SOCKET ROOM` by forks.py (ROOM: a long argument, whose room
in /proc/PID/cmdline each child writes its own command line over: forks_child.retitle);
stdlib-only imports until serve() runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import signal
import socket
import struct
import sys
import traceback
from typing import Any

from forks_child import become_python_m, remember_stdio, retitle

PRELOADED = (
    *("gpuherd.cli.main", "gpuherd.cli.other_tools"),
    *("gpuherd.daemon", "gpuherd.api.app", "gpuherd.api.server"),
    *("uvicorn.protocols.http.h11_impl", "pydantic.v1"),
)
"""What the server imports, with every command's module (main.py imports them on use): the
CLI's, and the daemon's, with what it imports once it serves (a `daemon start` in a child
forks it: forks_child.fork_daemons), whose API routes it has FastAPI analyse too
(gpuherd.api.app.api_routes). No Ray: its modules pick ids at import."""

LENGTH = struct.Struct("!I")
PID = struct.Struct("!q")
STATUS = struct.Struct("!i")
KILL = b"K"


def limits() -> dict[int, tuple[int, int]]:
    names = [n for n in dir(resource) if n.startswith("RLIMIT_")]
    return {getattr(resource, n): resource.getrlimit(getattr(resource, n)) for n in names}


def receive(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            raise RuntimeError("the fork server closed the connection (it died?)")
        data += more
    return data


def serve(path: str) -> None:
    """Import PRELOADED, then fork a child for each request until stdin (the worker) closes."""
    import gc
    import importlib

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is for the tests and the children
    del sys.path[0]  # tests/, where this file is: never on a real call's path
    for name in PRELOADED:
        importlib.import_module(name)
    from gpuherd.cli.main import COMMAND_TABLE

    for module, _ in COMMAND_TABLE.values():
        importlib.import_module(f"gpuherd.cli.{module}")
    from gpuherd.api.app import api_routes

    api_routes()  # FastAPI's analysis of the API's routes, once for every daemon forked
    gc.freeze()  # (as the CLI does after its imports): the children share these pages
    retitle(sys.orig_argv)  # (the children will: fail here, before "ready", if it cannot)
    remember_stdio()
    _Server(path).loop()


class _Server:
    """One thread, no signal handler: a selector on the listening socket, on each child's
    pidfd (it ended: reap it, send its status), on each caller's connection (a kill asked,
    or the caller gone), and on stdin (the worker gone)."""

    def __init__(self, path: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(sys.stdin, selectors.EVENT_READ)
        self.children: dict[int, tuple[int, socket.socket | None]] = {}  # pidfd: pid, caller

    def loop(self) -> None:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while True:
            for key, _ in self.selector.select():
                if key.fileobj is sys.stdin:
                    return  # the worker is gone or done; children left running finish alone
                if key.fileobj is self.listener:
                    self.fork()
                elif isinstance(key.fileobj, socket.socket):
                    self.caller_spoke(key.fileobj, key.data)
                else:
                    self.reap(key.fd)

    def fork(self) -> None:
        conn, _ = self.listener.accept()
        request, fds = _request(conn)
        became_r, became_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(became_r)
                self.close_all(conn)
                become_python_m(request, fds, became_w)
            except BaseException:  # (it exits: here only if it could not become it)
                traceback.print_exc()
                sys.stderr.flush()
            os._exit(70)
        for fd in (*fds, became_w):
            os.close(fd)
        # Its pid goes to the caller once it holds none of the server's fds and has its
        # command line, as Popen returns once its child has exec'd: a test that looks at the
        # child's sockets (psutil) must see its own alone, never the server's.
        os.read(became_r, 1)  # (the end of the file: the child closed its end, or died)
        os.close(became_r)
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (pid, conn)
        self.selector.register(pidfd, selectors.EVENT_READ)
        self.selector.register(conn, selectors.EVENT_READ, pidfd)
        conn.sendall(PID.pack(pid))

    def close_all(self, conn: socket.socket) -> None:
        """In a child: no fd of the server's left open (stdin and stdout are replaced)."""
        self.selector.close()
        for other in (self.listener, conn, *(c for _, c in self.children.values() if c)):
            other.close()
        for pidfd in self.children:
            os.close(pidfd)

    def caller_spoke(self, conn: socket.socket, pidfd: int) -> None:
        """A kill asked (a timeout), or the caller gone (an error, a Ctrl-C in the test):
        the child killed, as subprocess.run kills it."""
        if not conn.recv(1):
            self.selector.unregister(conn)
            conn.close()
            self.children[pidfd] = (self.children[pidfd][0], None)
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)

    def reap(self, pidfd: int) -> None:
        """A child ended: its wait status to its caller, then reaped. In that order: a signal
        the caller sends until the status has come (Popen.send_signal, by number) reaches the
        child's zombie, never a process that has taken its number since."""
        pid, caller = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        if caller is not None:
            self.selector.unregister(caller)
            ended = os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOWAIT)
            with contextlib.suppress(OSError):  # the caller left meanwhile
                caller.sendall(STATUS.pack(_wait_status(ended)))
            caller.close()
        os.waitpid(pid, 0)
        os.close(pidfd)


def _wait_status(ended: Any) -> int:
    """waitpid's status for what waitid said (os.waitid_result) of a child that ended."""
    if ended.si_code == os.CLD_EXITED:
        return (ended.si_status & 0xFF) << 8
    return ended.si_status | (0x80 if ended.si_code == os.CLD_DUMPED else 0)


def _request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, LENGTH.size, 3)
    (length,) = LENGTH.unpack(head + receive(conn, LENGTH.size - len(head)))
    return json.loads(receive(conn, length)), fds


if __name__ == "__main__":
    serve(sys.argv[1])
