"""`gpuherd daemon log [-n N] [-f] [--hooks]`: the end of the daemon's own log (or the on-end
hook's), read from the home's files, so it works when no daemon runs (after a failed start)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import click

from gpuherd import paths
from gpuherd.cli.param_types import WholeRange
from gpuherd.cli.reader_watch import pause
from gpuherd.core.text import shell_word
from gpuherd.daemon_presence import lock_holder
from gpuherd.errors import HerdError
from gpuherd.typed_name import typed_name

LOG_POLL = 0.25
"""Seconds between looks at a followed daemon.log (a file sends no notification)."""


@click.command(name="log")
@click.option(
    "-n",
    "--lines",
    type=WholeRange(0),
    default=20,
    show_default=True,
    metavar="N",
    help="Print the last N lines first (0: none, with -f only what comes next).",
)
@click.option("-f", "--follow", is_flag=True, help="Keep printing what the daemon logs.")
@click.option(
    "--hooks", is_flag=True, help="The on-end hook's output (hooks.log) instead of daemon.log."
)
def log_cmd(lines: int, follow: bool, hooks: bool) -> None:
    """Print the end of the daemon's log; -f keeps following it.

    Read from the home's daemon.log (or hooks.log), so it works when no daemon runs (after
    a failed start).
    """
    home = paths.home_dir()
    name = typed_name()
    if hooks:
        path = home / paths.HOOK_LOG
        missing = (
            "hook log",
            (
                f"no on-end hook has run there ({name} config get on-end shows the one set; "
                f"{name} daemon log --hooks -f waits for its first run)"
            ),
        )
    else:
        path, missing = paths.daemon_log(home), ("daemon log", "no daemon has started there")
    try:
        log = path.open("rb")
    except FileNotFoundError:
        pid = None if hooks else lock_holder(home)
        if pid is not None:
            raise HerdError(_removed_while_running(path, pid)) from None
        if not (hooks and follow):
            raise HerdError(f"no {missing[0]} at {path} yet: {missing[1]}") from None
        log = _first_made(path)  # (set a hook, then watch it: as `tail -F` waits)
    try:
        text = log.read()
        tail = text.splitlines(keepends=True)[-lines:] if lines else []
        sys.stdout.write(b"".join(tail).decode(errors="replace"))
        sys.stdout.flush()
        while follow:
            chunk = log.read()
            if chunk:
                sys.stdout.write(chunk.decode(errors="replace"))
                sys.stdout.flush()
            elif _rotated(path, log.fileno()):  # hooks.log became hooks.log.1: on to the new
                log.close()
                log = path.open("rb")
            else:  # (ends as soon as the reader goes away: `| grep -m1 serving`)
                pause(LOG_POLL)
    finally:
        log.close()


def _first_made(path: Path) -> io.BufferedReader:
    """`path` opened once it is made, said first on stderr: `daemon log --hooks -f` before
    any hook has run refused to follow ("no hook log yet"), as a hook was just set."""
    click.echo(
        f"{typed_name()}: no on-end hook has run yet; waiting for its first run ({path})",
        err=True,
    )
    while True:
        with contextlib.suppress(FileNotFoundError):
            return path.open("rb")
        pause(LOG_POLL)


def _removed_while_running(path: Path, pid: int) -> str:
    """daemon.log removed (to free its space, say) or renamed while its daemon runs on: it
    writes to that file still, which `daemon log` cannot read. It said no daemon had started
    there; then that a renamed log (`mv daemon.log old.log`) was removed."""
    restart = f"`{typed_name()} daemon restart` starts a new log (running jobs go on)"
    where = _written_to(path, pid)
    if where == "":
        return (
            f"{path} was removed while the daemon (pid {pid}) runs: it writes on to the "
            f"removed file, whose space comes back only once it stops; {restart}"
        )
    if where is not None:
        return (
            f"{path} was renamed to {where} while the daemon (pid {pid}) runs: it writes on "
            f"to {where} (read it there: tail {shell_word(where)}); {restart}"
        )
    return (
        f"{path} was removed or renamed while the daemon (pid {pid}) runs: it writes on to "
        f"that file (removed, its space comes back only once it stops); {restart}"
    )


def _written_to(path: Path, pid: int) -> str | None:
    """The file the daemon `pid` writes its log to, `path` gone: "" for a removed file (the
    kernel names it `PATH (deleted)`), its new name for one renamed; None where that cannot
    be told (no /proc: not Linux; a --foreground daemon, whose stderr is not the log)."""
    fds = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fds)
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            foreground = b"\0--log-file\0" in f.read()
    except OSError:
        return None
    targets = {}
    for fd in names:
        with contextlib.suppress(OSError):  # (closed meanwhile: a busy daemon's sockets)
            targets[fd] = os.readlink(f"{fds}/{fd}")
    if f"{path} (deleted)" in targets.values():
        return ""
    # `daemon start` gives the daemon the log as its stdout and stderr (renamed, then
    # removed: `old.log (deleted)`).
    where = targets.get("2")
    if foreground or where is None or where != targets.get("1") or not where.startswith("/"):
        return None
    if os.path.isfile(where):
        return where
    return "" if where.endswith(" (deleted)") else None


def _rotated(path: Path, fd: int) -> bool:
    """Whether `path` is a new file now (or none yet), not the one open as `fd`."""
    try:
        return path.stat().st_ino != os.fstat(fd).st_ino
    except FileNotFoundError:
        return False  # between the rename and the new file's first line
