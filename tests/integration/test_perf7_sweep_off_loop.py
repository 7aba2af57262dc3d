"""A sweep's point folders are written on a worker thread, the daemon's loop free meanwhile
(sweeps.py, sweep_folders.py): its other clients are answered during a big submission, and
the guarantees of a submission made in one go stay: every point's params.json is there when
its job starts, no point is queued twice by two submissions at once, and a sweep refused
(by a check, or by a write that fails) leaves no folder and no job. Real daemon, 4 fake GPUs."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from conftest import Herd, wait_for
from gpuherd.client import Client
from gpuherd.errors import HerdError


def sweep_jobs(herd: Herd, name: str) -> list[dict[str, Any]]:
    return [job for job in herd.all_jobs() if job.get("sweep") == name]


def sweep_request(name: str, results: Path, work: Path, points: int) -> dict[str, Any]:
    """POST /sweeps of `true {x}` over x = 0 .. points-1, held."""
    spec = {"name": name, "command": "true {x}", "grids": [{"x": list(range(points))}]}
    spec["results_dir"] = str(results)
    return {"spec": spec, "cwd": str(work), "yes": True, "options": {"hold": True}}


def test_every_point_runs_once_and_finds_its_params_json(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    values = [str(v) for v in range(12)]
    # The job fails unless its params.json is there, and says what it read.
    command = "cp {run_dir}/params.json {run_dir}/seen.json"
    herd.cli("sweep", command, "-p", "x", *values, "--name", "seen", "--gpus", "0", cwd=work)

    def ended() -> list[dict[str, Any]] | None:
        jobs = sweep_jobs(herd, "seen")
        return jobs if all(job["state"] == "succeeded" for job in jobs) else None

    jobs = wait_for(ended, 60, "the sweep's points to succeed")
    assert len(jobs) == len(values)  # one job a point, each succeeded
    seen = sorted(
        json.loads((work / "results" / "seen" / f"x={v}" / "seen.json").read_text())["params"]["x"]
        for v in values
    )
    assert seen == sorted(map(int, values))


def test_two_submissions_at_once_queue_each_point_once(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    body = sweep_request("twice", work / "twice", work, 300)
    answers: list[Any] = []

    def submit() -> None:
        answers.append(Client(herd.home, timeout=600).post("/sweeps", body))

    both = [threading.Thread(target=submit) for _ in range(2)]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join(600)
    assert len(answers) == 2, answers
    assert sorted((a["new"], a["skipped_active"]) for a in answers) == [(0, 300), (300, 0)]
    jobs = sweep_jobs(herd, "twice")
    assert len(jobs) == 300 and len({job["name"] for job in jobs}) == 300


def test_a_sweep_refused_by_a_check_leaves_no_folder(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    results = work / "refused"
    sweep = ["sweep", "true {x}", "-p", "x", "1", "2", "--name", "refused", "--hold"]
    refused = herd.cli(*sweep, "--results-dir", str(results), "--after", "987654", check=False)
    assert refused.returncode == 1 and "987654" in refused.stderr, refused
    assert not results.exists() and sweep_jobs(herd, "refused") == []


def test_a_write_that_fails_stores_no_job_and_removes_the_folders_it_made(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # The last point's folder is a file: its params.json cannot be written (root too). The
    # points written before it used to be left behind, each folder with its params.json.
    herd, work = shared_daemon, shared_work
    results = work / "broken"
    results.mkdir()
    (results / "x=3").write_text("in the way\n")
    sweep = ["sweep", "true {x}", "-p", "x", "1", "2", "3", "--name", "broken", "--hold"]
    refused = herd.cli(*sweep, "--results-dir", str(results), check=False)
    assert refused.returncode == 1, refused
    assert refused.stderr.startswith(f"gpuherd: error: cannot write {results}/x=3/params.json")
    assert sorted(p.name for p in results.iterdir()) == ["x=3"]
    assert sweep_jobs(herd, "broken") == []
    assert "broken" not in [s["name"] for s in herd.json("sweep", "ls")]


def test_the_daemon_answers_others_while_a_big_sweep_is_written(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    results = work / "big"
    answered: list[str] = []  # in the order the answers came
    failed: list[BaseException] = []

    def submit() -> None:
        try:
            Client(herd.home, timeout=600).post(
                "/sweeps", sweep_request("big", results, work, 5000)
            )
        except (HerdError, OSError) as exc:
            failed.append(exc)
        answered.append("sweep")

    submitting = threading.Thread(target=submit)
    submitting.start()
    try:
        wait_for(results.exists, 120, "the sweep's first folder")  # its folders being written
        herd.client.get("/daemon")
        answered.append("daemon")
    finally:
        submitting.join(600)
    assert failed == [] and answered == ["daemon", "sweep"]
    assert len(sweep_jobs(herd, "big")) == 5000
