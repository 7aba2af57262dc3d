"""A local job's output into files of the user's choosing (`--output`, `--error`).

The daemon opens each file before the job's shell starts (creating it, or emptying it for the
first attempt that writes it): one that cannot be opened fails the attempt with its reason,
where the shell's own redirection would fail with its message in no log at all. Then the
attempt folder's `stdout.log` and `stderr.log` become links to the files, and the shell's
`>>` redirections follow them: every reader of the folder's logs (`gpuherd log`, the stall
check, the out-of-memory check) finds the output where it always was. Both streams into one
file are two appending descriptions of it, as `2>&1` is one: neither overwrites the other.
"""

from __future__ import annotations

import contextlib
import errno
import os

from gpuherd.core.log_names import FOLDER_LOGS
from gpuherd.core.output_files import Files, OutputFile
from gpuherd.executors.base import LaunchRequest, SpawnError

_OPEN = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
"""O_NONBLOCK: a named pipe no one reads fails at once (ENXIO), never holds the daemon."""


def link_outputs(request: LaunchRequest) -> None:
    """Open (create, or empty) the request's output files and link the attempt's logs to
    them; SpawnError naming the file and what to do if one cannot be opened."""
    opened: set[str] = set()
    for log, output in zip(FOLDER_LOGS, request.outputs, strict=True):
        if output is None:
            continue
        if output.path not in opened:
            _open(request, log, output)
            opened.add(output.path)
        _link(output.path, os.path.join(request.attempt_dir, log))


def linked_files(attempt_dir: str) -> Files:
    """Where an attempt's stdout and stderr went, as its folder's logs say (link_outputs'
    links name the files of the user's choosing): what herd.db records of an attempt it did
    not know, found in its folder (engine_taken.py); the job's files may have been edited
    since it began."""
    out, err = (_link_target(os.path.join(attempt_dir, log)) or log for log in FOLDER_LOGS)
    return out, err


def _link_target(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:  # (EINVAL: the folder's own log; ENOENT: none)
        return None


def _open(request: LaunchRequest, log: str, output: OutputFile) -> None:
    flags = _OPEN | (os.O_TRUNC if output.emptied else 0)
    try:
        os.close(os.open(output.path, flags, 0o666))  # 0666 less the umask, as sh's `>` makes
    except OSError as e:
        why, todo = e.strerror or str(e), "make its folder exist and writable"
        if e.errno == errno.ENXIO:
            why, todo = "a named pipe that no program reads", "start its reader"
        raise SpawnError(
            f"cannot open {output.path}, the file its {log.removesuffix('.log')} goes to: "
            f"{why}; {todo}, then `gpuherd retry {request.job_id}`"
        ) from e


def _link(target: str, link: str) -> None:
    """`link` -> `target`, in place of what is there (a rerun's log, in `gpuherd run`)."""
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(link)
        os.symlink(target, link)
    except OSError as e:
        raise SpawnError(f"cannot link {link} to {target}: {e.strerror or e}") from e
