"""A sweep point run again (a failed point resubmitted, or --force) runs in the same folder; the
earlier job's files move to previous-runs/<n>/. `gpuherd log` and `show` of that earlier job
read the point's folder all the same: its stdout was the later job's, its stderr (the traceback
it failed with) the later run's, empty. They now read its own run's files (real daemon)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd

TEMPLATE = (
    'echo "job $GPUHERD_JOB_ID"; if [ ! -e ok ]; then echo "boom in job $GPUHERD_JOB_ID" >&2;'
    " exit 1; fi; : {x}"
)


def test_the_earlier_job_of_a_point_run_again_shows_its_own_logs(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work / "own-logs"
    work.mkdir()

    def sweep() -> int:
        out = daemon.cli(
            "sweep", TEMPLATE, "-p", "x", "1", "--name", "own", "--gpus", "0", "-q", cwd=work
        )
        return int(out.stdout.split()[0])

    failed = sweep()
    assert daemon.wait_state(failed, "succeeded", "failed")["state"] == "failed"
    (work / "ok").touch()
    again = sweep()  # (the failed point resubmitted: the same folder)
    assert daemon.wait_state(again, "succeeded", "failed")["state"] == "succeeded"

    assert daemon.cli("log", str(failed)).stdout == f"job {failed}\n"
    assert daemon.cli("log", str(failed), "--stderr").stdout == f"boom in job {failed}\n"
    assert daemon.cli("log", str(again)).stdout == f"job {again}\n"
    shown = json.loads(daemon.cli("show", str(failed), "--json").stdout)
    assert shown["stderr_tail"] == [f"boom in job {failed}"]
    assert "/previous-runs/1/" in shown["log_files"]["stderr"]
    later = json.loads(daemon.cli("show", str(again), "--json").stdout)
    assert "previous-runs" not in later["log_files"]["stderr"]
