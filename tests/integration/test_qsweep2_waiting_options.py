"""A sweep submitted again with other job options (`--gpus 2`, `--timeout`, `--env`,
`--priority`) while its points still wait (queued, held): a submission skips a point already
queued, so those points kept their old options and nothing said so. Now a warning names what
differs and the edit that applies the new options, or, where no edit can, how to submit the
points anew (real daemon)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from conftest import Herd

WAITING = "$(gpuherd ls -q --sweep opts --state queued,held)"
CHANGED = (
    "3 points of sweep 'opts' still waiting to run (queued or held) keep their job options, "
    "not this submission's (--gpus 1 -> 2, --timeout none -> 1h, --env SEED): "
    "submitting it again does not change them; gpuherd edit "
    f"{WAITING} --gpus 2 --timeout 1h --env SEED=3 gives them these"
)
PRIORITY = (  # (no edit changes a priority: `gpuherd priority IDS P` does)
    "3 points of sweep 'opts' still waiting to run (queued or held) keep their job options, "
    "not this submission's (--priority 0 -> 5): submitting it again does "
    f"not change them; gpuherd priority {WAITING} 5 gives them these"
)
OPTIONS = ("--gpus", "2", "--timeout", "1h", "--env", "SEED=3")


def submit(herd: Herd, work: Path, *options: str) -> tuple[dict[str, Any], list[str]]:
    args = ("sweep", "echo {x}", "-p", "x", "1", "2", "3", "--name", "opts", "--hold", *options)
    proc = herd.cli(*args, "--json", cwd=work)
    return json.loads(proc.stdout), proc.stderr.splitlines()


def test_waiting_points_with_other_options_are_said_with_the_edit(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    first, _ = submit(daemon, work)
    again, stderr = submit(daemon, work, *OPTIONS)
    assert (again["skipped_active"], again["ids"]) == (3, [])
    assert again["warnings"] == [CHANGED]
    assert stderr == [f"gpuherd: warning: {CHANGED}"]

    # The edit it gives, run as the shell would (the $(...) being the waiting points' ids).
    waiting = daemon.cli("ls", "-q", "--sweep", "opts", "--state", "queued,held").stdout.split()
    assert sorted(map(int, waiting)) == sorted(first["ids"])
    edit = CHANGED.split(f"gpuherd edit {WAITING} ")[1].removesuffix(" gives them these")
    daemon.cli("edit", *waiting, *shlex.split(edit))
    for job_id in first["ids"]:
        job = daemon.job(job_id)
        asked = (job["gpus_requested"], job["timeout"], job["env_overrides"])
        assert asked == (2, 3600, {"SEED": "3"}), job

    # Now they have the options asked for: nothing to say. Options left to the daemon's
    # settings (--retries, --grace, --max-log-size) and --mem, which a sweep learns, are not
    # compared when left out.
    daemon.cli("edit", *waiting, "--retries", "2", "--mem", "1GiB")
    same, stderr = submit(daemon, work, *OPTIONS)
    assert (same["skipped_active"], same["warnings"], stderr) == (3, [], [])

    # A priority, which `gpuherd priority` changes, not an edit.
    other, stderr = submit(daemon, work, *OPTIONS, "--retries", "2", "--priority", "5")
    assert other["warnings"] == [PRIORITY]
    assert stderr == [f"gpuherd: warning: {PRIORITY}"]
