"""A run that its job was held for (a restored herd.db: engine_held_runs.py) counts toward its
sweep's --max-parallel as a running point does: each run counts, so a point released while
its held run runs, running its next attempt beside it, counts twice."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from gpuherd.attempts import Attempts, Live
from gpuherd.executors.base import Executor
from gpuherd.held_run import HeldRun
from gpuherd.layout import Layout


def live(job_id: int, attempt: int, sweep: str | None) -> Live:
    folder = Path(f"/home/jobs/{job_id}")
    return Live(job_id, attempt, 100 + job_id, (0,), None, folder, folder, {}, sweep=sweep)


def held(job_id: int, attempt: int, sweep: str | None) -> HeldRun:
    return HeldRun(job_id, attempt, 200 + job_id, None, "", "", sweep=sweep)


def test_each_run_of_a_sweeps_points_counts_held_ones_too() -> None:
    attempts = Attempts(cast(Executor, None), cast(Layout, None), print, print, print)
    attempts.live = {1: live(1, 2, "s"), 3: live(3, 1, "t"), 4: live(4, 1, None)}
    # Job 1's held run beside its next attempt; job 2's, of unknown GPUs, alone; not a sweep's.
    runs = [held(1, 1, "s"), held(2, 1, "s"), held(5, 1, None)]
    attempts.held_runs = {run.key: run for run in runs}
    assert attempts.sweeps_running() == {"s": 3, "t": 1}  # before: {"s": 1, "t": 1}
