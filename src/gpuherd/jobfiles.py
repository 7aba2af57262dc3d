"""A job's folder on disk: paths, the job's environment, job.json and the outcome markers."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from gpuherd.core.model import Attempt, Job, Outcome
from gpuherd.errors import Forbidden

TAIL_BYTES = 64 * 1024


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

    @classmethod
    def for_home(cls, home: Path) -> Layout:
        return cls(home / "jobs")

    @classmethod
    def for_run(cls, output_dir: Path, prefix: str) -> Layout:
        return cls(output_dir, prefix, count_from_zero=True, first_attempt_in_job_dir=True)

    def job_dir(self, job: Job) -> Path:
        if job.spec.folder:  # a sweep point's results folder, named by the user's sweep
            return Path(job.spec.folder)
        number = job.id - 1 if self.count_from_zero else job.id
        return self.root / f"{self.prefix}{number}"

    def attempt_dir(self, job: Job, attempt: int) -> Path:
        if attempt == 1 and self.first_attempt_in_job_dir:
            return self.job_dir(job)
        return self.job_dir(job) / f"attempt-{attempt}"


def prepare(folder: Path) -> None:
    """Create an attempt's folder, leaving no marker of an earlier run in it."""
    try:
        folder.mkdir(parents=True)
    except FileExistsError:  # a rerun into the same folder: clear what the last run left
        for name in ("SUCCESS", "FAILURE", "exit_status", "pid"):
            (folder / name).unlink(missing_ok=True)


def job_env(layout: Layout, job: Job, attempt: Attempt) -> Mapping[str, str]:
    """The submitter's environment, their --env pairs, then gpuherd's own variables."""
    env = dict(job.spec.env)
    env.update(job.spec.env_overrides)
    env.setdefault("MPLBACKEND", "Agg")  # jobs have no screen
    env.pop("GPUHERD_TOKEN", None)  # a daemon secret never reaches a job
    env.update(
        CUDA_DEVICE_ORDER="PCI_BUS_ID",
        CUDA_VISIBLE_DEVICES=",".join(str(i) for i in attempt.gpus),
        GPUHERD_JOB_ID=str(job.id),
        GPUHERD_ATTEMPT=str(attempt.number),
        GPUHERD_JOB_DIR=str(layout.job_dir(job)),
        GPUHERD_ATTEMPT_DIR=attempt.dir,
    )
    return env


def record_start(layout: Layout, job: Job, attempt: Attempt, pid: int) -> None:
    """Write attempt.json in the attempt's folder and job.json (the latest attempt) beside it."""
    info = {
        "id": job.id,
        "name": job.spec.name,
        "project": job.spec.project,
        "sweep": job.spec.sweep,
        "git": job.spec.git,
        "command": job.spec.command,
        "cwd": job.spec.cwd,
        "env_overrides": dict(job.spec.env_overrides),
        "attempt": attempt.number,
        "gpus": list(attempt.gpus),
        "gpu_uuids": list(attempt.gpu_uuids),
        "host": attempt.host,
        "pid": pid,
        "started_at": attempt.started_at,
    }
    for path in _info_files(layout, job, Path(attempt.dir)):
        _write_json(path, info)


def record_end(layout: Layout, job: Job, outcome: Outcome, ended_at: float) -> None:
    """Add the end to attempt.json and job.json; mark both folders SUCCESS or FAILURE."""
    end = {
        "ended_at": ended_at,
        "outcome": outcome.kind.value,
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "message": outcome.message,
    }
    folder = layout.attempt_dir(job, job.attempt)
    for path in _info_files(layout, job, folder):
        try:
            info = json.loads(path.read_text())
        except (OSError, ValueError):
            info = {"id": job.id, "command": job.spec.command, "attempt": job.attempt}
        if info.get("attempt") == job.attempt:
            info.update(end)
            _write_json(path, info)
    marker, other = ("SUCCESS", "FAILURE") if outcome.success else ("FAILURE", "SUCCESS")
    for target in {folder, layout.job_dir(job)}:
        try:
            (target / other).unlink(missing_ok=True)  # never both markers in one folder
            (target / marker).touch()
        except OSError:
            pass  # the folder may be gone or read-only; the database still has the outcome


def _info_files(layout: Layout, job: Job, attempt_folder: Path) -> list[Path]:
    job_file = layout.job_dir(job) / "job.json"
    if attempt_folder == layout.job_dir(job):
        return [job_file]
    return [attempt_folder / "attempt.json", job_file]


def open_log(path: Path) -> BinaryIO:
    """Open a job's log for reading, refusing a symbolic link in its place.

    A job can write to its own folder: a link planted there must not make the daemon (which
    serves logs over its API and dashboard) read any file it can read, such as /etc/shadow.
    """
    if path.parent.is_symlink():  # the attempt's folder, swapped for a link by the job
        raise Forbidden(f"{path.parent} is a symbolic link, not the attempt's folder: not served")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Forbidden(f"{path} is a symbolic link, not the job's log: not served") from None
        raise
    return os.fdopen(fd, "rb")


def tail(path: Path, max_bytes: int = TAIL_BYTES) -> str:
    try:
        with open_log(path) as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - max_bytes))
            return f.read().decode(errors="replace")
    except (OSError, Forbidden):
        return ""


def tail_lines(path: Path, lines: int) -> list[str]:
    return tail(path).splitlines()[-lines:]


def _write_json(path: Path, data: Mapping[str, object]) -> None:
    try:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        tmp.replace(path)
    except OSError:
        pass  # informational copy only; the database is the source of truth
