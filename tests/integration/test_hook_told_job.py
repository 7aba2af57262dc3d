"""What an on-end hook is told of its job stays the hook's: a job the hook submits got the
other job's GPUHERD_JOB_EXIT_CODE, _PROJECT, _COMMAND, ... in its environment, which no job
has of its own; and the hook of a job whose command is near 128 KiB never ran (its
GPUHERD_JOB_COMMAND made the exec fail, E2BIG): it is cut short and marked so."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from conftest import Herd, wait_for


def test_a_job_a_hook_submits_is_told_nothing_of_the_hooks_job(
    daemon: Herd, tmp_path: Path
) -> None:
    gpuherd = f"{shlex.quote(sys.executable)} -m gpuherd"  # (CI's venv is not on PATH)
    hook = (
        f'[ "$GPUHERD_JOB_NAME" = parent ] && {gpuherd} submit -q --name child --gpus 0 -- '
        "'env | grep ^GPUHERD_JOB | sort'"
    )
    daemon.cli("config", "set", "on-end", hook)
    parent = daemon.submit("--name", "parent", "--project", "p2", "--gpus", "0", "--", "exit 7")
    daemon.wait_state(parent, "failed")
    child = wait_for(
        lambda: next((j["id"] for j in daemon.all_jobs() if j["name"] == "child"), None),
        what="the job the hook submits",
    )
    daemon.wait_state(child, "succeeded")
    told = dict(line.split("=", 1) for line in daemon.cli("log", str(child)).stdout.splitlines())
    assert told["GPUHERD_JOB_ID"] == str(child) and told["GPUHERD_JOB_NAME"] == "child"
    leaked = {"GPUHERD_JOB_EXIT_CODE", "GPUHERD_JOB_PROJECT", "GPUHERD_JOB_COMMAND"}
    assert not leaked & set(told), told
    assert "GPUHERD_JOB_STATE" not in told


def test_the_hook_of_a_job_of_a_command_near_128_kib_runs(daemon: Herd, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    daemon.cli("config", "set", "on-end", f'printf "%s" "$GPUHERD_JOB_COMMAND" > {seen}')
    command = "true #" + "x" * (131_060 - 6)  # (under submit's 128 KiB, over the variable's)
    [job] = daemon.client.post(
        "/jobs", {"jobs": [{"command": command, "cwd": str(tmp_path), "gpus": 0}]}
    )["ids"]
    daemon.wait_state(job, "succeeded")
    told = wait_for(lambda: seen.exists() and seen.read_text(), what="the hook's run")
    assert told.endswith(" …(cut)") and command.startswith(told.removesuffix(" …(cut)"))
