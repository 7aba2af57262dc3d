"""A long training whose log's disk fills: its next print fails (ENOSPC) and the job dies,
and the traceback that would say why cannot be written either. `show`, `wait` and the job's
record say the disk was full, naming its folder, instead of a bare `exit 1`.

The full disk is a 4 MiB tmpfs the job's `--output` goes to (root can mount; elsewhere the
test skips)."""

from __future__ import annotations

from pathlib import Path

from faults import tmpfs

from conftest import Herd

WRITES_5_MB = "python -c \"[print('x' * 999, flush=True) for i in range(5000)]\""


def test_a_job_that_filled_its_logs_disk_says_so(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    with tmpfs(tmp_path / "logs", "4m") as logs:
        # With room on the disk, a failure is what the job said: no word of the disk.
        roomy = herd.submit("-o", f"{logs}/roomy.log", "--", "echo hi; exit 3")
        assert herd.wait_state(roomy, "failed")["message"] is None

        job = herd.submit("-o", f"{logs}/train.log", "--", WRITES_5_MB)
        failed = herd.wait_state(job, "failed")
        said = (
            f"the disk of its log folder {logs} was full as it ended, so its last output may"
            f" be missing: free some space, then gpuherd retry {job}"
        )
        assert failed["outcome"] == "exit" and failed["exit_code"] != 0
        assert failed["message"] == said

        assert f"message    {said}\n" in herd.cli("show", str(job)).stdout
        waited = herd.cli("wait", str(job), check=False)
        assert waited.returncode == 1
        assert f"job {job}: failed (exit {failed['exit_code']}: {said})" in waited.stderr

        # A job retried anyway (--retries) is not told to `retry` (refused while queued).
        again = herd.submit("--retries", "1", "-o", f"{logs}/again.log", "--", WRITES_5_MB)
        herd.wait_state(again, "failed")
        first, second = (a["message"] for a in herd.json("show", str(again))["attempts"])
        full = f"the disk of its log folder {logs} was full as it ended"
        assert first.startswith(full)
        assert first.endswith("free some space, before its next attempt starts")
        assert second.endswith(f"free some space, then gpuherd retry {again}")
