"""Two runs of one job at once, after herd.db was restored from an older backup: a job held
for its run (engine_held_runs.py) and released runs its next attempt beside that run; held
again by a later restore, it is held for that attempt while the first run still runs. Each
run is tracked apart (by job and attempt, never by job alone): its memory, its GPUs, its end,
recorded as its own attempt."""

from __future__ import annotations

import json
from pathlib import Path

from test_restored_database import (
    CHECKPOINT,
    as_if_never_paused,
    attempt_json,
    backup,
    queued_in_backup,
    restore,
    running,
    started,
)

from conftest import Herd, wait_for

GIB = 2**30


def each_attempt_waits(tmp_path: Path, runs: Path) -> str:
    """Attempt N appends `N pid` to `runs`, waits for `go-N`; attempt 1 then fails (exit 3)."""
    go = CHECKPOINT.format(go=tmp_path / "go-$GPUHERD_ATTEMPT")
    return f'echo "$GPUHERD_ATTEMPT $$" >> {runs}; {go}; [ "$GPUHERD_ATTEMPT" != 1 ] || exit 3'


def two_gpus_using(state: Path, used: dict[int, tuple[int, str]]) -> None:
    """Two fake GPUs of 24 GiB; GPU i lists the process `used[i]` (pid, memory) on it, as
    NVML would list a job's process."""
    gpus = [
        {
            "memory_total": "24GiB",
            "processes": [{"pid": used[i][0], "memory": used[i][1]}] if i in used else [],
        }
        for i in range(2)
    ]
    (tmp := state.with_suffix(".tmp")).write_text(json.dumps({"gpus": gpus}))
    tmp.replace(state)  # a new inode: the probe sees the change even within one mtime tick


def held_on_two_gpus(herd: Herd, tmp_path: Path, state: Path) -> tuple[int, int, int]:
    """A job queued in a backup, whose attempt 1 runs (no attempt.json in its folder) when the
    backup is put back: the restarted daemon, on two fake GPUs, holds the job for that run.
    Returns the job, the run's pid and its GPU."""
    two_gpus_using(state, {})
    herd.start("--fake-gpus", str(state))
    copy = tmp_path / "backup.db"
    job = queued_in_backup(herd, copy, "--", each_attempt_waits(tmp_path, tmp_path / "runs"))
    first = running(herd, job, 1)
    restore(herd, copy)
    attempt_json(herd, job, 1).unlink()
    as_if_never_paused(herd)
    herd.start("--fake-gpus", str(state))
    assert herd.job(job)["state"] == "held"
    return job, first["pid"], first["gpus"][0]


def reserved(herd: Herd) -> dict[int, list[dict[str, object]]]:
    return {gpu["index"]: gpu["reserved"] for gpu in herd.json("gpus")["gpus"]}


def test_a_released_jobs_next_attempt_runs_beside_its_held_run_each_tracked_apart(
    herd: Herd, tmp_path: Path
) -> None:
    """Held for its run (attempt 1, on GPU a), the job is released: attempt 2 starts on the
    other GPU, b, beside the run. The GPU memory each uses is its own (before: both runs'
    readings went to the job, so that attempt 2 took attempt 1's 20 GiB for its own peak,
    held it on GPU b, and recorded it); each run's end is recorded as its own attempt, and
    frees its own GPU when it comes."""
    state = tmp_path / "gpus.json"
    job, pid1, a = held_on_two_gpus(herd, tmp_path, state)
    b = 1 - a
    two_gpus_using(state, {a: (pid1, "20GiB")})
    herd.cli("release", str(job))
    pid2 = running(herd, job, 2)["pid"]
    assert herd.job(job)["gpus"] == [b]
    two_gpus_using(state, {a: (pid1, "20GiB"), b: (pid2, "1GiB")})

    def read() -> dict[int, int] | None:
        held = {gpu["index"]: gpu["held"] for gpu in herd.json("gpus")["gpus"]}
        return held if held[a] == 20 * GIB else None  # the telemetry has read both runs

    held = wait_for(read, what="the GPU readings of both runs")
    assert held[b] == GIB  # before: 20 GiB, attempt 1's
    assert herd.job(job)["peak_mem"] == GIB
    witness = herd.submit("--", "true")
    assert herd.job(witness)["state"] == "queued"  # GPU a is the run's, GPU b attempt 2's

    two_gpus_using(state, {b: (pid2, "1GiB")})  # as a real GPU lists it once the run ends
    (tmp_path / "go-1").touch()
    assert herd.wait_state(witness, "succeeded")["gpus"] == [a]  # freed at the run's end
    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"], now["pid"]) == ("running", 2, pid2)
    assert [(t["number"], t["pid"], t["outcome"], t["exit_code"]) for t in now["attempts"]] == [
        (1, pid1, "exit", 3),  # the run's end, as its own attempt
        (2, pid2, None, None),
    ]
    assert now["events"][-1]["event"] == "unwatched-ended"
    assert reserved(herd) == {a: [], b: []}
    assert {gpu["index"]: gpu["held"] for gpu in herd.json("gpus")["gpus"]} == {a: 0, b: GIB}

    (tmp_path / "go-2").touch()
    done = herd.wait_state(job, "succeeded")
    assert (done["attempt"], done["exit_code"]) == (2, 0)
    second = herd.json("show", str(job))["attempts"][1]
    assert (second["number"], second["pid"], second["gpus"]) == (2, pid2, [b])
    assert second["peak_mem"] == GIB  # before: 20 GiB, attempt 1's
    assert {gpu["index"]: gpu["held"] for gpu in herd.json("gpus")["gpus"]} == {a: 0, b: 0}
    assert [line.split()[0] for line in started(tmp_path / "runs")] == ["1", "2"]


def test_a_job_held_again_for_its_next_attempt_keeps_its_first_run_reserved(
    herd: Herd, tmp_path: Path
) -> None:
    """Held for its run (attempt 1, GPU a) and backed up so; released, it runs attempt 2 on
    GPU b; that backup is put back, with no attempt.json in attempt 2's folder: the job is
    held for attempt 2 too. Both runs keep their GPUs until each ends (before: the second
    hold replaced the first run's, whose GPU went to the next job while it ran, and whose
    end was not recorded until a restart); the first run's end is an attempt of the job, and
    the second's, which the job is held for now, the job's result."""
    state = tmp_path / "gpus.json"
    job, pid1, a = held_on_two_gpus(herd, tmp_path, state)
    b = 1 - a
    copy = tmp_path / "held.db"
    backup(herd, copy)  # the job held for attempt 1
    herd.cli("release", str(job))
    pid2 = running(herd, job, 2)["pid"]
    restore(herd, copy)
    attempt_json(herd, job, 2).unlink()
    herd.start("--fake-gpus", str(state))

    now = herd.job(job)
    assert (now["state"], now["attempt"]) == ("held", 2)
    assert now["reason"] == f"held: attempt 2 runs unwatched (pid {pid2}), GPU {b} reserved for it"
    assert reserved(herd) == {
        a: [{"job": job, "reason": f"held: attempt 1 runs unwatched (pid {pid1})"}],  # before: []
        b: [{"job": job, "reason": f"held: attempt 2 runs unwatched (pid {pid2})"}],
    }
    witness = herd.submit("--", "true")
    assert herd.job(witness)["state"] == "queued"  # before: it ran on GPU a, beside attempt 1

    (tmp_path / "go-1").touch()
    assert herd.wait_state(witness, "succeeded")["gpus"] == [a]  # once attempt 1 has ended
    first = herd.json("show", str(job))["attempts"][0]
    assert (first["number"], first["pid"], first["exit_code"]) == (1, pid1, 3)
    assert herd.job(job)["state"] == "held"  # for attempt 2, which its latest hold names

    (tmp_path / "go-2").touch()
    done = herd.wait_state(job, "succeeded")
    assert (done["attempt"], done["exit_code"]) == (2, 0)
    ends = [
        (t["number"], t["pid"], t["exit_code"]) for t in herd.json("show", str(job))["attempts"]
    ]
    assert ends == [(1, pid1, 3), (2, pid2, 0)]
    assert reserved(herd) == {a: [], b: []}
    assert [line.split()[0] for line in started(tmp_path / "runs")] == ["1", "2"]
