"""Where a job's and an attempt's folders are, and the key that marks an attempt's processes."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuherd.core.log_names import FOLDER_LOGS
from gpuherd.core.model import Job
from gpuherd.core.output_files import Files, recorded_or_named
from gpuherd.home_id import home_id as id_of_home
from gpuherd.home_id import path_digest


@dataclass(frozen=True)
class Layout:
    """Where each job's and attempt's folder lives.

    The daemon keeps `jobs/<id>/attempt-<n>/`; the one-shot runner names job folders the way
    its users expect (`job_0`, `job_1`, …) and runs attempt 1 in the job's folder itself.
    """

    root: Path
    prefix: str = ""
    count_from_zero: bool = False
    """Number job folders from 0 (the runner, as gpu-hog does); else by job id."""
    first_attempt_in_job_dir: bool = False
    home_id: str = ""
    """The first part of every attempt key: the home's id, kept in it (home_id.py: the same
    after a restart, and after the home moved), or a digest of a `gpuherd run`'s own
    temporary folder; another home's or run's jobs never share it."""
    one_shot: bool = False
    """A `gpuherd run`'s: no daemon holds its jobs once it ends, so what a job's message
    advises is a rerun (--skip-succeeded), never `gpuherd retry ID`."""
    daemon: tuple[str, str | None] | None = None
    """A daemon's home and its GPUHERD_SOCKET (None: none set): its jobs get them, so that
    `gpuherd` and gpuherd.connect() in a job reach it (jobfiles.job_env). None: a run's."""

    @classmethod
    def for_home(cls, home: Path, socket: str | None = None) -> Layout:
        return cls(home / "jobs", home_id=id_of_home(home), daemon=(str(home), socket or None))

    @classmethod
    def for_run(cls, output_dir: Path, prefix: str, state_dir: Path) -> Layout:
        return cls(
            output_dir,
            prefix,
            count_from_zero=True,
            first_attempt_in_job_dir=True,
            home_id=path_digest(state_dir),
            one_shot=True,
        )

    def attempt_key(self, job_id: int, attempt: int) -> str:
        """What every process of this attempt carries in KEY_VARIABLE: unique to one attempt
        of one job of one home, wherever its folder is (executors/local_escaped.py)."""
        return f"{self.home_id}:{job_id}:{attempt}"

    def job_dir(self, job: Job) -> Path:
        return _folder(self, job.id, job.spec.folder)

    def attempt_dir(self, job: Job, attempt: int) -> Path:
        return _attempt_folder(self, job.id, job.spec.folder, attempt)

    def log_file(self, job: Job, attempt: int, stream: str, recorded: Files | None) -> Path:
        """The file an attempt's `stream` (stdout, stderr) is in: the one of the user's
        choosing (--output, --error), else the attempt folder's log, as the attempt recorded
        it (`recorded`: its row's `files`; None for one that recorded none, or has not begun,
        where the job's files as they are now are the only record). Readers open this, not
        the folder's link to it: a link in a folder the job can write is never followed."""
        files = recorded_or_named(job.spec, job.id, attempt, recorded)
        # (an absolute file of the user's choosing replaces the folder it is joined to)
        return self.attempt_dir(job, attempt) / files[stream == "stderr"]


# A running job's folders are asked for about ten times (spawn, env, files, watch): building a
# Path each time was a noticeable part of the engine's work per job.
@lru_cache(maxsize=4096)
def _folder(layout: Layout, job_id: int, named: str | None) -> Path:
    return Path(_folder_text(layout, job_id, named))


@lru_cache(maxsize=4096)
def _attempt_folder(layout: Layout, job_id: int, named: str | None, attempt: int) -> Path:
    if attempt == 1 and layout.first_attempt_in_job_dir:
        return _folder(layout, job_id, named)  # the job's own: one Path for both
    return Path(attempt_path(layout, job_id, named, attempt))


def attempt_path(layout: Layout, job_id: int, named: str | None, attempt: int) -> str:
    """An attempt's folder as text, uncached: for a pass over a whole queue (a restart's
    look for attempts the database does not know), where a Path per job cost ~9 us."""
    if attempt == 1 and layout.first_attempt_in_job_dir:
        return _folder_text(layout, job_id, named)
    return os.path.join(_folder_text(layout, job_id, named), f"attempt-{attempt}")


ListedPaths = Callable[[Job, Files | None], tuple[str, dict[str, str]]]


def listed_paths(layout: Layout) -> ListedPaths:
    """What gives a job's `job_dir` and `log_files` (the stdout and stderr of its latest
    attempt, or of its first before it starts) as `show` names them (Layout.job_dir,
    Layout.log_file), from the job and its latest attempt's files as recorded (None: none;
    Store.latest_attempt_files), so a script need not guess where a job's logs are. `ls
    --json` names them for every job it lists: built as text from the root's, made once, at
    ~1.5 us a job (a Path each, as `show` builds them, cost ~1 s more per 100,000 jobs)."""
    root = os.path.join(layout.root, layout.prefix)
    first_number = 1 if layout.count_from_zero else 0
    in_job_dir = layout.first_attempt_in_job_dir
    own_out, own_err = FOLDER_LOGS

    def paths(job: Job, recorded: Files | None) -> tuple[str, dict[str, str]]:
        number, spec = job.attempt or 1, job.spec
        if spec.folder and _unusual(spec.folder):  # (made a Path: `show`'s own, as rare)
            logs = {s: str(layout.log_file(job, number, s, recorded)) for s in STREAMS}
            return str(layout.job_dir(job)), logs
        named = spec.folder and (spec.folder.rstrip("/") or "/")  # as a Path has it
        job_dir = named or f"{root}{job.id - first_number}"
        stem = job_dir.rstrip("/")  # ("" for a folder of `/`: no `//` below)
        folder = stem if number == 1 and in_job_dir else f"{stem}/attempt-{number}"
        if recorded is None and not spec.output and not spec.error:  # most jobs: a third faster
            return job_dir, {"stdout": f"{folder}/{own_out}", "stderr": f"{folder}/{own_err}"}
        out, err = recorded_or_named(spec, job.id, number, recorded)
        # (an absolute file of the user's choosing replaces the folder it is joined to)
        return job_dir, {"stdout": _joined(folder, out), "stderr": _joined(folder, err)}

    return paths


STREAMS = ("stdout", "stderr")


def _unusual(folder: str) -> bool:
    """Whether a Path would name `folder` otherwise than as written, but for a `/` at its end:
    a sweep's is normalised, one given through the HTTP API is as written (`a//b`, `a/./b`)."""
    return "//" in folder or "/./" in f"/{folder}/"


def _joined(folder: str, name: str) -> str:
    """os.path.join(folder, name) for a folder without a trailing `/`, at a third of its cost."""
    return name if name[:1] == "/" else f"{folder}/{name}"


def _folder_text(layout: Layout, job_id: int, named: str | None) -> str:
    if named:  # a sweep point's results folder, named by the user's sweep
        return named
    number = job_id - 1 if layout.count_from_zero else job_id
    return os.path.join(layout.root, f"{layout.prefix}{number}")
