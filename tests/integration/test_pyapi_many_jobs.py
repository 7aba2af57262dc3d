"""The Python API's verbs on many jobs in one request: `JobList.kill()`, `hold()`,
`release()`, `retry()`, `pause()`, `resume()`, `rm()` (a listing's, `sweep.jobs()`')
and `Sweep.kill()`, `hold()`, `release()`, against a real daemon (4 fake GPUs). Requests are
counted by wrapping the connection's `request`: a loop of `job.kill()` was one per job.
Every wait has a timeout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import Herd, api_daemon, wait_for
from gpuherd import pyapi_verbs
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect
from gpuherd.pyapi_jobs import JobList
from user_mypy import mypy_strict


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with api_daemon(tmp_path_factory.mktemp("pyapi-many"), "pyapi_many_mod", "") as herd:
        yield herd


@pytest.fixture
def api(cli: Herd) -> gpuherd.Herd:
    return connect(start=False)


@pytest.fixture
def sent(api: gpuherd.Herd, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each request `api` sends from now on, as (method, path without its query)."""
    requests: list[tuple[str, str]] = []
    request = api.client.request

    def counted(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        requests.append((method, path.partition("?")[0]))
        return request(method, path, *args, **kwargs)

    monkeypatch.setattr(api.client, "request", counted)
    return requests


def test_sweep_kill_stops_every_unfinished_point_in_one_request(
    api: gpuherd.Herd, cli: Herd, sent: list[tuple[str, str]], tmp_path: Path
) -> None:
    # x=0 ends at once; 4 of the others run (a fake GPU each), 2 wait; one of those is held
    # and one running point paused: every unfinished state a sweep's job can be in.
    command = "[ {x} = 0 ] || exec sleep 60"
    sweep = api.sweep(command, {"x": list(range(7))}, name="stopped", gpus=1, cwd=tmp_path)
    try:
        ids = dict(zip(range(7), sweep.ids, strict=True))
        assert api.job(ids[0]).wait(timeout=30) == "succeeded"
        wait_for(lambda: len(api.jobs("running", sweep="stopped")) == 4, 30, "4 points to run")
        queued = api.jobs("queued", sweep="stopped")
        running = api.jobs("running", sweep="stopped")
        assert len(queued) == 2
        assert queued[0].hold() == "held"
        assert running[0].pause() == "paused (SIGSTOP; GPUs stay reserved)"
        unfinished = {job.id for job in [*queued, *running]}
        del sent[:]

        answers = sweep.kill(grace=1)

        # One listing, one kill naming them all; the done point left out of both.
        assert sent == [("GET", "/jobs"), ("POST", "/jobs/kill")]
        assert set(answers) == unfinished and ids[0] not in answers
        assert answers[queued[0].id] == "cancelled"  # (the held one)
        assert answers[queued[1].id] == "cancelled"
        for job in running:
            assert answers[job.id] == "stopping (SIGTERM, then SIGKILL after 1s)"
        ended = api.wait(sweep.ids, timeout=30)
        assert ended == {
            ids[0]: "succeeded",
            **{job.id: "cancelled" for job in queued},
            **{job.id: "killed" for job in running},
        }
        # Nothing is left to stop: no request of a kill, an empty answer.
        del sent[:]
        assert sweep.kill() == {}
        assert sent == [("GET", "/jobs")]
        # sweep.jobs() names the finished points too: its kill says they already ended.
        assert set(sweep.jobs().kill().values()) == {
            "already ended (succeeded)",
            "already ended (cancelled)",
            "already ended (killed)",
        }
    finally:
        cli.cli("kill", *map(str, sweep.ids), check=False)


def test_a_sweeps_hold_and_release_act_on_its_waiting_points(
    api: gpuherd.Herd, sent: list[tuple[str, str]], tmp_path: Path
) -> None:
    assert api.pause() == "queue paused: running jobs go on, nothing new starts"
    try:
        sweep = api.sweep("echo {x}", {"x": [1, 2, 3]}, name="waits", gpus=0, cwd=tmp_path)
        del sent[:]
        assert sweep.hold() == dict.fromkeys(sweep.ids, "held")
        assert sent == [("GET", "/jobs"), ("POST", "/jobs/hold")]
        assert {job.state() for job in sweep.jobs()} == {"held"}
        assert sweep.hold() == {}  # none is queued now
        assert sweep.release() == dict.fromkeys(sweep.ids, "queued")
    finally:
        assert api.resume() == "queue resumed"
    assert sweep.wait(timeout=30)


def test_a_listings_hold_release_retry_and_kill_are_one_request_each(
    api: gpuherd.Herd, sent: list[tuple[str, str]]
) -> None:
    assert api.pause() == "queue paused: running jobs go on, nothing new starts"
    try:
        for _ in range(3):
            api.submit("true", gpus=0, project="many")
        jobs = api.jobs(project="many")
        a, b, c = (job.id for job in jobs)
        del sent[:]
        assert jobs.hold() == {a: "held", b: "held", c: "held"}
        assert sent == [("POST", "/jobs/hold")]
        assert jobs.hold() == {a: "already held", b: "already held", c: "already held"}
        # A handle twice is named once; a job removed meanwhile answers so, raising nothing.
        twice = JobList([*jobs, jobs[0], api.job(999999)])
        assert twice.release() == {
            a: "queued",
            b: "queued",
            c: "queued",
            999999: ("no job 999999: `gpuherd ls --all` lists the jobs there are"),
        }
    finally:
        assert api.resume() == "queue resumed"
    assert api.wait(jobs, timeout=30) == dict.fromkeys((a, b, c), "succeeded")
    del sent[:]
    assert jobs.retry(hold=True) == dict.fromkeys(
        (a, b, c), "held (`gpuherd release` to run again)"
    )
    assert jobs.retry() == {
        job_id: f"job {job_id} is held: only finished or running jobs can be retried "
        "(it can: kill, release, rm)"
        for job_id in (a, b, c)
    }
    assert jobs.kill() == dict.fromkeys((a, b, c), "cancelled")
    assert sent == [("POST", "/jobs/retry-held"), ("POST", "/jobs/retry"), ("POST", "/jobs/kill")]
    assert jobs.retry() == dict.fromkeys((a, b, c), "queued again")
    assert api.wait(jobs, timeout=30) == dict.fromkeys((a, b, c), "succeeded")


def test_a_listings_pause_resume_and_rm_are_one_request_each(
    api: gpuherd.Herd, sent: list[tuple[str, str]]
) -> None:
    for _ in range(2):
        api.submit("sleep 60", gpus=0, project="paused-many")
    jobs = api.jobs(project="paused-many")
    a, b = (job.id for job in jobs)
    wait_for(lambda: {job.state() for job in jobs} == {"running"}, 30, "both to run")
    del sent[:]
    assert jobs.pause() == dict.fromkeys((a, b), "paused (SIGSTOP; GPUs stay reserved)")
    assert {job.state() for job in jobs} == {"paused"}
    assert jobs.rm() == {
        job_id: f"job {job_id} is paused: kill it first (gpuherd kill {job_id})"
        for job_id in (a, b)
    }
    assert jobs.resume() == {a: "resumed", b: "resumed"}
    assert {job.state() for job in jobs} == {"running"}
    assert jobs.kill(grace=0) != {}
    assert api.wait(jobs, timeout=30) == dict.fromkeys((a, b), "killed")
    assert jobs.rm() == {a: "removed", b: "removed"}
    assert api.jobs(project="paused-many", all=True) == []
    posts = [path for method, path in sent if method == "POST" and path != "/jobs/wait"]
    assert posts == ["/jobs/pause", "/jobs/rm", "/jobs/resume", "/jobs/kill", "/jobs/rm"]


def test_many_ids_go_in_pieces_under_the_body_cap(
    api: gpuherd.Herd, sent: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = JobList(api.submit("true", gpus=0, project="pieces", hold=True) for _ in range(3))
    monkeypatch.setattr(pyapi_verbs, "IDS_PER_REQUEST", 2)
    del sent[:]
    assert jobs.kill() == {job.id: "cancelled" for job in jobs}
    assert sent == [("POST", "/jobs/kill")] * 2


def test_bad_arguments_are_refused_in_one_line_before_anything_is_sent(
    api: gpuherd.Herd, sent: list[tuple[str, str]], tmp_path: Path
) -> None:
    held = JobList([api.submit("true", gpus=0, project="refused", hold=True)])
    sweep = api.sweep("echo {x}", {"x": [1]}, name="refused", gpus=0, hold=True, cwd=tmp_path)
    del sent[:]
    for jobs in (held, JobList(), sweep):
        with pytest.raises(InvalidValue) as refused:
            jobs.kill(grace=-1)
        assert str(refused.value) == (
            "grace must be 0 to 100 years (the seconds between SIGTERM and SIGKILL; 0: "
            "SIGKILL at once), got -1"
        )
        with pytest.raises(InvalidValue, match=r"^grace: invalid duration 'soon'"):
            jobs.kill(grace="soon")
        with pytest.raises(TypeError, match=r"^grace is seconds"):
            jobs.kill(grace=True)
    with pytest.raises(TypeError, match=r"^hold is True \(held, to release later\) or False"):
        held.retry(hold="yes")  # type: ignore[arg-type]
    assert sent == []  # refused here: nothing asked of the daemon
    # An empty list sends nothing either, and says nothing was done.
    assert JobList().kill() == JobList().hold() == JobList().release() == {}
    assert JobList().retry() == api.jobs(project="no-such-project").kill() == {}
    assert sent == [("GET", "/jobs")]  # (the listing's)
    assert held[0].state() == "held" and sweep.jobs()[0].state() == "held"
    assert held.kill() == {held[0].id: "cancelled"}
    assert sweep.kill() == {sweep.ids[0]: "cancelled"}


USER_SCRIPT = """
import gpuherd
from gpuherd.pyapi_jobs import JobList


def main() -> None:
    herd = gpuherd.connect()
    sweep = herd.sweep("sleep {s}", {"s": [0, 60, 61]}, name="naps", gpus=0, hold=True)
    released: dict[int, str] = sweep.release()
    stopped: dict[int, str] = sweep.kill(grace=0)
    print(released, stopped, sweep.hold(), sweep.kill(grace="5m"))
    print(sweep.jobs().retry(hold=True), herd.jobs(state="held", sweep="naps").kill())
    failed: JobList = herd.jobs(state="failed")
    for job_id, said in failed.retry().items():
        print(job_id + 1, said.upper())
    print(failed.hold(), failed.release(), failed.kill(grace=1.5))
"""


def test_the_verbs_of_many_jobs_pass_a_users_strict_mypy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert mypy_strict(tmp_path, monkeypatch, USER_SCRIPT) == []


def test_a_grace_past_a_floats_range_is_refused_in_one_line(
    api: gpuherd.Herd, sent: list[tuple[str, str]]
) -> None:
    """`kill(grace=10**400)` was the daemon's "invalid request: grace: Input should be a
    valid number"; now refused here, as any grace out of range is, a job's or a list's."""
    held = api.submit("true", gpus=0, project="huge", hold=True)
    del sent[:]
    for kill in (held.kill, JobList([held]).kill, JobList().kill):
        with pytest.raises(InvalidValue, match=r"^grace must be 0 to 100 years .*, got inf$"):
            kill(grace=10**400)
        with pytest.raises(InvalidValue, match=r"^grace must be 0 to 100 years .*, got -inf$"):
            kill(grace=-(10**400))
    assert sent == []
    assert held.kill() == "cancelled"
