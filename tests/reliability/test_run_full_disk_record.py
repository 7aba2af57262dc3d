"""`gpuherd run` whose output folder's disk is full as a job ends: the job's job.json, its
record (which `--skip-succeeded` reads), cannot be written. The run said `1 succeeded`, exit
0, and nothing more; it now says which jobs have no record, and why, and exits 1.

The full disk is a 512 KiB tmpfs the output folder is on, filled by the job itself (root can
mount; elsewhere the test skips)."""

from __future__ import annotations

from faults import tmpfs

from conftest import Runs

FILLS_THE_DISK = "cat /dev/zero > ../filler 2>/dev/null; true"
"""Run in its job folder: fills the tmpfs, then succeeds."""


def test_a_job_whose_end_cannot_be_recorded_is_named_and_the_run_exits_1(runs: Runs) -> None:
    with tmpfs(runs.root / "disk", "512k") as disk:
        out = disk / "out"
        # With room, the same run is quiet about records (the error is the full disk's only).
        roomy = runs.run("--fake-gpus", "1", "--output-dir", str(out), input="echo hi\n")
        assert roomy.returncode == 0 and "recorded" not in roomy.stderr, roomy
        (out / "job_0" / "job.json").unlink()  # (the run above's: job_0 is the next one's)

        full = runs.run(
            "--fake-gpus",
            "1",
            "--output-dir",
            str(out),
            input=f"cd {out}/job_0 && {FILLS_THE_DISK}\n",
        )
        assert full.returncode == 1, full
        assert "1 succeeded, 0 failed" in full.stdout, full.stdout
        said = (
            f"gpuherd: error: the end of job_0 could not be recorded in {out} (No space left on"
            " device): it has no job.json or SUCCESS/FAILURE, and its logs may be cut short;"
            " free some space, then run again with --skip-succeeded, which runs it again (as it"
            " does the jobs that failed)\n"
        )
        assert full.stderr.endswith(said), full.stderr
        assert not (out / "job_0" / "job.json").exists()
