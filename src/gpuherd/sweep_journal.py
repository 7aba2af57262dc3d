"""The point folders a sweep's submission makes, noted in the daemon's home until its jobs are
stored, so a daemon killed in between (kill -9, a power cut) leaves none behind.

The daemon writes a sweep's folders and their params.json before it stores the jobs
(sweeps.py): a sweep of 10,000 points takes seconds, and a crash meanwhile left the folders
made so far, each with a params.json, belonging to no job, until the same sweep was submitted
again (which took them as its new points), or for good. Each folder a submission is about to
make is noted first, one JSON line in `sweep-folders/<id>.jsonl`, written at once (a crash
loses nothing the kernel was given); the file goes once the jobs are stored, or the folders
removed. A file found at the daemon's start is of a submission that never committed: each
folder it names that no job in the database has is removed as a refused sweep's are
(sweep_folders.NewFolders): its params.json, if it names that sweep, then the folder if empty.
A folder that was there before the submission is never noted, so never removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gpuherd.core.units import plural
from gpuherd.sweep_files import PARAMS_FILE, read_json

if TYPE_CHECKING:
    from gpuherd.store import Store

log = logging.getLogger("gpuherd.sweeps")

JOURNAL_DIR = "sweep-folders"
"""In the daemon's home: one file per sweep submission writing its folders."""
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC


class FolderJournal:
    """The folders one submission of sweep `sweep` makes, noted before each is made."""

    def __init__(self, home: Path, sweep: str) -> None:
        self.sweep = sweep
        folder = home / JOURNAL_DIR
        folder.mkdir(mode=0o700, exist_ok=True)
        self.path = folder / f"{uuid.uuid4().hex}.jsonl"
        self._fd: int | None = os.open(self.path, _FLAGS, 0o600)
        self._write([json.dumps({"sweep": sweep})])

    def note(self, paths: Iterable[str]) -> None:
        """Note `paths`, folders about to be made (one write: a line cut off by a crash is
        the last, and names a folder not made yet)."""
        self._write([json.dumps(path) for path in paths])

    def _write(self, lines: list[str]) -> None:
        if self._fd is not None and lines:
            data = ("\n".join(lines) + "\n").encode()
            while data:
                data = data[os.write(self._fd, data) :]

    def close(self) -> None:
        """The submission is done with its folders (its jobs stored, or its folders removed):
        forget them."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def journal_for(home: Path, sweep: str) -> FolderJournal | None:
    """A journal of the folders a submission of `sweep` makes; None (and a line in the log)
    if the home cannot hold one: the sweep is submitted all the same."""
    try:
        return FolderJournal(home, sweep)
    except OSError as exc:
        log.warning("sweep %r: its folders are not noted (%s): a crash may leave them", sweep, exc)
        return None


def forget(journal: FolderJournal | None) -> None:
    """The submission is done with its folders: forget them (FolderJournal.close)."""
    if journal is not None:
        journal.close()


def remove_unsubmitted(home: Path, store: Store) -> int:
    """At the daemon's start: remove the folders noted by submissions that never stored
    their jobs, but those a job of the database has; how many were removed."""
    folder = home / JOURNAL_DIR
    try:
        journals = sorted(folder.glob("*.jsonl"))
    except OSError:
        return 0
    if not journals:
        return 0
    owned = store.job_folders()
    removed = 0
    for journal in journals:
        sweep, paths = _read(journal)
        # The deepest first: a point's folder before the results folder made for it.
        left = sorted(set(paths) - owned, key=lambda p: p.count("/"), reverse=True)
        gone = sum(_remove(path, sweep) for path in left)
        journal.unlink(missing_ok=True)
        log.info(
            "sweep %r: a submission cut off before its jobs were stored (the daemon "
            "stopped meanwhile): %s it made removed",
            sweep,
            plural(gone, "folder"),
        )
        removed += gone
    return removed


def _read(journal: Path) -> tuple[str | None, list[str]]:
    """The sweep a journal is of, and the folders it names (a line cut off: not made)."""
    sweep: str | None = None
    paths: list[str] = []
    try:
        lines = journal.read_text(errors="replace").splitlines()
    except OSError:
        return None, []
    for number, line in enumerate(lines):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if number == 0 and isinstance(value, dict):
            sweep = value.get("sweep")
        elif isinstance(value, str) and os.path.isabs(value):
            paths.append(value)
    return sweep, paths


def _remove(path: str, sweep: str | None) -> int:
    """Remove the params.json the submission wrote in `path` (only one naming its sweep),
    then the folder if that left it empty; 1 if the folder went."""
    params = os.path.join(path, PARAMS_FILE)
    with contextlib.suppress(OSError):
        os.unlink(params + ".tmp")
    recorded = read_json(params)
    if isinstance(recorded, dict) and recorded.get("sweep") == sweep:
        with contextlib.suppress(OSError):
            os.unlink(params)
    try:
        os.rmdir(path)
    except OSError:
        return 0  # not empty (a results folder with others' points), or gone already
    return 1
