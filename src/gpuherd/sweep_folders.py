"""A sweep point's folder at submit: its params.json written, and what its previous run left
(logs, markers, metrics) moved to previous-runs/<n>/ so the new run starts clean.

The daemon writes these for every point it submits (sweeps.py), before any job starts, on a
worker thread (write_points): 20,000 points took 7 s, the daemon's loop blocked meanwhile.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd.core.model import Attempt, Job
from gpuherd.core.sweep import Point, SweepSpec
from gpuherd.core.sweep_values import json_safe
from gpuherd.core.text import ascii_digits
from gpuherd.errors import HerdError
from gpuherd.own_files import write_whole
from gpuherd.sweep_files import METRICS_FILE, PARAMS_FILE, PREVIOUS_DIR, read_json
from gpuherd.worker import RESULT_FILE

if TYPE_CHECKING:
    from gpuherd.sweep_journal import FolderJournal

RUN_FILES = ("job.json", "SUCCESS", "FAILURE", METRICS_FILE, RESULT_FILE)
"""With the attempt-N folders: what a point's run leaves; moved aside when it runs again
(with a copy of params.json). A task's result.json too: its job's `result()` reads it there
(pyapi_result.py), as the next run's worker would remove it."""


WRITE_DELAY = "GPUHERD_TEST_SWEEP_WRITE_DELAY"
"""A test knob, not for users: seconds to wait after each point's params.json, so a test can
kill the daemon while a sweep's folders are written (sweep_journal.py). Read at each sweep: a
daemon forked from the tests' fork server imported this module before the test set it."""


@dataclass
class NewFolders:
    """The folders write_points made that were not there before (new points', and their
    results folder when it was missing too), each after its parent; each noted in `journal`
    before it is made, if given."""

    paths: list[str] = field(default_factory=list)
    journal: FolderJournal | None = None

    def add(self, paths: list[str]) -> None:
        if self.journal is not None:
            self.journal.note(paths)
        self.paths.extend(paths)

    def remove(self) -> None:
        """Remove them again, each with the params.json written in it, for a sweep refused
        after its folders were written: it leaves none behind. A previous run that
        write_params moved aside stays in previous-runs/<n>/ (nothing of it is lost, and the
        next submission of the point would move it there all the same)."""
        for path in reversed(self.paths):  # the deepest first
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(path, PARAMS_FILE))
            with contextlib.suppress(OSError):  # (a write cut short removes its own)
                os.unlink(os.path.join(path, PARAMS_FILE + ".tmp"))
            with contextlib.suppress(OSError):  # not empty: another wrote in it; it stays
                os.rmdir(path)


def write_points(
    spec: SweepSpec,
    points: Sequence[Point],
    git: str | None,
    journal: FolderJournal | None = None,
) -> NewFolders:
    """write_params for each point (on a worker thread: it blocks on the disk); the folders
    it made new (noted in `journal` first). A failed write removes those again, then raises
    its error (write_params' HerdError)."""
    made = NewFolders(journal=journal)
    delay = float(os.environ.get(WRITE_DELAY) or 0)
    try:
        for point in points:
            write_params(spec, point, git, made)
            if delay:
                time.sleep(delay)
    except Exception:  # (any: the journal of the folders is forgotten after, sweeps.py)
        made.remove()
        raise
    return made


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_params(
    spec: SweepSpec, point: Point, git: str | None, made: NewFolders | None = None
) -> None:
    """params.json in the point's folder; clear what the point's previous run left. The
    folders made new are added to `made`."""
    made = NewFolders() if made is None else made
    folder = point.run_dir
    record = {
        "sweep": spec.name,
        "index": point.index,
        "folder": point.folder,
        "params": json_safe(dict(point.params)),
        "varying": list(point.varying),
        "command": point.command,
        "git": git,
        "submitted_at": time.time(),
    }
    path = os.path.join(folder, PARAMS_FILE)
    try:
        try:
            # Noted before it is made (a crash right after the mkdir finds it noted), only
            # if it is not there: a folder found there is never the journal's to remove.
            journal = made.journal
            if journal is not None and not os.path.lexists(folder):
                journal.note([folder])
            os.mkdir(folder)  # a new point's folder: no previous run to move aside
            made.paths.append(folder)
        except FileExistsError:
            move_previous_run(folder)
        except FileNotFoundError:
            _make_with_parents(folder, made)
        # A new file, never one found there: in a results folder others can write, a link
        # planted as params.json.tmp would have this write go to a file of the user's own.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path + ".tmp")
        fd = os.open(path + ".tmp", _NEW_FILE, 0o666)
        try:
            write_whole(fd, _record_text(record).encode())
        finally:
            os.close(fd)
        os.replace(path + ".tmp", path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path + ".tmp")
        raise HerdError(_unwritable(path, exc)) from None


def _unwritable(path: str, exc: OSError) -> str:
    """Why a point's params.json could not be written, and what to do: a full disk is no
    folder to choose another of for want of rights (as it was said)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"cannot write {path}: its disk is full ({exc.strerror}): free some space on it, "
            "or choose a results folder on another disk (--results-dir); nothing was submitted"
        )
    why = exc.strerror or exc
    return f"cannot write {path}: {why}; choose a results folder you can write (--results-dir)"


def _make_with_parents(folder: str, made: NewFolders) -> None:
    """`folder` and its missing parents (the results folder, the first point's); each added
    to `made` before it is made, so a failure half way removes what was made."""
    missing = []
    path = folder
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        missing.append(path)
        path = os.path.dirname(path)
    made.add(list(reversed(missing)))
    os.makedirs(folder, exist_ok=True)


def _record_text(record: dict[str, Any]) -> str:
    """A key a line, each value on its own line as JSON: as readable as `indent=2` for these
    few keys, and made by json's C encoder (indent uses the Python one: 5,000 records took
    a second)."""
    lines = (f"  {json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in record.items())
    return "{\n" + ",\n".join(lines) + "\n}\n"


def move_previous_run(folder: str) -> None:
    """Move the logs, markers and metrics of the point's last run to previous-runs/<n>/, with
    a copy of the params.json it ran with, so the new run starts clean (logs are appended to)
    and nothing of the old one is lost. (Also as a job starts in a folder where a run herd.db
    does not know ended: unknown_ended.set_aside.)
    (One listing of the folder: a stat for each file a run may leave, 5,000 times, was most
    of a big sweep's resubmission.)"""
    names = set(os.listdir(folder))
    old = [name for name in RUN_FILES if name in names]
    old += sorted(
        n for n in names if n.startswith("attempt-") and os.path.isdir(os.path.join(folder, n))
    )
    if not old:
        return
    archive = Path(folder) / PREVIOUS_DIR
    number = 1 + max((int(p.name) for p in archive.glob("*") if ascii_digits(p.name)), default=0)
    target = archive / str(number)
    target.mkdir(parents=True)
    for name in old:
        os.rename(os.path.join(folder, name), target / name)
    if PARAMS_FILE in names:  # the values that run was made with (rewritten for the new run)
        shutil.copyfile(
            os.path.join(folder, PARAMS_FILE), target / PARAMS_FILE, follow_symlinks=False
        )


def own_run(folder: Path, job_id: int) -> Path:
    """Where job `job_id`'s run left its files: its folder, unless a later job's run has it
    now (its job.json names another job, or none yet), and previous-runs/<n>/ holds one
    whose job.json names this job; else the folder, as before."""
    if named_job(folder) == job_id:
        return folder
    try:
        earlier = [p for p in (folder / PREVIOUS_DIR).iterdir() if ascii_digits(p.name)]
    except OSError:
        return folder
    for run in sorted(earlier, key=lambda p: int(p.name), reverse=True):
        if named_job(run) == job_id:
            return run
    return folder


def named_job(run: Path) -> Any:
    """The id the job.json of `run` (a point's folder, or one of its previous-runs/) names:
    whose run it holds; None where it has none."""
    record = read_json(run / "job.json")
    return record.get("id") if isinstance(record, dict) else None


def with_own_run(job: Job) -> Job:
    """The job, its folder its own run's (own_run) where a later job's run of its sweep point
    has the point's folder now: its logs are read there. `gpuherd log` of a point's earlier
    job printed the later job's output (its stderr, of a point resubmitted as it failed, was
    the new run's, empty: the traceback it failed with in previous-runs/<n>/, read by none)."""
    folder = job.spec.folder
    if not folder or not job.attempt:  # (not a sweep point's, or not run: nothing moved)
        return job
    own = own_run(Path(folder), job.id)
    return job if own == Path(folder) else replace(job, spec=replace(job.spec, folder=str(own)))


def in_own_run(attempt: Attempt, job: Job, ran: Job) -> Attempt:
    """The attempt, its folder where its run is now: in the previous-runs/<n>/ with_own_run
    found (`ran`), where a later run of its sweep point has the point's folder. Its row keeps
    the folder it started in, the later run's now: `show --json`'s `attempts[].dir` named
    the later job's attempt, and its logs, there no longer, looked written to files of the
    user's choosing (`--output`), by `show` and the dashboard (core/log_names.chosen_file)."""
    old, new = job.spec.folder, ran.spec.folder
    if not old or not new or old == new or os.path.dirname(attempt.dir) != old:
        return attempt
    return replace(attempt, dir=os.path.join(new, os.path.basename(attempt.dir)))
