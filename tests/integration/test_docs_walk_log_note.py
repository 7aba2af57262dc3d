"""The README's Quickstart walked with a script that is not there: `gpuherd log 1` of the
failed job points at its stderr without `so far`, which reads as though the job still ran;
a job still running keeps `so far`."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, wait_for


def test_log_of_an_ended_job_points_at_stderr_without_so_far(shared_daemon: Herd) -> None:
    failed = shared_daemon.submit("--gpus", "0", "--", "sh", "-c", "echo oops >&2; exit 2")
    shared_daemon.wait_state(failed, "failed")
    shown = shared_daemon.cli("log", str(failed))
    assert (shown.stdout, shown.stderr) == (
        "",
        f"gpuherd: job {failed} wrote nothing to stdout, but to stderr: "
        f"gpuherd log {failed} --stderr\n",
    )


def test_log_of_a_running_job_keeps_so_far(shared_daemon: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    running = shared_daemon.submit(
        "--gpus", "0", f"echo warming >&2; while [ ! -e {go} ]; do sleep 0.02; done"
    )
    shared_daemon.wait_state(running, "running")
    try:
        wait_for(
            lambda: shared_daemon.cli("log", "--stderr", str(running)).stdout == "warming\n",
            30,
            "the job's stderr line",
        )
        shown = shared_daemon.cli("log", str(running))
        assert shown.stderr == (
            f"gpuherd: job {running} wrote nothing to stdout so far, but to stderr: "
            f"gpuherd log {running} --stderr\n"
        )
    finally:
        go.touch()
    shared_daemon.wait_state(running, "succeeded")
