"""A sweep's `results_dir` in gpuherd's home, refused as a job's own `folder` there is: the
home itself, or a place in its `jobs/`. It was taken: a point's folder in `jobs/1` was job
1's folder too, and `gpuherd rm 1` deleted the point's results and logs with it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect


def refusal(herd: Herd, given: Path) -> str:
    """The line refusing `given`, a results_dir in `herd`'s home (the home or in `jobs/`)."""
    real, home = os.path.realpath(given), os.path.realpath(herd.home)
    what = (
        "is gpuherd's home"
        if real == home
        else f"is in {home}/jobs, the folder of gpuherd's own jobs' folders"
    )
    return (
        f"results_dir {given} {what}: the home is gpuherd's own (herd.db, every job's folder): "
        "give a folder outside it"
    )


def posted(herd: Herd, cwd: Path, results_dir: Path, name: str) -> tuple[int, object]:
    """POST /sweeps of a one-point sweep into `results_dir`: the status and the answer."""
    spec = {"name": name, "command": "echo {a}", "grids": [{"a": [1]}]}
    body = {"spec": {**spec, "results_dir": str(results_dir)}, "cwd": str(cwd)}
    status, _, answer = herd.request("POST", "/api/v1/sweeps", json.dumps(body))
    return status, json.loads(answer)


def test_a_results_dir_in_the_home_or_its_jobs_folder_is_refused_over_http(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--cwd", str(shared_work), "--", "true")
    herd.wait_state(job, "succeeded")
    os.symlink(herd.home / "jobs", shared_work / "linked-jobs")  # (followed, as folder's)
    given = [
        herd.home / "jobs" / str(job),
        herd.home,
        herd.home / "jobs",
        herd.home / "jobs" / "new",  # (not there yet: made by the points)
        shared_work / "linked-jobs" / str(job),
    ]
    for n, results in enumerate(given):
        status, answer = posted(herd, shared_work, results, f"in-home-{n}")
        assert (status, answer) == (422, {"error": refusal(herd, results)})
    assert sorted(os.listdir(herd.home / "jobs" / str(job))) == ["SUCCESS", "attempt-1", "job.json"]
    assert not [s for s in herd.client.get("/sweeps")["sweeps"] if s["name"].startswith("in-home")]


def test_the_cli_and_the_python_api_are_refused_a_users_own_folder_in_the_home_is_not(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    job = herd.submit("--cwd", str(shared_work), "--", "true")
    herd.wait_state(job, "succeeded")
    in_jobs = herd.home / "jobs" / str(job)
    for results in in_jobs, herd.home:
        sweep = ("sweep", "echo {a}", "-p", "a", "1", "--results-dir", str(results))
        refused = herd.cli(*sweep, check=False, cwd=shared_work)
        said = f"gpuherd: error: {refusal(herd, results)}\n"
        assert (refused.returncode, refused.stderr) == (1, said)
    assert sorted(os.listdir(in_jobs)) == ["SUCCESS", "attempt-1", "job.json"]
    api = connect(herd.home, start=False)
    with pytest.raises(InvalidValue, match="the folder of gpuherd's own jobs' folders"):
        api.sweep("echo {a}", {"a": [1]}, name="py-in-jobs", results_dir=in_jobs, cwd=shared_work)
    with pytest.raises(InvalidValue, match="is gpuherd's home"):  # (a dry run asks the daemon)
        api.sweep("echo {a}", {"a": [1]}, results_dir=herd.home, cwd=shared_work, dry_run=True)
    # A folder of the user's own under the home is theirs, as a job's `folder` there is.
    mine = api.sweep(
        "echo {a}", {"a": [1]}, results_dir=herd.home / "mine", cwd=shared_work, dry_run=True
    )
    assert mine.submission["results_dir"] == str(herd.home / "mine")


def test_a_dry_run_and_gpuherd_runs_output_dir_are_refused_there_too(
    daemon: Herd, tmp_path: Path
) -> None:
    """`sweep --dry-run` expands in the CLI, without the daemon's check; `gpuherd run
    --output-dir` in `jobs/` was taken (the job's `rm` deleted the run's results), and with
    --keep-state in the home itself it moved the run's herd.db over the daemon's."""
    job = daemon.submit("true")
    folder = daemon.home / "jobs" / str(job)
    dry = daemon.cli(
        "sweep", "echo {x}", "-p", "x", "1", "--results-dir", str(folder), "--dry-run", check=False
    )
    assert (dry.returncode, dry.stderr) == (1, f"gpuherd: error: {refusal(daemon, folder)}\n")
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("echo hi\n")
    for out, keep in ((folder, ()), (daemon.home, ("--keep-state",))):
        ran = daemon.cli(
            "run", "--fake-gpus", "1", *keep, "--output-dir", str(out), str(jobs), check=False
        )
        said = refusal(daemon, out).replace("results_dir", "--output-dir", 1)
        assert (ran.returncode, ran.stderr) == (1, f"gpuherd: error: {said}\n")
    assert not (folder / "job_0").exists() and not (daemon.home / "job_0").exists()
    assert [j["id"] for j in daemon.ls_all()] == [job]  # (the daemon's herd.db is its own)
