"""`--max-log-size` counts what each attempt writes: a retry that appends to the job's fixed
`--output` file (`-o logs/%j.log`, Slurm's way) is not stopped for the output of the attempts
before it, also once re-attached by a restarted daemon (its start record keeps where its logs
began)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from conftest import Herd, wait_for

MiB = 2**20


def by_attempt(first_mib: float, then_mib: float, go: Path | None = None) -> str:
    """A job whose attempt 1 writes `first_mib` MiB to stdout and fails (under a 2 MiB cap: no
    check can stop it first), and whose retry writes `then_mib` MiB, waits for the file `go`
    (if given), outlives a cap check (every 2 s), and succeeds."""
    code = (
        "import os, sys, time\n"
        "first = os.environ['GPUHERD_ATTEMPT'] == '1'\n"
        f"mib = {first_mib} if first else {then_mib}\n"
        "sys.stdout.write('x' * int(mib * 1048576)); sys.stdout.flush()\n"
        "if first: sys.exit(1)\n"
        f"go = {str(go)!r} if {go is not None} else None\n"
        "while go and not os.path.exists(go): time.sleep(0.02)\n"
        "time.sleep(3)\n"
    )
    return shlex.join([sys.executable, "-c", code])


def _submit(herd: Herd, logs: Path, command: str) -> int:
    logs.mkdir(exist_ok=True)
    return herd.submit(
        "--gpus", "0", "--max-log-size", "2MiB", "--retries", "1", "-o", f"{logs}/%j.log",
        "--", command,
    )  # fmt: skip


def _ended(herd: Herd, logs: Path, command: str) -> tuple[int, dict[str, Any]]:
    job = _submit(herd, logs, command)
    return job, herd.wait_state(job, "succeeded", "failed", "killed", timeout=30)


def test_a_retry_appending_to_its_output_file_counts_only_what_it_writes(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    job, ended = _ended(shared_daemon, tmp_path / "logs", by_attempt(1.5, 1.5))
    assert (ended["state"], ended["attempt"]) == ("succeeded", 2), ended
    assert (tmp_path / "logs" / f"{job}.log").stat().st_size == 3 * MiB  # both attempts'


def test_a_retry_past_its_cap_says_what_it_wrote_not_what_the_file_holds(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    _, ended = _ended(shared_daemon, tmp_path / "logs", by_attempt(1.5, 3))
    assert (ended["state"], ended["outcome"], ended["attempt"]) == ("failed", "log_too_large", 2)
    assert ended["message"] == (
        "its output log grew 3.0 MiB in this attempt (to 4.5 MiB), "
        "over --max-log-size 2 MiB (stopped)"
    )


def test_a_retry_re_attached_after_a_restart_keeps_where_its_log_began(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    go = tmp_path / "go"
    job = _submit(herd, tmp_path / "logs", by_attempt(1.5, 1, go))
    running = herd.wait_state(job, "running", timeout=30)
    retry = wait_for(lambda: herd.job(job)["attempts"][1:], 30, "the retry")[0]
    record = Path(retry["dir"]) / "attempt.json"
    wait_for(record.exists, 15, "the retry's start record")
    assert json.loads(record.read_text())["log_bases"] == {"output": int(1.5 * MiB)}
    herd.cli("daemon", "restart")
    go.touch()  # its last 3 s run under the new daemon: a check or more see 2.5 MiB
    ended = herd.wait_state(job, "succeeded", "failed", "killed", timeout=30)
    assert (ended["state"], ended["attempt"]) == ("succeeded", 2), (running, ended)
