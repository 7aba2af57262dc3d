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


def returned_value(job_id: int, info: Mapping[str, Any]) -> Any:
    """The value job `job_id` (its `info`: GET /jobs/ID) returned, None if none: one file
    each, never the other's (a command's own result.json is no return value, nor is a
    metrics.json a task that returned None wrote). HerdError if it cannot be read, or was
    not kept (a task's, once its sweep point ran again)."""
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
        return None
    except (OSError, ValueError) as exc:
        raise HerdError(f"cannot read job {job_id}'s {path}: {exc}") from None
