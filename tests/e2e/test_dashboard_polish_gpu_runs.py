"""A GPU shared by memory beyond its slots says who shares it truly: a job with two runs on
it (a held run beside its next attempt, after a restored herd.db) is one job, its two runs
each taking a slot, so `gpuherd gpus` says `2 runs sharing`, the GPUs page the same, and its
card `2 runs of 1 job sharing it by memory` (before: `2 sharing` and `2 jobs sharing it`, of
one job). Jobs with one run each are still `N sharing`, `N jobs sharing it`. The held run's
setup is the reliability tests' (tests/reliability/test_restored_two_runs.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

# The reliability tests' helpers, imported as they import each other (their folder is on
# sys.path only once pytest collects one of them).
sys.path.insert(0, str(Path(__file__).parents[1] / "reliability"))

from test_restored_database import (
    as_if_never_paused,
    attempt_json,
    queued_in_backup,
    restore,
    running,
)
from test_restored_two_runs import card, each_attempt_waits
from test_trial_dash_gpu_sharing import _row

from conftest import Herd
from gpuherd.core.gpu_slots import slot_use


def one_gpu_of_one_slot(state: Path) -> None:
    """A fake GPU of 24 GiB (one slot): jobs with --mem share it by memory beyond its slot."""
    state.write_text(json.dumps({"gpus": [{"memory_total": "24GiB"}]}))


def test_a_jobs_two_runs_sharing_a_gpu_are_said_as_runs_of_one_job(
    herd: Herd, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    one_gpu_of_one_slot(state)
    herd.start("--fake-gpus", str(state))
    copy = tmp_path / "backup.db"
    command = each_attempt_waits(tmp_path, tmp_path / "runs")
    job = queued_in_backup(herd, copy, "--mem", "1GiB", "--", command)
    running(herd, job, 1)
    restore(herd, copy)
    attempt_json(herd, job, 1).unlink()
    as_if_never_paused(herd)
    herd.start("--fake-gpus", str(state))
    assert herd.job(job)["state"] == "held"
    herd.cli("release", str(job))
    assert running(herd, job, 2)["gpus"] == [0]  # beside its run, by memory: 2 runs, 1 slot

    (gpu,) = herd.json("gpus")["gpus"]
    assert (gpu["jobs"], len(gpu["runs"]), gpu["slots"]) == ([job], 2, 1)
    _header, row, *_ = herd.cli("gpus").stdout.splitlines()
    assert "2 runs sharing" in row  # before: `2 sharing`, read as two jobs
    assert "2 runs of 1 job sharing it by memory (1 slot)" in card(herd.page("/"), 0)
    assert ">2 runs sharing<" in _row(herd.page("/gpus"), 0)  # before: `2 sharing`

    (tmp_path / "go-1").touch()
    (tmp_path / "go-2").touch()
    herd.wait_state(job, "succeeded")


def test_each_job_with_one_run_is_still_counted_as_a_job() -> None:
    # Two jobs, one of them with two runs, on one slot: three runs, two jobs.
    mixed = {"slots": 1, "jobs": [7, 8], "runs": [{"job": 7}, {"job": 7}, {"job": 8}]}
    assert slot_use(mixed).text() == "3 runs sharing"
    plain = {"slots": 1, "jobs": [7, 8], "runs": [{"job": 7}, {"job": 8}]}
    assert slot_use(plain).text() == "2 sharing"
    two_slots = {"slots": 2, "jobs": [7], "runs": [{"job": 7}, {"job": 7}]}
    assert slot_use(two_slots).text() == "2/2"  # each run takes a slot
    older = {"slots": 1, "jobs": [7, 7]}  # an older daemon: an entry per run, no `runs`
    assert slot_use(older).text() == "2 runs sharing"
