"""What a child of the fork server (forks_server.py) does to become `python -m MODULE ARGS` as
subprocess.run would start it, and how a `gpuherd daemon start` in such a child forks its
daemon instead of starting a new interpreter (fork_daemons). forks.py's docstring says what
a child has, and what differs from a new process.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn


def become_python_m(request: dict[str, Any], fds: list[int], became: int) -> NoReturn:
    """In the forked child: become `python -m MODULE ARGS` (the request's argv) as started by
    subprocess.run; `became` is closed once it has (the server waits for that)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        os.close(fd)
    if request.get("new_session"):  # (Popen's start_new_session)
        os.setsid()
    fresh_signals()
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path.insert(0, os.getcwd())  # as `python -m` puts it first
    fresh_stdio()
    be_started_as(request["argv"])
    os.close(became)
    if request["argv"][2] == "gpuherd":
        fork_daemons()
    run_as_main(request["argv"][2])


def be_started_as(argv: list[str]) -> None:
    """sys.argv, sys.orig_argv and /proc/self/cmdline as `argv` (PYTHON -m MODULE ARGS) gives
    them; tempfile's folder not chosen yet."""
    tempfile.tempdir = None
    sys.argv = ["-m", *argv[argv.index("-m") + 2 :]]  # runpy puts the module's file in argv[0]
    sys.orig_argv = list(argv)
    retitle(argv)
    logged = getattr(sys.modules.get("sitecustomize"), "log_start", None)
    if logged is not None:  # benchmarks/suite_kinds.py tells processes apart by their start
        logged()


def retitle(argv: list[str]) -> None:
    """/proc/self/cmdline as `argv`, for ps, psutil and the tests that find a home's daemon by
    its command line (Herd._daemons, test_crash_loop's killer): written over this process's
    argument area, which the server's ROOM argument made big enough (forks.py checks that a
    call's fits); the rest of it NUL, which psutil reads as trailing '' words."""
    text = command_line(argv)
    start, end = _argument_area()
    if len(text) > end - start:
        raise ValueError(f"no room for the command line: {len(text)} > {end - start} bytes")
    with open("/proc/self/mem", "r+b", buffering=0) as memory:
        memory.seek(start)
        memory.write(text.ljust(end - start, b"\0"))


def command_line(argv: list[str]) -> bytes:
    """`argv` as /proc/PID/cmdline has it."""
    return b"".join(os.fsencode(word) + b"\0" for word in argv)


def room() -> int:
    """The bytes of command line this process has room for (its first argv's)."""
    start, end = _argument_area()
    return end - start


def _argument_area() -> tuple[int, int]:
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[45]), int(fields[46])  # arg_start, arg_end (proc(5))


def fresh_signals() -> None:
    """Every signal as a new interpreter has it: default, but SIGPIPE and SIGXFSZ ignored and
    SIGINT raising KeyboardInterrupt; none blocked."""
    for number in signal.valid_signals():
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            continue  # (the real-time signals glibc keeps for itself)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


_STARTED_STDIO: list[tuple[str, str]] = []
"""The encoding and errors of the server's sys.stdin/stdout/stderr as its start made them
(remember_stdio): a CLI child may have changed its own (cli/main.py's _replace_unencodable)
before it forks a daemon."""


def remember_stdio() -> None:
    """In the server, at its start: what fresh_stdio builds on."""
    _STARTED_STDIO[:] = [(s.encoding, s.errors or "strict") for s in _std_streams()]


def _std_streams() -> list[Any]:
    streams = [sys.__stdin__, sys.__stdout__, sys.__stderr__]
    assert all(streams)
    return streams


def fresh_stdio() -> None:
    """sys.stdin/stdout/stderr on fds 0-2 as Python's start-up makes them (create_stdio in
    Python/pylifecycle.c): the encoding and errors the environment gave the server, newline
    "\n", unbuffered writes under -u (PYTHONUNBUFFERED), else stdout line-buffered on a
    terminal and stderr always."""
    import io

    unbuffered = isinstance(_std_streams()[1].buffer, io.RawIOBase)  # -u: the server's too
    made = []
    for fd, (encoding, errors) in enumerate(_STARTED_STDIO):
        mode = "r" if fd == 0 else "w"
        raw_writes = unbuffered and mode == "w"
        buffering = 0 if raw_writes else -1
        buffer: Any = open(fd, mode + "b", buffering=buffering, closefd=False)  # noqa: SIM115
        raw = buffer if raw_writes else buffer.raw
        raw.name = f"<{('stdin', 'stdout', 'stderr')[fd]}>"
        stream = io.TextIOWrapper(
            buffer,
            encoding=encoding,
            errors=errors,
            newline="\n",
            line_buffering=not unbuffered and (fd == 2 or raw.isatty()),
            write_through=unbuffered,
        )
        stream.mode = mode  # type: ignore[misc]
        made.append(stream)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]


def run_as_main(module: str) -> NoReturn:
    """`python -m MODULE` from here on: a fresh __main__, the module run as it, then what the
    interpreter does at its end; exit with the status it would."""
    import builtins
    import runpy
    import threading
    import types

    main = types.ModuleType("__main__")
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__annotations__ = {}
    sys.modules["__main__"] = main
    interrupted = False
    try:
        runpy._run_module_as_main(module)  # type: ignore[attr-defined]
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException as exc:
        shown = exc.__traceback__.tb_next if exc.__traceback__ else None  # (not this frame)
        sys.excepthook(type(exc), exc.with_traceback(shown), shown)
        interrupted, code = isinstance(exc, KeyboardInterrupt), 1
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = 120  # as Python exits when it cannot flush its output
    if interrupted:  # as Python ends on an uncaught KeyboardInterrupt: killed by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _exit_code(code: object) -> int:
    """SystemExit's code as Python makes it an exit status (_Py_HandleSystemExit)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:
        pass
    return 1


def fork_daemons() -> None:
    """In a CLI child: the Popen that `gpuherd daemon start` (cli/daemon_cmds.py) makes of
    `PYTHON -m gpuherd.daemon ARGS` forks this process instead, which has the daemon's modules
    imported (~0.45 CPU-s of a daemon's ~0.84 s start). The child does what Popen's child
    and a new interpreter would: a session of its own, the stdio given, no other fd, signals
    at their defaults; then runs the module. Popen's own methods (poll, wait, kill) work on
    it: it is this process's child. Any other Popen is left as it is."""
    import subprocess
    import threading

    spawn = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(popen: subprocess.Popen[bytes], *given: Any, **named: Any) -> None:
        if named or len(given) != len(EXECUTE_CHILD):  # (another Python's Popen)
            return spawn(popen, *given, **named)  # type: ignore[no-any-return]
        call = dict(zip(EXECUTE_CHILD, given, strict=True))
        argv = [os.fsdecode(word) for word in call["args"]]
        stdio = (call["p2cread"], call["c2pwrite"], call["errwrite"])
        forkable = (
            argv[:4] == [sys.executable, "-P", "-m", "gpuherd.daemon"]
            and all(call[name] == value for name, value in _AS_DAEMON_CMDS_STARTS.items())
            and threading.active_count() == 1  # (fork only a single-threaded process)
            and len(command_line(argv)) <= room()
        )
        if not forkable:
            return spawn(popen, *given)  # type: ignore[no-any-return]
        pid = os.fork()
        if pid == 0:
            try:
                _become_daemon(argv, stdio)
            except BaseException:  # (it exits: here only if it could not become the daemon)
                import traceback

                traceback.print_exc()
            os._exit(70)
        popen.pid = pid
        popen._child_created = True  # type: ignore[attr-defined]

    subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]


EXECUTE_CHILD = (
    *("args", "executable", "preexec_fn", "close_fds", "pass_fds", "cwd", "env"),
    *("startupinfo", "creationflags", "shell", "p2cread", "p2cwrite", "c2pread", "c2pwrite"),
    *("errread", "errwrite", "restore_signals", "gid", "gids", "uid", "umask"),
    *("start_new_session", "process_group"),
)
"""subprocess.Popen._execute_child's parameters (Python 3.11)."""
_AS_DAEMON_CMDS_STARTS = {
    **dict.fromkeys(("executable", "preexec_fn", "cwd", "env", "gid", "gids", "uid"), None),
    **dict.fromkeys(("p2cwrite", "c2pread", "errread", "umask"), -1),  # (no pipe)
    **{"close_fds": True, "pass_fds": (), "shell": False, "restore_signals": True},
    **{"start_new_session": True, "process_group": -1},
}
"""How daemon_cmds starts the daemon: only such a Popen is forked."""


def _become_daemon(argv: list[str], stdio: tuple[int, int, int]) -> NoReturn:
    """In the daemon's forked child: what Popen's child does before its exec, then what a new
    interpreter running `python -m gpuherd.daemon ARGS` would be."""
    import gc

    gc.freeze()  # the CLI's objects are never collected here: their fds are closed below
    gc.enable()  # (as a new interpreter has it, whatever the CLI had done)
    os.setsid()
    for target, fd in enumerate(stdio):
        if fd != -1:
            os.dup2(fd, target)
    for name in os.listdir("/proc/self/fd"):  # close_fds: no fd of the CLI's is the daemon's
        if int(name) > 2:
            with contextlib.suppress(OSError):
                os.close(int(name))
    fresh_signals()
    fresh_stdio()
    del sys.path[0]  # -P: the CLI's folder (become_python_m put it first) is not the daemon's
    be_started_as(argv)
    run_as_main("gpuherd.daemon")
