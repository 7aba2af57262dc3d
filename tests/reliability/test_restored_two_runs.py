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


def pids_on(herd: Herd, index: int) -> list[int]:
    """The processes on GPU `index` in the latest reading (`gpus --json`)."""
    (gpu,) = [g for g in herd.json("gpus")["gpus"] if g["index"] == index]
    return [process["pid"] for process in gpu["processes"]]


def reserved(herd: Herd) -> dict[int, list[dict[str, object]]]:
    return {gpu["index"]: gpu["reserved"] for gpu in herd.json("gpus")["gpus"]}


def attempt_2_ends_the_job(
    herd: Herd, tmp_path: Path, job: int, pids: tuple[int, int], gpus: tuple[int, int]
) -> None:
    """Attempt 1 has ended (exit 3); attempt 2 ends now: the job succeeds by it, each attempt
    is recorded with its own pid and exit code, no GPU is reserved any more, and each attempt
    ran once."""
    (tmp_path / "go-2").touch()
    done = herd.wait_state(job, "succeeded")
    assert (done["attempt"], done["exit_code"]) == (2, 0)
    ends = [
        (t["number"], t["pid"], t["exit_code"]) for t in herd.json("show", str(job))["attempts"]
    ]
    assert ends == [(1, pids[0], 3), (2, pids[1], 0)]
    assert reserved(herd) == {gpu: [] for gpu in gpus}
    assert [line.split()[0] for line in started(tmp_path / "runs")] == ["1", "2"]


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
    # Released once a reading has the edit: placement reuses one up to 1 s old (engine.py,
    # TELEMETRY_MAX_AGE), so a release at once could be placed by the reading before it.
    wait_for(lambda: pids_on(herd, a) == [pid1], what="GPU a's reading of the run")
    herd.cli("release", str(job))
    pid2 = running(herd, job, 2)["pid"]
    assert herd.job(job)["gpus"] == [b]
    two_gpus_using(state, {a: (pid1, "20GiB"), b: (pid2, "1GiB")})

    def read() -> dict[int, int] | None:
        held = {gpu["index"]: gpu["held"] for gpu in herd.json("gpus")["gpus"]}
        # GPU a read 20 GiB before the release too: only a reading of GPU b's process (any
        # amount) says that the telemetry has read the state with both runs in it.
        return held if held[a] == 20 * GIB and held[b] else None

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
    ends = [(t["number"], t["pid"], t["outcome"], t["exit_code"]) for t in now["attempts"]]
    assert ends == [(1, pid1, "exit", 3), (2, pid2, None, None)]  # the run's end, its own
    assert now["attempts"][0]["peak_mem"] == 20 * GIB  # what it was seen to use (before: none)
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
        a: [
            {"job": job, "job_id": job, "reason": f"held: attempt 1 runs unwatched (pid {pid1})"}
        ],  # before: []
        b: [{"job": job, "job_id": job, "reason": f"held: attempt 2 runs unwatched (pid {pid2})"}],
    }
    witness = herd.submit("--", "true")
    assert herd.job(witness)["state"] == "queued"  # before: it ran on GPU a, beside attempt 1

    (tmp_path / "go-1").touch()
    assert herd.wait_state(witness, "succeeded")["gpus"] == [a]  # once attempt 1 has ended
    first = herd.json("show", str(job))["attempts"][0]
    assert (first["number"], first["pid"], first["exit_code"]) == (1, pid1, 3)
    assert herd.job(job)["state"] == "held"  # for attempt 2, which its latest hold names

    attempt_2_ends_the_job(herd, tmp_path, job, (pid1, pid2), (a, b))


def card(page: str, index: int) -> str:
    """The HTML of GPU `index`'s card on the dashboard's overview."""
    start = page.index(f'<article class="card gpu" data-gpu="{index}">')
    return page[start : page.index("</article>", start)]


def test_a_job_whose_two_runs_share_a_gpu_is_listed_once_each_run_counted(
    herd: Herd, tmp_path: Path
) -> None:
    """Held for its run (attempt 1, on GPU 0 of two slots), the job is released: attempt 2
    starts on GPU 0 too. `gpus --json` lists the job once in the GPU's `jobs` (before:
    `[N, N]`), and each run, with its attempt, in `runs`; both runs take a slot (2/2), as
    placement counts them. The table and the dashboard say the same: the job once (before:
    the GPU card and the GPUs page listed it twice), both slots in use, and what the GPU is
    reserved for."""
    herd.start("--fake-gpus", "1", "--slots", "2")
    copy = tmp_path / "backup.db"
    job = queued_in_backup(herd, copy, "--", each_attempt_waits(tmp_path, tmp_path / "runs"))
    pid1 = running(herd, job, 1)["pid"]
    restore(herd, copy)
    attempt_json(herd, job, 1).unlink()
    as_if_never_paused(herd)
    herd.start("--fake-gpus", "1", "--slots", "2")
    assert herd.job(job)["state"] == "held"
    herd.cli("release", str(job))
    assert running(herd, job, 2)["gpus"] == [0]  # beside its run, in the second slot

    (gpu,) = herd.json("gpus")["gpus"]
    assert gpu["jobs"] == [job]  # before: [job, job]
    assert gpu["runs"] == [
        {"job": job, "job_id": job, "attempt": 1},
        {"job": job, "job_id": job, "attempt": 2},
    ]
    why = f"running: attempt 1 runs unwatched (pid {pid1})"
    assert gpu["reserved"] == [{"job": job, "job_id": job, "reason": why}]
    header, row, under, _probe = herd.cli("gpus").stdout.splitlines()
    assert header.split()[:5] == ["GPU", "NAME", "STATE", "SLOTS", "MEMORY"]
    assert row.split()[:5] == ["0", "Fake", "GPU", "enabled", "2/2"]  # both runs' slots
    assert row.split()[-1] == str(job)  # JOBS (FOREIGN is empty): the job once
    assert under == f"GPU 0 is reserved for job {job}, {why}"

    shown = card(herd.page("/"), 0)
    assert "2 / 2 slots in use" in shown
    assert shown.count(f'href="/jobs/{job}"') == 1  # before: 2
    assert why in shown  # what its other slot is kept for, as under the table
    listing = herd.page("/ui/gpus")
    jobs_cell = listing.split('<tr id="gpu-0">')[1].split("</tr>")[0]
    assert jobs_cell.count(f'href="/jobs/{job}"') == 1  # before: 2
    assert "<td>2 / 2</td>" in jobs_cell

    (tmp_path / "go-1").touch()
    (tmp_path / "go-2").touch()
    herd.wait_state(job, "succeeded")  # (by attempt 2: the unwatched 1's end is seen later)

    def released() -> bool:
        (gpu,) = herd.client.get("/gpus")["gpus"]
        return (gpu["jobs"], gpu["runs"], gpu["reserved"]) == ([], [], [])

    wait_for(released, what="the GPU released by both runs")


def test_two_runs_of_a_job_a_restored_database_did_not_know_are_both_watched(
    herd: Herd, tmp_path: Path
) -> None:
    """The job is held for attempt 1 (GPU a) and released: attempt 2 runs on GPU b. Then the
    backup that had the job queued is put back: a restart finds both attempts running. The
    latest decides the job (adopted: it runs attempt 2); the earlier one is watched too, its
    GPU reserved for it (before: left unwatched, and a witness ran on GPU a beside it), also
    after another restart, and its end is recorded as attempt 1 (before: never, or as the job's
    when a later restart took it from its folder)."""
    state = tmp_path / "gpus.json"
    job, pid1, a = held_on_two_gpus(herd, tmp_path, state)
    b = 1 - a
    herd.cli("release", str(job))
    pid2 = running(herd, job, 2)["pid"]
    restore(herd, tmp_path / "backup.db")  # the job queued, at attempt 0
    as_if_never_paused(herd)
    herd.start("--fake-gpus", str(state))

    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"], now["pid"], now["gpus"]) == ("running", 2, pid2, [b])
    why = f"running: attempt 1 runs unwatched (pid {pid1})"
    assert reserved(herd) == {
        a: [{"job": job, "job_id": job, "reason": why}],
        b: [],
    }  # before: a: []
    (aside,) = [e for e in now["events"] if e["event"] == "hold"]  # the event that names it
    assert aside["detail"].startswith(f"attempt 1 runs already (pid {pid1}, unwatched), but")
    assert "attempt 2 of the job started since" in aside["detail"]
    herd.cli("daemon", "stop")  # a restart finds the run again, by the event that named it
    herd.start("--fake-gpus", str(state))
    assert reserved(herd) == {a: [{"job": job, "job_id": job, "reason": why}], b: []}
    witness = herd.submit("--", "true")
    waits = f"GPU {a} is reserved for job {job}, whose attempt 1 runs unwatched (pid {pid1})"
    wait_for(lambda: waits in (herd.job(witness)["reason"] or ""), what="the witness to wait")

    (tmp_path / "go-1").touch()
    assert herd.wait_state(witness, "succeeded")["gpus"] == [a]  # once attempt 1 has ended
    now = herd.json("show", str(job))
    assert (now["state"], now["attempt"]) == ("running", 2)
    assert now["events"][-1]["event"] == "unwatched-ended"
    attempt_2_ends_the_job(herd, tmp_path, job, (pid1, pid2), (a, b))
