"""`gpuherd sweep rm` and DELETE /api/v1/sweeps/{name} with a real daemon: the jobs and the
record go, the results folder stays, a running sweep is refused whole."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from test_sweeps import finished, shared_work, sweep, work

from conftest import Herd, one_gpu_engine, serving, wait_for
from gpuherd.errors import Conflict, NotFound
from gpuherd.executors.local import LocalExecutor
from gpuherd.service_bulk import PIECE
from gpuherd.store import Store
from gpuherd.sweep_removal import remove_sweep
from gpuherd.sweeps import Sweeps
from gpuherd.wire_requests import SweepOptions, SweepRequest

__all__ = ["shared_work", "work"]  # the fixtures, used by name

RECORD = ["python3 record.py {x} {run_dir}", "--name", "gone", "--gpus", "0", "-p", "x"]


def ids_of_all(herd: Herd) -> set[int]:
    return {job["id"] for job in herd.ls_all()}


def test_rm_forgets_a_finished_sweep_and_keeps_its_results(daemon: Herd, work: Path) -> None:
    answer = sweep(daemon, work, *RECORD, "1", "2", "3")
    finished(daemon, "gone", 3)
    other = daemon.submit("true")  # not the sweep's: stays
    done = daemon.cli("sweep", "rm", "gone")
    results = work / "results" / "gone"
    assert done.stdout == f"removed sweep gone (3 jobs); results in {results} kept\n"
    assert done.stderr == ""
    assert ids_of_all(daemon) == {other}
    assert not set(answer["ids"]) & ids_of_all(daemon)
    assert daemon.json("sweep", "ls") == []
    assert daemon.cli("sweep", "ls").stdout.startswith("no sweeps yet")
    for x in ("1", "2", "3"):  # the user's: params, logs, markers, outputs
        folder = results / f"x={x}"
        assert (folder / "SUCCESS").exists() and (folder / "args.json").exists()
        assert (folder / "params.json").exists() and (folder / "attempt-1" / "stdout.log").exists()
    gone = daemon.cli("sweep", "status", "gone", check=False)
    assert (gone.returncode, gone.stderr) == (
        1,
        "gpuherd: error: no sweep named 'gone': `gpuherd sweep ls` lists the sweeps\n",
    )


def test_submitting_a_removed_sweep_again_skips_its_done_points(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """The SUCCESS markers stay in the results folder, so a resubmission after `sweep rm`
    skips the points done (as for any resubmission); `--force` runs them again."""
    daemon, work = shared_daemon, shared_work
    flag = work / "fail.flag"
    flag.write_text("2")
    env = {**daemon.env, "FAIL_FLAG": str(flag)}
    sweep(daemon, work, *RECORD, "1", "2", "3", env=env)
    finished(daemon, "gone", 3)
    daemon.cli("sweep", "rm", "gone")
    flag.unlink()

    again = sweep(daemon, work, *RECORD, "1", "2", "3", "4")
    counts = [again[k] for k in ("new", "rerun_failed", "skipped_done", "skipped_active")]
    assert counts == [1, 1, 2, 0] and len(again["ids"]) == 2
    finished(daemon, "gone", 2)  # the two that ran: the others are "done" from the start
    rows = daemon.json("sweep", "status", "gone")["rows"]
    # The points skipped have no job in the database: their state is their marker's.
    assert [(r["folder"], r["state"], r["job_id"]) for r in rows] == [
        ("x=1", "done", None),
        ("x=2", "succeeded", again["ids"][0]),
        ("x=3", "done", None),
        ("x=4", "succeeded", again["ids"][1]),
    ]
    runs = (work / "results" / "gone" / "runs.log").read_text().split()
    assert sorted(runs) == ["1", "2", "2", "3", "4"]
    previous = work / "results" / "gone" / "x=2" / "previous-runs" / "1"
    assert (previous / "FAILURE").exists()

    forced = sweep(daemon, work, *RECORD, "1", "2", "3", "4", "--force")
    assert (forced["rerun_done"], len(forced["ids"])) == (4, 4)
    finished(daemon, "gone", 4)


def test_rm_refuses_a_sweep_with_a_running_job_and_removes_nothing(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    before = ids_of_all(daemon)  # the module's earlier tests' jobs
    sweeps_before = [s["name"] for s in daemon.json("sweep", "ls")]
    args = ["sleep {s}", "--name", "busy", "--gpus", "0", "-p", "s", "0", "60"]
    answer = sweep(daemon, work, *args)
    quick, slow = answer["ids"]
    daemon.wait_state(quick, "succeeded")
    daemon.wait_state(slow, "running")
    refused = daemon.cli("sweep", "rm", "busy", check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"gpuherd: error: sweep 'busy' has 1 job running or paused ({slow}): nothing removed. "
        "Stop them first: gpuherd kill $(gpuherd ls -q --sweep busy); once they have ended, "
        "gpuherd sweep rm busy\n"
    )
    assert ids_of_all(daemon) == before | {quick, slow}
    assert sorted(s["name"] for s in daemon.json("sweep", "ls")) == sorted([*sweeps_before, "busy"])
    daemon.cli("pause", str(slow))
    daemon.wait_state(slow, "paused")
    with pytest.raises(Conflict, match="has 1 job running or paused"):
        daemon.client.delete("/sweeps/busy")

    # What the message says to do works as written.
    daemon.cli("kill", *daemon.cli("ls", "-q", "--sweep", "busy").stdout.split())
    daemon.wait_state(slow, "killed")
    assert "removed sweep busy (2 jobs)" in daemon.cli("sweep", "rm", "busy").stdout
    assert ids_of_all(daemon) == before


def test_rm_of_an_unknown_sweep_is_one_line_and_the_others_go_on(daemon: Herd, work: Path) -> None:
    sweep(daemon, work, *RECORD, "1")
    finished(daemon, "gone", 1)
    done = daemon.cli("sweep", "rm", "nope", "gone", "..", check=False)
    assert done.returncode == 1
    assert done.stderr == (
        "gpuherd: error: no sweep named 'nope': `gpuherd sweep ls` lists the sweeps\n"
        "gpuherd: error: no sweep named '..': `gpuherd sweep ls` lists the sweeps\n"
    )
    assert done.stdout.startswith("removed sweep gone (1 job); results in ")
    assert daemon.json("sweep", "ls") == [] and daemon.ls_all() == []
    usage = daemon.cli("sweep", "rm", check=False)
    assert usage.returncode == 2
    assert "no NAME given: gpuherd sweep rm [OPTIONS] NAME..." in usage.stderr


def test_http_delete_removes_a_held_sweep_in_pieces(shared_daemon: Herd, shared_work: Path) -> None:
    """More points than one piece of `act`: queued (held) jobs are cancelled and removed,
    and the daemon answers other clients meanwhile."""
    daemon, work = shared_daemon, shared_work
    before = ids_of_all(daemon)  # the module's earlier tests' jobs
    sweeps_before = daemon.client.get("/sweeps")
    points = [str(i) for i in range(2 * PIECE + 100)]
    args = ["echo {i}", "--name", "held", "--hold", "--gpus", "0", "--max-parallel", "2"]
    answer = sweep(daemon, work, *args, "-p", "i", *points)
    assert len(answer["ids"]) == len(points)
    kept = daemon.submit("--hold", "true")
    removed = daemon.client.delete("/sweeps/held")
    assert removed == {
        "name": "held",
        "removed": len(points),
        "cancelled": [],
        "results_dir": str(work / "results" / "held"),
    }
    assert ids_of_all(daemon) == before | {kept}
    assert daemon.client.get("/sweeps") == sweeps_before
    params = json.loads((work / "results" / "held" / "i=0" / "params.json").read_text())
    assert params["sweep"] == "held"  # the folders stay
    with pytest.raises(NotFound, match="no sweep named 'held'"):
        daemon.client.delete("/sweeps/held")
    # The record and its --max-parallel cap are forgotten: submitted again, it is new.
    again = sweep(daemon, work, "echo {i}", "--name", "held", "--gpus", "0", "-p", "i", "a")
    assert (again["new"], again["warnings"]) == (1, [])
    wait_for(lambda: daemon.job(again["ids"][0])["state"] == "succeeded", 15, "the new point")


def test_a_sweep_being_removed_is_not_submitted_meanwhile(tmp_path: Path) -> None:
    # Between the removal's pieces other clients are answered: a resubmission then counted
    # points about to be deleted as "already queued" and never ran them.
    store = Store(tmp_path / "herd.db")
    spec = {"name": "big", "command": "true {x}", "grids": [{"x": list(range(3 * PIECE))}]}
    request = SweepRequest(spec=spec, cwd=str(tmp_path), options=SweepOptions(hold=True))

    async def main() -> None:
        async with serving(one_gpu_engine(tmp_path, store, LocalExecutor()), tmp_path) as service:
            sweeps = Sweeps(service)
            await sweeps.submit(request)
            removal = asyncio.create_task(remove_sweep(service, "big"))
            while "big" not in service.sweeps_removing:
                await asyncio.sleep(0)
            with pytest.raises(Conflict, match="is being removed"):
                await sweeps.submit(request)
            assert (await removal)["removed"] == 3 * PIECE
            assert (await sweeps.submit(request))["new"] == 3 * PIECE  # once it is done, it may

    asyncio.run(main())
    store.close()


def test_rm_names_the_jobs_outside_the_sweep_it_cancels(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """A summary `--after` the sweep's points was cancelled with them, unsaid (`rm` of a job
    names those it cancels); jobs of the sweep waiting for its other points are not named."""
    daemon = shared_daemon
    args = ["sweep", "echo {x}", "-p", "x", "1", "2", "--hold", "--gpus", "0", "-q"]
    for name in ("names", "answers"):
        points = daemon.cli(*args, "--name", name, cwd=tmp_path).stdout.split()
        summary = daemon.submit("--after", ",".join(points), "--", "true")
        after = daemon.submit("--after", str(summary), "--", "true")
        if name == "names":
            done = daemon.cli("sweep", "rm", name).stdout
            assert done == (
                f"removed sweep names (2 jobs), and jobs {summary}-{after}, which waited for its "
                f"jobs, cancelled; results in {tmp_path}/results/names kept\n"
            )
        else:
            answer = daemon.client.delete(f"/sweeps/{name}")
            assert (answer["removed"], answer["cancelled"]) == (2, [summary, after])
        assert daemon.job(after)["state"] == "cancelled"
