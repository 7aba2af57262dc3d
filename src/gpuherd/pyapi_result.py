"""What `Job.result()` (pyapi.py) reads from a succeeded job's folder: a task's result.json
(its return value as it was), a command's metrics.json; and from which run's files.

A sweep point run again (force=True, or a failed point resubmitted) runs in the same folder
as the job before it, whose files the daemon moved to previous-runs/<n>/ (sweep_folders.py).
The earlier job's result() read the folder all the same: it answered the later job's value,
or None once that one was running, for a job that had returned something else. It reads its
own run's files instead, found by the job id their job.json names: a task's result.json,
as it returned it, is moved there too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuherd.errors import HerdError
from gpuherd.sweep_folders import own_run
from gpuherd.worker import METRICS_FILE, RESULT_FILE, runs_task

JOB_FILE = "job.json"
"""What the daemon writes in every job's folder as the job starts (jobfiles.py): a run's."""


def returned_value(job_id: int, info: Mapping[str, Any]) -> Any:
    """The value job `job_id` (its `info`: GET /jobs/ID) returned, None if none: one file
    each, never the other's (a command's own result.json is no return value, nor is a
    metrics.json a task that returned None wrote). HerdError if it cannot be read (its
    folder gone with it, too), or was not kept (a task's, once its sweep point ran again)."""
    folder = Path(info["job_dir"])
    task = runs_task(str(info.get("command") or ""))
    run = own_run(folder, job_id)
    path = run / (RESULT_FILE if task else METRICS_FILE)
    if task and run != folder and not path.exists() and (run / METRICS_FILE).exists():
        # Moved aside by a gpuherd that kept metrics.json alone (the next run's worker
        # removed result.json), which says not what it was (5 and {"result": 5} are one).
        # Without either, it returned None.
        raise HerdError(
            f"job {job_id}'s return value was not kept: its sweep point ran again since, in "
            f"the same folder {folder}; what it returned is in {run / METRICS_FILE} (a dict "
            'as it was, another value as {"result": value})'
        )
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        _check_run_there(job_id, run, path.name)
        return None  # (a task that returned None, a command that wrote none: no file)
    except (OSError, ValueError) as exc:
        raise HerdError(f"cannot read job {job_id}'s {path}: {exc}") from None


def _check_run_there(job_id: int, run: Path, name: str) -> None:
    """HerdError unless the folder of job `job_id`'s run is still there, its job.json too:
    only then does a missing `name` mean it returned nothing. A results folder moved or
    deleted answered None, as a task that returned None does, for one that returned
    {"acc": 0.9}."""
    if not run.is_dir():
        gone = f"its folder {run} is gone (moved or deleted?), its {name} with it"
    elif not (run / JOB_FILE).is_file():
        gone = (
            f"its folder {run} no longer holds its run's files (emptied?): its {JOB_FILE} is gone"
        )
    else:
        return
    raise HerdError(f"cannot read job {job_id}'s result: {gone}") from None
