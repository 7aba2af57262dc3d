"""The folders `gpuherd rm` (and `clean`) is about to delete, noted in the daemon's home until
they are gone, so a daemon killed in between (kill -9, a power cut) leaves none behind.

A removal commits the jobs' rows first, then deletes their folders (service_jobs.remove): a
folder deleted before the commit would leave a job without its logs if the commit never came.
A crash after the commit, amid the deletions (`clean` of thousands of jobs takes seconds),
left the folders not deleted yet, with their logs, belonging to no job, for good: nothing
lists them, and no later `rm` or `clean` can name them. So the folders are noted first, in
`removing/<id>.json`, and the note goes once they are deleted. A note found at the daemon's
start is of a removal cut off: each folder it names whose job the database does not have
(the commit came) is deleted; one whose job it has (it never came) stays.

A folder that cannot be deleted (a file in it made immutable, a disk gone read-only) stays
noted, and each start tries again until it is gone (or deleted by hand): the removal said
"removed" and left it, logs and all, where nothing named it any more. The jobs' rows go all
the same, committed first as above; the removal says which folders were left and why
(delete_committed), and is a failure (exit 1), since what the user asked is not all done.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import shlex
import shutil
import stat
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd import paths
from gpuherd.core.units import plural

if TYPE_CHECKING:
    from gpuherd.core.model import Job
    from gpuherd.layout import Layout
    from gpuherd.store import Store

log = logging.getLogger("gpuherd.daemon")

JOURNAL_DIR = "removing"
"""In the daemon's home: one file per removal whose folders are not all deleted yet."""


def leftovers(job: Job, layout: Layout, home: Path) -> list[tuple[int, Path]]:
    """What a removal of `job` deletes once committed, as (its id, path): its folder (a
    sweep's results folder is the user's: kept), and the staged files of a task that never
    ran."""
    found = [] if job.spec.folder else [layout.job_dir(job)]
    # A task's large parameters or pickled function, still waiting for its first run.
    if job.attempt == 0 and _may_name_staged(job.spec.command):
        found += staged_files(job.spec.command, paths.task_params(home))
    return [(job.id, path) for path in found]


_STAGED_FLAGS = ("--params-file", "--function-file")
"""The words before a staged file that staged_files looks for in a command."""
_QUOTING_TAKEN_OUT = str.maketrans("", "", "'\"\\")


def _may_name_staged(command: str) -> bool:
    """Whether `command` may hold a word of _STAGED_FLAGS, as shlex splits it: only then is it
    split (~9 us a job when idle: 0.4 s of an `rm` of 40,000 queued points of `true {i}`). A
    shell word is its text with quotes and backslashes taken out, so a command naming none,
    those taken out, holds no such word."""
    text = command.translate(_QUOTING_TAKEN_OUT)
    return any(flag in text for flag in _STAGED_FLAGS)


def staged_files(command: str, folder: Path) -> list[Path]:
    """The `--params-file` and `--function-file` in `folder` that a task's command names: a
    job removed before it ever ran leaves them behind (its first run would have moved them,
    worker.read_params_file). A sweep's `--shared-function-file` is not one of them: other
    points read it."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [
        Path(value)
        for flag, value in itertools.pairwise(words)
        if flag in _STAGED_FLAGS and _staged_in(value, folder)
    ]


def _staged_in(value: str, folder: Path) -> bool:
    """Whether `value` names a regular file directly in `folder` (task-params/), by a name
    of its own, found so by real paths: the removal deletes it. A command is anyone's text:
    `--params-file $GPUHERD_HOME/task-params/..` passed a test of `Path(value).parent`
    (pathlib keeps `..`), and `rm` of that job deleted the whole home, herd.db and all."""
    path = Path(value)
    if ".." in path.parts or not path.is_absolute():
        return False
    try:  # (lstat: a link, even to a staged file, is not one: what it names is not deleted)
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
    except OSError:  # gone already (or not reachable): nothing to delete
        return False
    return os.path.realpath(path.parent) == os.path.realpath(folder)


def note(home: Path, folders: Sequence[tuple[int, Path]]) -> Path | None:
    """Note the folders of `(job id, path)` before the removal commits; the note's path, or
    None (nothing to note, or a home that cannot hold it: the removal goes on all the same,
    and a line in the log says a crash may leave them)."""
    if not folders:
        return None
    folder = home / JOURNAL_DIR
    path = folder / f"{uuid.uuid4().hex}.json"
    data = json.dumps([[job_id, str(where)] for job_id, where in folders]).encode()
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            while data:
                data = data[os.write(fd, data) :]
        except OSError:  # (a full disk): not left behind empty, or cut short
            path.unlink(missing_ok=True)
            raise
        finally:
            os.close(fd)
    except OSError as exc:
        log.warning("removing jobs: their folders are not noted (%s): a crash may leave them", exc)
        return None
    return path


def delete(path: Path) -> str | None:
    """Delete a removed job's folder (or a staged file of a task that never ran): why it is
    still there, or None once it is gone."""
    if path.is_dir() and not path.is_symlink():
        # Whatever can go goes; only a folder left is asked why, by a second pass that fails
        # (rmtree's onerror is deprecated from Python 3.12, and its onexc is new there).
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return None
        try:
            shutil.rmtree(path)
        except OSError as exc:
            return exc.strerror or str(exc)
        return None
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def delete_committed(
    home: Path, journal: Path | None, folders: Sequence[tuple[int, Path]]
) -> dict[int, str]:
    """Delete the folders of `(job id, path)` of a removal just committed, and forget its
    note; what could not be deleted stays noted (the daemon's next start tries again). What
    was left, by job id, in a line naming the job (_left_behind)."""
    left = [(job_id, where, why) for job_id, where in folders if (why := delete(where))]
    noted = note(home, [(job_id, where) for job_id, where, _ in left]) if left else None
    if left and noted is None:  # (the first note, if any, still names them: it stays)
        noted = journal
    else:
        forget(journal)
    if left:  # (one line for a `clean` of thousands)
        _, where, why = left[0]
        log.warning(
            "removing jobs: %s could not be deleted, e.g. %s (%s)",
            plural(len(left), "folder"),
            where,
            why,
        )
    by_job: dict[int, list[tuple[Path, str]]] = {}
    for job_id, where, why in left:
        by_job.setdefault(job_id, []).append((where, why))
    return {
        job_id: _left_behind(job_id, paths, noted is not None) for job_id, paths in by_job.items()
    }


def _left_behind(job_id: int, left: Sequence[tuple[Path, str]], retried: bool) -> str:
    """What a removal of job `job_id` says of its folders `left` (path, why) that it could
    not delete: where they are, why, and what to do; `retried`: noted for the next start."""
    said = " nor ".join(
        f"its {'folder' if where.is_dir() else 'file'} {where} ({why})" for where, why in left
    )
    by_hand = f"fix that and delete {'it' if len(left) == 1 else 'them'}: rm -rf "
    by_hand += " ".join(shlex.quote(str(where)) for where, _ in left)
    if retried:
        then = f"the daemon tries again at its next start, or {by_hand}"
    else:
        then = f"{by_hand} (nothing noted them for the daemon to try again)"
    return f"job {job_id}: removed, but not {said}: {then}"


def forget(journal: Path | None) -> None:
    """The removal's folders are deleted: forget the note."""
    if journal is not None:
        with contextlib.suppress(OSError):
            journal.unlink()


def finish_cut_off(home: Path, store: Store) -> int:
    """At the daemon's start: delete the folders noted by removals a crash cut off, of the
    jobs the database no longer has; how many were deleted."""
    try:
        journals = sorted((home / JOURNAL_DIR).glob("*.json"))
    except OSError:
        return 0
    deleted = 0
    for journal in journals:  # (each start tries again, until the folder is gone)
        folders = _read(journal)
        known = store.get_jobs(sorted({job_id for job_id, _ in folders}))
        gone = [(job_id, where) for job_id, where in folders if job_id not in known]
        stuck, done = [], 0
        for job_id, where in gone:
            if not os.path.lexists(where):  # (deleted by hand since)
                continue
            if why := delete(where):
                log.warning(
                    "removed job %d: %s still cannot be deleted (%s): tried again at the next "
                    "start (or delete it by hand)",
                    job_id,
                    where,
                    why,
                )
                stuck.append((job_id, where))
            else:
                done += 1
        deleted += done
        if done:
            log.info(
                "a removal of jobs cut off (the daemon stopped meanwhile, or the folders could "
                "not be deleted then): %s of removed jobs deleted",
                plural(done, "folder"),
            )
        # Still there: noted anew (this note, kept, if that fails), never forgotten undeleted.
        if not stuck or note(home, stuck) is not None:
            forget(journal)
    return deleted


def _read(journal: Path) -> list[tuple[int, Path]]:
    """The (job id, folder) pairs a note names; none from one cut short or not ours."""
    try:
        value = json.loads(journal.read_bytes())
    except (OSError, ValueError):
        return []
    if not isinstance(value, list):
        return []
    return [
        (item[0], Path(item[1]))
        for item in value
        if isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], int)
        and isinstance(item[1], str)
        and os.path.isabs(item[1])
    ]
