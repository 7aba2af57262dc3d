"""A local job's output into files of the user's choosing (`--output`, `--error`).

The daemon opens each file before the job's shell starts (creating it, and the folders its
placeholders name, or emptying it for the first attempt that writes it): one that cannot be
opened fails the attempt with its reason, where the shell's own redirection would fail with
its message in no log at all. Then the attempt folder's `stdout.log` and `stderr.log` become
links to the files, and the shell's `>>` redirections follow them: every reader of the
folder's logs (`gpuherd log`, the stall check, the out-of-memory check) finds the output
where it always was. Both streams into one
file are two appending descriptions of it, as `2>&1` is one: neither overwrites the other.
"""

from __future__ import annotations

import contextlib
import errno
import os

from gpuherd.core.log_names import FOLDER_LOGS
from gpuherd.core.output_files import Files, OutputFile, folders_to_make
from gpuherd.executors.base import LaunchRequest, SpawnError
from gpuherd.output_paths import planted_link

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
            _refuse_planted_link(request, log, output)  # (before a folder is made through it)
            _make_folders(request, log, output)
            _refuse_planted_link(request, log, output)
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


def _make_folders(request: LaunchRequest, log: str, output: OutputFile) -> None:
    """Create the folders the file's placeholders named (`runs/7/` of `runs/%j/out.log`), as
    `mkdir -p` does, below the folder that had to exist at submission: SpawnError naming the
    folder, the cause and what to do if one cannot be."""
    if output.fixed is None:
        return
    stream = log.removesuffix(".log")
    try:
        folders = folders_to_make(output.fixed, output.path)
    except ValueError as e:  # (a job named `..` or `.`, in a file named by its %x)
        raise SpawnError(
            f"will not write {output.path}, the file its {stream} goes to: its name's part "
            f"{e} (from a placeholder, %x: the job's name) would leave {output.fixed}; "
            f"{_rename(request.job_id)}"
        ) from e
    for folder in folders:
        try:
            os.mkdir(folder, 0o777)  # (less the umask, as mkdir -p makes it)
        except FileExistsError:
            if os.path.isdir(folder):  # (an earlier attempt's, or another stream's)
                continue
            raise SpawnError(
                f"cannot create the folder {folder} for the file its {stream} goes to: a "
                f"file is in the way; move it, then `gpuherd retry {request.job_id}`"
            ) from None
        except OSError as e:
            todo = f"make {os.path.dirname(folder)} exist and writable, then `gpuherd retry "
            todo += f"{request.job_id}`"
            if e.errno == errno.ENAMETOOLONG:  # (a long name, as %x: retrying fails again)
                todo = _shorter(request.job_id)
            raise SpawnError(
                f"cannot create the folder {folder} for the file its {stream} goes to: "
                f"{e.strerror or e}; {todo}"
            ) from e


def _rename(job_id: int, which: str = "another") -> str:
    return (
        f"give the job {which} name: `gpuherd retry --hold {job_id}`, `gpuherd edit {job_id} "
        f"--name NAME`, `gpuherd release {job_id}`"
    )


def _shorter(job_id: int) -> str:
    """What to do about a path with a part longer than the file system takes (255 bytes on
    most), which a retry as it is would meet again: a long job name (%x) made it so."""
    return f"each part of a path holds at most 255 bytes: {_rename(job_id, 'a shorter')}"


def _refuse_planted_link(request: LaunchRequest, log: str, output: OutputFile) -> None:
    """SpawnError if the file's path goes through another user's symbolic link, planted
    since the submission (in a shared folder, under the name `%j` gives the next job)."""
    if problem := planted_link(output.path):
        raise SpawnError(
            f"will not write {output.path}, the file its {log.removesuffix('.log')} goes to: "
            f"{problem}; then `gpuherd retry {request.job_id}`"
        )


def _open(request: LaunchRequest, log: str, output: OutputFile) -> None:
    flags = _OPEN | (os.O_TRUNC if output.emptied else 0)
    try:
        os.close(os.open(output.path, flags, 0o666))  # 0666 less the umask, as sh's `>` makes
    except OSError as e:
        why, todo = e.strerror or str(e), "make its folder exist and writable"
        if e.errno == errno.ENXIO:
            why, todo = "a named pipe that no program reads", "start its reader"
        elif e.errno == errno.EISDIR:  # (`runs/%j/log` where runs/7/log is a folder)
            todo = "move that folder out of the way"
        todo += f", then `gpuherd retry {request.job_id}`"
        if e.errno == errno.ENAMETOOLONG:
            todo = _shorter(request.job_id)
        raise SpawnError(
            f"cannot open {output.path}, the file its {log.removesuffix('.log')} goes to: "
            f"{why}; {todo}"
        ) from e


def _link(target: str, link: str) -> None:
    """`link` -> `target`, in place of what is there (a rerun's log, in `gpuherd run`)."""
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(link)
        os.symlink(target, link)
    except OSError as e:
        raise SpawnError(f"cannot link {link} to {target}: {e.strerror or e}") from e
