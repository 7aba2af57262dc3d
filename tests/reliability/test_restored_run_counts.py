"""A run a restored herd.db did not know, which its job was held for (engine_held_runs.py),
counts as the run it is while it runs: its measured GPU memory peak is its attempt's when
it is recorded, as a watched attempt's is; and a sweep point's counts toward its sweep's
`--max-parallel`, as a running point does."""

from __future__ import annotations

from pathlib import Path

from test_restored_database import (
    CHECKPOINT,
    as_if_never_paused,
    backup,
    restore,
)
from test_restored_two_runs import GIB, held_on_two_gpus, two_gpus_using

from conftest import Herd, wait_for


def test_a_held_runs_measured_peak_is_recorded_with_its_attempt(herd: Herd, tmp_path: Path) -> None:
    """The job is held for its run, seen using 20 GiB of its GPU; the run fails (exit 3), and
    its end is the job's: attempt 1 is recorded with a 20 GiB peak (before: none, where a
    watched attempt records its peak), as `show` gives it."""
    state = tmp_path / "gpus.json"
    job, pid, gpu = held_on_two_gpus(herd, tmp_path, state)
    two_gpus_using(state, {gpu: (pid, "20GiB")})
    wait_for(
        lambda: herd.json("gpus")["gpus"][gpu]["held"] == 20 * GIB,
        what="the telemetry to read the run's memory",
    )
    two_gpus_using(state, {})  # as a real GPU lists it once the run ends
    (tmp_path / "go-1").touch()

    done = herd.wait_state(job, "failed")
    assert (done["attempt"], done["exit_code"]) == (1, 3)
    (first,) = herd.json("show", str(job))["attempts"]
    assert (first["number"], first["pid"], first["exit_code"]) == (1, pid, 3)
    assert first["peak_mem"] == 20 * GIB  # before: None


def test_a_sweep_point_held_for_its_run_counts_toward_max_parallel(
    herd: Herd, tmp_path: Path
) -> None:
    """A `--max-parallel 1` sweep of two points, on two GPUs: point A ran when the backup
    that had both queued was put back (no attempt.json), so A is held for its run, which
    keeps GPU 0. B waits for the cap while A's run runs (before: it started on GPU 1, two of
    the sweep's points running at once); a later job passes it. Once A's run ends, B runs."""
    herd.start("--fake-gpus", "2")
    go, copy = tmp_path / "go", tmp_path / "backup.db"
    herd.cli("pause")
    template = CHECKPOINT.format(go=go) + "; echo {x}"
    cap = ("--max-parallel", "1", "--results-dir", str(tmp_path / "results"))
    herd.cli("sweep", template, "-p", "x", "1", "2", "--name", "s", *cap)
    a, b = (job["id"] for job in herd.json("ls", "--sweep", "s"))
    backup(herd, copy)  # both queued
    herd.cli("resume")
    pid = wait_for(lambda: herd.job(a)["pid"], what="A to run")
    assert herd.job(b)["state"] == "queued"  # the cap: one point at a time
    started = Path(herd.json("show", str(a))["job_dir"]) / "attempt-1" / "attempt.json"
    wait_for(started.exists, what="A's attempt.json")
    restore(herd, copy)
    started.unlink()  # so A cannot be adopted
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "2")
    held = herd.job(a)
    assert held["state"] == "held"
    assert held["reason"] == f"held: attempt 1 runs unwatched (pid {pid}), GPU 0 reserved for it"

    witness = herd.submit("--", "true")  # behind B in the queue: placement passes B first
    wait_for(
        lambda: herd.job(witness)["state"] == "succeeded" or herd.job(b)["state"] != "queued",
        what="the witness to run, or B",
    )
    waiting = herd.job(b)
    assert (waiting["state"], waiting["gpus"]) == ("queued", [])  # before: running, on GPU 1
    assert waiting["reason"] == "waiting: sweep s runs 1 at a time (--max-parallel)"
    assert herd.job(witness)["gpus"] == [1]

    go.touch()
    assert herd.wait_state(a, "succeeded")["attempt"] == 1  # A's run, recorded as it ended
    herd.wait_state(b, "succeeded")
