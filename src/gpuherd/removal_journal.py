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
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
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


def leftovers(job: Job, layout: Layout, home: Path) -> list[Path]:
    """What a removal of `job` deletes once committed: its folder (a sweep's results folder
    is the user's: kept), and the staged files of a task that never ran."""
    found = [] if job.spec.folder else [layout.job_dir(job)]
    if job.attempt == 0:  # a task's large parameters or pickled function, still waiting
        # for its first run (deferred: the worker's module and argparse, ~1 ms of every
        # `gpuherd run`'s start)
        from gpuherd.worker import staged_files

        found += staged_files(job.spec.command, paths.task_params(home))
    return found


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
        finally:
            os.close(fd)
    except OSError as exc:
        log.warning("removing jobs: their folders are not noted (%s): a crash may leave them", exc)
        return None
    return path


def delete(path: Path) -> None:
    """Delete a removed job's folder (or a staged file of a task that never ran)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


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
    for journal in journals:
        folders = _read(journal)
        known = store.get_jobs(sorted({job_id for job_id, _ in folders}))
        gone = [where for job_id, where in folders if job_id not in known and where.exists()]
        for where in gone:
            delete(where)
        if gone:
            log.info(
                "a removal of jobs cut off (the daemon stopped meanwhile): %s of removed jobs "
                "deleted",
                plural(len(gone), "folder"),
            )
        deleted += len(gone)
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
