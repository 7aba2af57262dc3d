"""The Python API's job listing (`herd.jobs()`) and its verbs on jobs and on the queue
(`job.retry()`, `hold()`, `release()`, `pause()`, `resume()`, `remove()`, `move()`,
`priority()`, `herd.pause()`), against a real daemon (4 fake GPUs), checked against what the
CLI shows. Each test keeps to jobs of a project of its own; every wait has a timeout."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import psutil
import pytest

import gpuherd
from conftest import Herd, api_daemon, wait_for
from gpuherd.errors import InvalidValue, NotFound
from gpuherd.pyapi import connect
from gpuherd.pyapi_types import WrongType

STATES = "queued, held, running, paused, succeeded, failed, killed, cancelled, lost"
SINCE_HELP = (
    "use a time ago (2d, 12h, 30m), today, yesterday, a time of day (23:30) or a date"
    " (2026-11-20, 2026-11-20T14:00)"
)


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """One daemon for the module (the CLI's side of it); connect() finds it."""
    with api_daemon(tmp_path_factory.mktemp("pyapi-jobs"), "pyapi_jobs_mod", "") as herd:
        yield herd


@pytest.fixture
def api(cli: Herd) -> gpuherd.Herd:
    return connect(start=False)


def ls_ids(cli: Herd, *args: str) -> list[int]:
    """The ids `gpuherd ls --json ARGS` lists, in its order."""
    return [job["id"] for job in cli.json("ls", *args)]


def blocker(api: gpuherd.Herd, go: Path, project: str) -> gpuherd.Job:
    """A running CPU job that ends once `go` exists: jobs `after=` it stay queued till then."""
    job = api.submit(f"while [ ! -e {go} ]; do sleep 0.05; done", gpus=0, project=project)
    wait_for(lambda: job.state() == "running", 30, "the blocker to run")
    return job


def test_jobs_lists_as_ls_does_with_its_filters(api: gpuherd.Herd, cli: Herd) -> None:
    before = time.time() - 1
    bad = api.submit("exit 3", gpus=0, name="bad-1", project="listing")
    good = api.submit("true", gpus=0, name="good-1", project="listing")
    held = api.submit("true", gpus=0, project="listing", hold=True)
    assert api.wait([bad, good], timeout=30) == {bad.id: "failed", good.id: "succeeded"}

    listed = api.jobs(project="listing")
    assert [job.id for job in listed] == ls_ids(cli, "--project", "listing")
    assert [job.id for job in listed] == [bad.id, good.id, held.id]
    assert all(isinstance(job, gpuherd.Job) for job in listed)
    # Each handle holds its row of the listing, as `ls --json` gives it.
    rows = {row["id"]: row for row in cli.json("ls", "--project", "listing")}
    assert [job.snapshot for job in listed] == [rows[bad.id], rows[good.id], rows[held.id]]
    assert listed[0].snapshot is not None and listed[0].snapshot["exit_code"] == 3
    assert api.job(bad.id).snapshot is None  # a handle from elsewhere has none

    # Without all/state/since: the unfinished and the latest finished jobs, as `ls`.
    assert [job.id for job in api.jobs()] == ls_ids(cli)
    assert [job.id for job in api.jobs("failed", project="listing")] == [bad.id]
    assert [j.id for j in api.jobs(["failed", "held"], project="listing")] == [bad.id, held.id]
    assert [job.id for job in api.jobs(name="good-*")] == [good.id]
    assert [job.id for job in api.jobs(state="succeeded", project="listing", limit=1)] == [good.id]
    assert api.jobs(project="no-such-project") == []

    # since/until as `ls --since/--until` takes them: text, epoch seconds, a datetime.
    window = [bad.id, good.id, held.id]
    assert [job.id for job in api.jobs(project="listing", since="1h")] == window
    assert [job.id for job in api.jobs(project="listing", since=before)] == window
    since = datetime.fromtimestamp(before)
    assert [job.id for job in api.jobs(project="listing", since=since)] == window
    assert api.jobs(project="listing", until=before) == []
    assert ls_ids(cli, "--project", "listing", "--until", since.isoformat()) == []
    early = datetime.now() - timedelta(days=3)
    assert api.jobs(project="listing", since=early, until=early + timedelta(hours=1)) == []


def test_failed_jobs_are_retried_through_the_listing(api: gpuherd.Herd) -> None:
    # Fails its first attempt, succeeds its second.
    script = '[ "$GPUHERD_ATTEMPT" -ge 2 ]'
    jobs = [api.submit(script, gpus=0, project="retrying") for _ in range(2)]
    assert set(api.wait(jobs, timeout=30).values()) == {"failed"}
    failed = api.jobs(state="failed", project="retrying")
    assert [job.id for job in failed] == [job.id for job in jobs]
    assert [job.retry() for job in failed] == ["queued again", "queued again"]
    assert set(api.wait(jobs, timeout=30).values()) == {"succeeded"}
    assert [job.info()["attempt"] for job in jobs] == [2, 2]
    # Why nothing was done is the answer, as kill() answers it.
    assert jobs[0].retry(hold=True) == "held (`gpuherd release` to run again)"
    assert jobs[0].state() == "held"
    assert jobs[0].retry() == (
        f"job {jobs[0].id} is held: only finished or running jobs can be retried "
        "(it can: kill, release, rm)"
    )
    assert jobs[0].release() == "queued"
    assert jobs[0].wait(timeout=30) == "succeeded"
    assert jobs[0].info()["attempt"] == 3


def test_hold_and_release_a_waiting_job(api: gpuherd.Herd, cli: Herd, tmp_path: Path) -> None:
    go = tmp_path / "go"
    first = blocker(api, go, "holding")
    waiter = api.submit("true", gpus=0, project="holding", after=first)
    assert waiter.state() == "queued"
    assert waiter.hold() == "held"
    assert waiter.state() == "held"
    assert ls_ids(cli, "--project", "holding", "--state", "held") == [waiter.id]
    assert waiter.hold() == "already held"
    go.touch()
    assert first.wait(timeout=30) == "succeeded"
    assert waiter.state() == "held"  # its job ended: held, it still waits for a release
    assert waiter.release() == "queued"
    assert waiter.wait(timeout=30) == "succeeded"
    assert waiter.release() == (
        f"job {waiter.id}: cannot release a job that has ended (succeeded) (it can: retry, rm)"
    )


def test_pause_and_resume_a_running_job(api: gpuherd.Herd, tmp_path: Path) -> None:
    said = tmp_path / "pid"
    job = api.submit(
        f"echo $$ > {said}.new; mv {said}.new {said}; exec sleep 60", project="pausing"
    )
    wait_for(lambda: job.state() == "running" and said.exists(), 30, "the job to run")
    process = psutil.Process(int(said.read_text()))
    try:
        assert job.pause() == "paused (SIGSTOP; GPUs stay reserved)"
        assert job.state() == "paused"
        wait_for(lambda: process.status() == psutil.STATUS_STOPPED, 10, "SIGSTOP to land")
        assert job.info()["gpus"] != []  # its GPU stays its own
        assert job.pause() == "already paused"
        assert job.resume() == "resumed"
        assert job.state() == "running"
        wait_for(lambda: process.status() != psutil.STATUS_STOPPED, 10, "SIGCONT to land")
    finally:
        job.kill()
    assert job.wait(timeout=30) == "killed"
    assert job.resume() == (
        f"job {job.id}: cannot resume a job that has ended (killed) (it can: retry, rm)"
    )


def test_move_and_priority_change_the_order_ls_shows(api: gpuherd.Herd, cli: Herd) -> None:
    assert api.pause() == "queue paused: running jobs go on, nothing new starts"
    try:
        a, b, c = (api.submit("true", gpus=0, project="ordering") for _ in range(3))
        order = ["--project", "ordering", "--state", "queued"]
        assert ls_ids(cli, *order) == [a.id, b.id, c.id]
        assert c.move(first=True) == "moved to the front"
        assert ls_ids(cli, *order) == [c.id, a.id, b.id]
        assert b.move(before=a) == f"moved before job {a.id}"
        assert ls_ids(cli, *order) == [c.id, b.id, a.id]
        assert a.move(before=str(c.id)) == f"moved before job {c.id}"
        assert ls_ids(cli, *order) == [a.id, c.id, b.id]
        assert b.priority(5) == "priority 5"
        assert ls_ids(cli, *order) == [b.id, a.id, c.id]
        # A swap across priorities: each takes the other's, so the two change places.
        assert c.move(swap=b) == (
            f"swapped with job {b.id} (priority 0 -> 5; job {b.id}: priority 5 -> 0)"
        )
        assert [job.id for job in api.jobs("queued", project="ordering")] == [c.id, a.id, b.id]
    finally:
        assert api.resume() == "queue resumed"
    assert api.wait([a, b, c], timeout=30) == dict.fromkeys([a.id, b.id, c.id], "succeeded")
    # The job's state refuses it: why is the answer, as the other verbs answer it.
    back = f"`gpuherd retry --hold {a.id}` puts it back held, to {{}} before it runs again"
    back += f" (`gpuherd release {a.id}` runs it)"
    assert a.move(first=True) == f"job {a.id} already ended (succeeded): " + back.format("move it")
    assert a.priority(1) == f"job {a.id} already ended (succeeded): " + back.format(
        "change its priority"
    )


def test_remove_forgets_a_finished_job_and_refuses_a_running_one(
    api: gpuherd.Herd, cli: Herd
) -> None:
    done = api.submit("echo hi", gpus=0, project="removing")
    assert done.wait(timeout=30) == "succeeded"
    folder = Path(done.info()["job_dir"])
    assert folder.is_dir()
    assert done.remove() == "removed"
    assert not folder.exists()
    assert done.id not in ls_ids(cli, "--all")
    with pytest.raises(NotFound, match=rf"^no job {done.id}: "):
        done.info()
    running = api.submit("sleep 60", gpus=0, project="removing")
    wait_for(lambda: running.state() == "running", 30, "the job to run")
    try:
        assert running.remove() == (
            f"job {running.id} is running: kill it first (gpuherd kill {running.id})"
        )
    finally:
        running.kill()
    assert running.wait(timeout=30) == "killed"
    assert running.remove() == "removed"


def test_every_verb_of_a_job_that_does_not_exist_raises_not_found(api: gpuherd.Herd) -> None:
    missing = api.job(99999)
    verbs = [
        missing.kill,
        missing.retry,
        missing.hold,
        missing.release,
        missing.pause,
        missing.resume,
        missing.remove,
        lambda: missing.move(first=True),
        lambda: missing.priority(3),
    ]
    for verb in verbs:
        with pytest.raises(NotFound) as raised:
            verb()
        assert str(raised.value) == "no job 99999: `gpuherd ls --all` lists the jobs there are"


def test_bad_listing_arguments_are_refused_in_one_line(api: gpuherd.Herd) -> None:
    refusals: list[tuple[type[Exception], str, dict[str, object]]] = [
        (InvalidValue, f"unknown state 'faild': use one of {STATES}", {"state": "faild"}),
        (InvalidValue, f"unknown state 'x': use one of {STATES}", {"state": ["failed", "x"]}),
        (InvalidValue, f"invalid since '3 dayz': {SINCE_HELP}", {"since": "3 dayz"}),
        (InvalidValue, f"invalid until 'soon': {SINCE_HELP}", {"until": "soon"}),
        (InvalidValue, "limit is a whole number from 1 up, got 0", {"limit": 0}),
        (InvalidValue, "project is empty: give a project, or None for jobs of any project",
         {"project": ""}),
        # (white space alone reached the daemon, whose refusal named `project (--project)`)
        (InvalidValue, "sweep ' ' is only white space: give a sweep's name (gpuherd sweep ls "
         "lists them), or None for jobs of any sweep", {"sweep": " "}),
        (
            InvalidValue,
            "since nan is no moment: give a datetime, epoch seconds, a timedelta (that long "
            "ago), or text as `gpuherd ls --since` takes it ('2d', 'yesterday', '2026-11-20')",
            {"since": float("nan")},
        ),
        (
            WrongType,
            "state is a state's name or a list of them ('failed', ['queued', 'held']; None: "
            "as `gpuherd ls`), got 3 (int)",
            {"state": 3},
        ),
        (
            InvalidValue,
            "state is empty: give a state's name or a list of them ('failed', ['queued', "
            "'held']; None: as `gpuherd ls`)",
            {"state": []},
        ),
        (
            WrongType,
            "state is a state's name or a list of them ('failed', ['queued', 'held']; None: "
            "as `gpuherd ls`), got {'failed': 1} (dict)",
            {"state": {"failed": 1}},
        ),
        (
            WrongType,
            "until is a datetime, epoch seconds, a timedelta (that long ago), or text as "
            "`gpuherd ls --until` takes it ('2d', 'yesterday', '2026-11-20'), got [1] (list)",
            {"until": [1]},
        ),
        (WrongType, "sweep is text (a str), got 7 (int)", {"sweep": 7}),
        (WrongType, "all is True (every job, finished ones too) or False, got 'yes' (str)",
         {"all": "yes"}),
    ]  # fmt: skip
    for kind, words, given in refusals:
        with pytest.raises(kind) as refused:
            api.jobs(**given)  # type: ignore[arg-type]
        assert type(refused.value) is kind
        assert str(refused.value) == words, given
    soon = datetime.now() + timedelta(hours=2)
    with pytest.raises(InvalidValue, match=r"^since .* is in the future: give a past moment "):
        api.jobs(since=soon)
    with pytest.raises(InvalidValue, match=r"^since .* is after until .*: give the earlier "):
        api.jobs(since="1h", until="2h")


def test_bad_verb_arguments_are_refused_in_one_line(api: gpuherd.Herd) -> None:
    job = api.submit("true", gpus=0, project="refusing", hold=True)
    where = "move() takes first=True (to the front of the queue), before=JOB (just before that "
    where += "waiting job) or swap=JOB (the two swap places; JOB: a handle or an id), "
    with pytest.raises(TypeError) as refused:
        job.move()
    assert str(refused.value) == where + "saying where to"
    with pytest.raises(TypeError) as refused:
        job.move(first=True, before=3)
    assert str(refused.value) == where + "only one of them"
    with pytest.raises(TypeError) as refused:
        job.move(before=3, swap=4)
    assert str(refused.value) == where + "only one of them"
    with pytest.raises(WrongType, match=r"^swap is a job: a handle or its id, got 2\.5 \(float\)$"):
        job.move(swap=2.5)  # type: ignore[arg-type]
    with pytest.raises(WrongType, match=r"^before is a job: a handle or its id, got 2\.5 \(float"):
        job.move(before=2.5)  # type: ignore[arg-type]
    with pytest.raises(WrongType) as refused:
        job.move(first=1)  # type: ignore[arg-type]
    assert str(refused.value) == "first is True (to the front of the queue) or False, got 1 (int)"
    with pytest.raises(WrongType) as refused:
        job.priority("high")  # type: ignore[arg-type]
    assert str(refused.value) == (
        "priority is a whole number (higher runs first; the default is 0), got 'high' (str)"
    )
    with pytest.raises(InvalidValue, match=r"^priority 2{64} is too large \(at most 2\*\*63 - 1"):
        job.priority(int("2" * 64))  # past the daemon's 64 bits: its words
    with pytest.raises(WrongType, match=r"^hold is True \(held, to release later\) or False"):
        job.retry(hold="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match=rf"^job {job.id} cannot move before itself"):
        job.move(before=job)
    assert job.state() == "held"  # none of it touched the job
    assert job.remove() == "removed"
