"""A user's `mypy --strict` over the docs' uses of a job's state (docs/python.md): a listing's
`job.snapshot["exit_code"]` was "Value of type "dict[str, Any] | None" is not indexable", as
`snapshot` is None on a handle from elsewhere (herd.job(7)); code typed against the listing
as a list of Job, and a None check on a Job's snapshot, still type-check."""

from __future__ import annotations

from pathlib import Path

import pytest

from user_mypy import mypy_strict

SCRIPT = """
import gpuherd
from gpuherd import Job, JobFailed
from gpuherd.pyapi_jobs import JobList


@gpuherd.task(gpus=0, hold=True)
def step(x: int) -> int:
    return x


def listed(jobs: list[Job]) -> int:
    return len(jobs)


def main() -> None:
    herd = gpuherd.connect()
    jobs = [herd.submit(f"exit {code}", gpus=0, project="demo") for code in (0, 3)]
    herd.wait(jobs, timeout=60)
    for job in herd.jobs(state="failed", project="demo", since="1h"):
        print(job.snapshot["exit_code"], job.retry())
    for job in herd.jobs(state="failed"):
        print(job.id, job.snapshot["log_files"]["stderr"])
    newest = herd.jobs(state="failed", project="demo", limit=10)
    if newest.more:
        print(f"showing 10 failed jobs of {len(newest) + newest.more}")
    print(newest[0].snapshot["state"], [job.snapshot["name"] for job in newest])
    seconds = {job.id: job.snapshot["seconds"] for job in herd.jobs(all=True)}
    print(seconds, newest[-1].snapshot["gpus"], [job.snapshot for job in reversed(newest)])
    first, second = herd.submit("true", gpus=0), herd.submit("true", gpus=0)
    print(second.move(first=True), first.hold(), herd.resume())
    print(second.wait(timeout=60), first.state(), first.release(), first.remove())
    states: dict[int, str] = herd.wait([first, second.id], timeout=60)
    print(states[first.id], first.info()["exit_code"], first.done())
    try:
        first.result(timeout=60)
    except JobFailed as failed:
        print(failed.state, failed.job.id)
    for ended in herd.as_completed(jobs, timeout=2):
        print(ended.id, ended.snapshot)
    sweep = step.sweep(x=[1, 2], results_dir="held")
    print(sweep.wait(), [row["state"] for row in sweep.results()], sweep.jobs()[0].id)
    for text in first.follow(stream="stderr"):
        print(text, end="")
    # Code written before stays typed: the listing as a list of Job, a Job's snapshot checked.
    as_jobs: list[Job] = herd.jobs()
    as_listing: JobList = herd.jobs()
    handle = herd.job(7)
    if handle.snapshot is not None:
        print(handle.snapshot["state"])
    print(listed(herd.jobs()), as_jobs, as_listing)
    print(handle.snapshot["state"])
"""


def test_the_docs_uses_of_a_jobs_state_pass_a_users_strict_mypy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors = mypy_strict(tmp_path, monkeypatch, SCRIPT)
    # Only the last line's: a handle that is not from a listing may have no snapshot.
    assert errors == ['Value of type "dict[str, Any] | None" is not indexable  [index]'], errors
