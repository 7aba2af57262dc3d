"""What the engine does for sweeps: --max-parallel caps, learned memory, longest-first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, kill_jobs_under, wait_for

# Records its start and end times in RUN_DIR/times.json, reports fake GPU memory, sleeps.
SLEEPER = r"""
import json, os, sys, time
seconds, run_dir = float(sys.argv[1]), sys.argv[-1]
usage = os.environ.get("FAKE_USAGE")
if usage:
    with open(os.path.join(os.environ["GPUHERD_JOB_DIR"], "fake_gpu_usage.json"), "w") as f:
        json.dump({"memory": usage}, f)
start = time.time()
time.sleep(seconds)
with open(os.path.join(run_dir, "times.json"), "w") as f:
    json.dump([start, time.time()], f)
"""


@pytest.fixture
def work(herd: Herd) -> Iterator[Path]:
    folder = herd.home.parent / "work"
    folder.mkdir()
    (folder / "sleeper.py").write_text(SLEEPER)
    try:
        yield folder
    finally:
        kill_jobs_under(folder)


def sweep(herd: Herd, work: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    extra = {"env": {**herd.env, **env}} if env else {}
    return json.loads(herd.cli("sweep", *args, "--json", cwd=work, **extra).stdout)


def wait_all(herd: Herd, ids: list[int], timeout: float = 60) -> None:
    wait_for(
        lambda: herd.client.get("/jobs/wait", ids=ids, timeout=5)["done"],
        timeout,
        f"jobs {ids} to finish",
    )


def intervals(work: Path, name: str) -> list[tuple[float, float]]:
    return [tuple(json.loads(p.read_text())) for p in (work / name).glob("*/times.json")]


def test_max_parallel_caps_a_sweeps_running_points(herd: Herd, work: Path) -> None:
    herd.start("--fake-gpus", "4")
    answer = sweep(
        herd,
        work,
        "python3 sleeper.py {s} {run_dir}",
        "-p",
        "s",
        "0.5",
        "0.51",
        "0.52",
        "0.53",
        "0.54",
        "0.55",
        "--name",
        "capped",
        "--results-dir",
        "capped",
        "--max-parallel",
        "2",
    )
    assert answer["warnings"] == []
    wait_all(herd, answer["ids"])
    spans = intervals(work, "capped")
    assert len(spans) == 6
    most = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
    assert most == 2  # four GPUs free, yet never more than two of the sweep at once


def test_a_capped_sweeps_waiting_points_say_why(herd: Herd, work: Path) -> None:
    herd.start("--fake-gpus", "4")
    answer = sweep(
        herd, work, "sleep 30 # {s}", "-p", "s", "1", "2", "--name", "one", "--max-parallel", "1"
    )
    ids = answer["ids"]
    wait_for(lambda: any(herd.job(i)["state"] == "running" for i in ids), what="a point running")
    (waiting,) = [herd.job(i) for i in ids if herd.job(i)["state"] == "queued"]
    # Three GPUs are free: the sweep's own cap holds it back, not max-running.
    assert waiting["reason"] == "waiting: sweep one runs 1 at a time (--max-parallel)"
    herd.cli("kill", *map(str, ids))


def test_siblings_learn_the_memory_a_finished_point_used(herd: Herd, work: Path) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    herd.cli("pause")
    answer = sweep(
        herd,
        work,
        "python3 sleeper.py {s} {run_dir}",
        "-p",
        "s",
        "2.5",
        "0.8",
        "0.81",
        "--name",
        "learn",
        "--results-dir",
        "learn",
        env={"FAKE_USAGE": "5GiB"},
    )
    first, *siblings = answer["ids"]
    herd.cli("resume")
    # The first point runs alone (no --mem: a plain job owns its GPU) long enough for a
    # telemetry reading of its 5 GiB; once it succeeds, the others learn 5.5 GiB...
    herd.wait_state(first, "succeeded", timeout=30)
    learned = [herd.job(i) for i in siblings]
    assert all(j["mem"] == int(5 * 2**30 * 1.1) for j in learned), [j["mem"] for j in learned]
    assert all(any(e["event"] == "learn" for e in j["events"]) for j in learned)
    rows = herd.json("sweep", "status", "learn")["rows"]
    assert [r["peak_mem"] for r in rows if r["job_id"] == first] == [5 * 2**30]
    assert "PEAK MEM" in herd.cli("sweep", "status", "learn").stdout
    # ...and, declaring memory now, share the one GPU instead of taking turns.
    wait_all(herd, siblings)
    (_, end_first), (start_second, _) = sorted(
        tuple(json.loads((Path(herd.job(i)["job_dir"]) / "times.json").read_text()))
        for i in siblings
    )
    assert start_second < end_first


def test_longest_first_orders_a_resubmitted_sweep_by_earlier_run_times(
    herd: Herd, work: Path
) -> None:
    herd.start("--fake-gpus", "2")
    args = [
        "python3 sleeper.py {s} {run_dir}",
        "-p",
        "s",
        "0.1",
        "1.2",
        "0.5",
        "--name",
        "lpt",
        "--results-dir",
        "lpt",
    ]
    first = sweep(herd, work, *args)["ids"]
    wait_all(herd, first)
    herd.cli("pause")
    again = sweep(herd, work, *args, "--force", "--order", "longest-first")
    jobs = [herd.job(i) for i in again["ids"]]
    order = [
        json.loads((Path(j["job_dir"]) / "params.json").read_text())["params"]["s"]
        for j in sorted(jobs, key=lambda j: j["id"])
    ]
    # By the run times the first run measured (sleeps of 1.2, 0.5 and 0.1 s, most often in
    # that order; a machine that stalls a job's start can change it: CI saw 0.1 outlast 0.5).
    ran = {}
    for job in (herd.job(i) for i in first):
        point = json.loads((Path(job["job_dir"]) / "params.json").read_text())["params"]["s"]
        ran[point] = job["ended_at"] - job["started_at"]
    assert order == sorted(ran, key=lambda s: -ran[s]), ran
    assert sorted(float(s) for s in order) == [0.1, 0.5, 1.2]
