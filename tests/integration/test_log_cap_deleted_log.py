"""A job whose log is deleted while it runs (`rm` of it, to free space) is still stopped at its
--max-log-size: it writes on to the deleted file, filling the disk all the same."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from conftest import Herd, wait_for

MiB = 2**20


def test_a_job_past_its_cap_in_a_deleted_log_is_stopped(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    code = (
        "import os, sys, time\n"
        "sys.stdout.write('x' * 1048576); sys.stdout.flush()\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
        "sys.stdout.write('x' * 2 * 1048576); sys.stdout.flush()\n"
        "time.sleep(8)\n"  # (outlives several looks: every 2 s)
    )
    job = shared_daemon.submit(
        "--max-log-size", "2MiB", "--", shlex.join([sys.executable, "-c", code])
    )
    log = Path(shared_daemon.wait_state(job, "running")["log_files"]["stdout"])
    wait_for(lambda: log.is_file() and log.stat().st_size == MiB, what="its first MiB")
    log.unlink()
    go.touch()
    ended = shared_daemon.wait_state(job, "succeeded", "failed", "killed", timeout=30)
    assert (ended["state"], ended["outcome"]) == ("failed", "log_too_large"), ended
    # (its size as it ended is not known: the file went with the job)
    assert ended["message"] == "a log grew over --max-log-size 2 MiB (stopped)"
