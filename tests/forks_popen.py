"""`python -m MODULE ARGS` left running, as subprocess.Popen starts it, forked by the worker's
fork server (forks.py): RunProcess's `gpuherd run` and Herd.popen's `log -f` or `wait`, read
line by line and signalled. They were real processes, each starting an interpreter and
importing: the 45 files that use them took 79-82 CPU-s (4 workers, 2 runs), 68-71 since.

A ForkedPopen is a subprocess.Popen whose child the server forks instead of this process:
Popen makes the pipes and file objects, and its communicate() works unchanged; the child is
the server's, so its end comes as the wait status the server sends on the request's
connection (poll, wait), where Popen would call waitpid. Signals go to its pid, as Popen
sends them: the server reaps the child only once its status is sent, so the pid is not
reused while the status is on its way.
"""

from __future__ import annotations

import select
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import forks
from forks_child import EXECUTE_CHILD
from forks_server import STATUS, receive


def popen(
    module: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    stdin: int | IO[Any] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
    start_new_session: bool = False,
) -> subprocess.Popen[bytes]:
    """subprocess.Popen(`python -m MODULE ARGS`, ...) with these options: forked by this
    worker's server, or a real process where a fork would not behave as one
    (forks.ForkServer.fallback_reason)."""
    argv = [sys.executable, "-m", module, *args]
    server = forks.running_server()
    options: dict[str, Any] = {"env": env, "cwd": cwd, "stdin": stdin, "stdout": stdout}
    options.update(stderr=stderr, start_new_session=start_new_session)
    if server is None or server.fallback_reason(argv, env, cwd) is not None:
        return subprocess.Popen(argv, **options)
    return ForkedPopen(server, argv, **options)


class ForkedPopen(subprocess.Popen[bytes]):
    def __init__(self, server: forks.ForkServer, argv: list[str], **options: Any) -> None:
        self._server = server
        self._conn: Any = None  # (the status's connection, until the status has come)
        super().__init__(argv, **options)

    def _execute_child(self, *given: Any) -> None:
        call = dict(zip(EXECUTE_CHILD, given, strict=True))
        # -1: the stream is not redirected, so the child has this process's own.
        stdio = tuple(
            fd if fd != -1 else own
            for own, fd in enumerate((call["p2cread"], call["c2pwrite"], call["errwrite"]))
        )
        try:
            self._conn, self.pid = self._server.fork(
                call["args"], call["env"], call["cwd"], stdio, call["start_new_session"]
            )
            self._child_created = True
        finally:  # (Popen's own does this after its fork: the child's ends are the child's)
            pipes = ("p2cread", "p2cwrite", "c2pread", "c2pwrite", "errread", "errwrite")
            self._close_pipe_fds(*(call[name] for name in pipes))

    def _internal_poll(self, _deadstate: int | None = None, **_: Any) -> int | None:
        waiting = self.returncode is None and self._conn is not None
        if waiting and select.select([self._conn], [], [], 0)[0]:
            self._take_status(_deadstate)
        return self.returncode

    def _wait(self, timeout: float | None) -> int:
        if self.returncode is None:
            if not select.select([self._conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._take_status(None)
        assert self.returncode is not None
        return self.returncode

    def _take_status(self, deadstate: int | None) -> None:
        """The status the server sent (the connection is readable)."""
        try:
            (status,) = STATUS.unpack(receive(self._conn, STATUS.size))
        except RuntimeError:  # the server died: no status will come (Popen's ECHILD case)
            self.returncode = deadstate if deadstate is not None else 0
        else:
            self._handle_exitstatus(status)
        self._conn.close()
        self._conn = None
