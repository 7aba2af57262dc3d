"""A job's folder on disk: paths, the job's environment, job.json and the outcome markers."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from gpuherd.core.model import Attempt, Job, Outcome

TAIL_BYTES = 64 * 1024


def job_dir(home: Path, job_id: int) -> Path:
    return home / "jobs" / str(job_id)


def attempt_dir(home: Path, job_id: int, attempt: int) -> Path:
    return job_dir(home, job_id) / f"attempt-{attempt}"


def prepare(folder: Path) -> None:
    """Create an attempt's folder, leaving no marker of an earlier run in it."""
    try:
        folder.mkdir(parents=True)
    except FileExistsError:  # a rerun into the same folder: clear what the last run left
        for name in ("SUCCESS", "FAILURE", "exit_status", "pid"):
            (folder / name).unlink(missing_ok=True)


def job_env(home: Path, job: Job, attempt: Attempt) -> Mapping[str, str]:
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
        GPUHERD_JOB_DIR=str(job_dir(home, job.id)),
        GPUHERD_ATTEMPT_DIR=attempt.dir,
    )
    return env


def record_start(home: Path, job: Job, attempt: Attempt, pid: int) -> None:
    info = {
        "id": job.id,
        "name": job.spec.name,
        "project": job.spec.project,
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
    _write_json(job_dir(home, job.id) / "job.json", info)


def record_end(folder: Path, job: Job, outcome: Outcome, ended_at: float) -> None:
    """Add the end to job.json, and drop the SUCCESS or FAILURE marker in the attempt's folder."""
    end = {
        "ended_at": ended_at,
        "outcome": outcome.kind.value,
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "message": outcome.message,
    }
    path = folder.parent / "job.json"
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        info = {"id": job.id, "command": job.spec.command, "attempt": job.attempt}
    if info.get("attempt") == job.attempt:
        info.update(end)
        _write_json(path, info)
    try:
        (folder / ("SUCCESS" if outcome.success else "FAILURE")).touch()
    except OSError:
        pass  # the folder may be gone or read-only; the database still has the outcome


def tail(path: Path, max_bytes: int = TAIL_BYTES) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - max_bytes))
            return f.read().decode(errors="replace")
    except OSError:
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
