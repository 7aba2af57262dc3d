"""`herd.as_completed(jobs)` and `gpuherd.as_completed(jobs)`: each job's handle as the job
ends, in the order they end (those ended already first), against a real daemon (4 fake GPUs,
CPU-only jobs); the `any` option of `POST /jobs/wait` behind it; and what a task shows of
itself (`<gpuherd.task train(...) gpus=1>`).

Jobs whose end a test orders wait for a file the test creates (`held_open`): the order is the
test's doing, not two durations' race. Every wait has a timeout."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import Herd, api_daemon, wait_for
from gpuherd.client import Client
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect
from gpuherd.pyapi_types import WrongValue

TASKS = '''
from __future__ import annotations

import os
import time

import gpuherd


@gpuherd.task(gpus=0)
def nap(go: str, run_dir: str = "") -> dict:
    """Returns at once without `go`; else once the file `go` exists."""
    while go and not os.path.exists(go):
        time.sleep(0.02)
    return {"go": go}


@gpuherd.task(gpus=1)
def train(lr: float, bs: int = 32, run_dir: str = "") -> dict:
    return {"lr": lr}
'''


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """One daemon for the module; connect() finds it, and `ascompleted_tasks` is importable."""
    with api_daemon(tmp_path_factory.mktemp("ascompleted"), "ascompleted_tasks", TASKS) as herd:
        yield herd


@pytest.fixture
def api(cli: Herd) -> gpuherd.Herd:
    return connect(start=False)


@pytest.fixture(autouse=True)
def none_left_running(api: gpuherd.Herd) -> Iterator[None]:
    """Each test finds the GPUs and the CPU-only slots (one per core: 2 here) free."""
    yield
    for job in api.jobs():
        job.kill()
    api.wait(api.jobs(), timeout=30)


def held_open(api: gpuherd.Herd, go: Path) -> gpuherd.Job:
    """A running job (on a fake GPU: CPU-only jobs run one per core) that ends once `go`
    exists."""
    job = api.submit(f"while [ ! -e {go} ]; do sleep 0.02; done", gpus=1)
    wait_for(lambda: job.state() == "running", 30, f"job {job.id} to run")
    return job


def ended(api: gpuherd.Herd, command: str) -> gpuherd.Job:
    job = api.submit(command, gpus=0)
    job.wait(timeout=30)
    return job


def test_jobs_come_in_the_order_they_end_each_as_it_ends(api: gpuherd.Herd, tmp_path: Path) -> None:
    first_go, last_go = tmp_path / "first", tmp_path / "last"
    last, first = held_open(api, last_go), held_open(api, first_go)
    quick = api.submit("sleep 0.1", gpus=0)
    came: list[tuple[int, float]] = []
    releases = iter([lambda: first_go.touch(), lambda: last_go.touch()])
    for job in api.as_completed([last, first, quick], timeout=60):
        came.append((job.id, time.time()))
        if release := next(releases, None):
            release()  # the next to end: only now
    assert [job_id for job_id, _ in came] == [quick.id, first.id, last.id]
    # Yielded as it ended (the daemon's wait wakes on the end), not at a poll's next turn.
    for job_id, when in came:
        ended_at = api.job(job_id).info()["ended_at"]
        assert when - ended_at < 0.5, f"job {job_id} yielded {when - ended_at:.2f}s after its end"


def test_jobs_ended_already_come_first_while_the_others_run(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    running = held_open(api, tmp_path / "go")
    done = ended(api, "true")
    completed = api.as_completed([running, done], timeout=60)
    assert next(completed) == done
    assert running.state() == "running"
    (tmp_path / "go").touch()
    assert next(completed) == running
    assert next(completed, None) is None


def test_every_end_counts_failed_killed_and_cancelled_too(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    failed = api.submit("exit 3", gpus=0)
    killed = held_open(api, tmp_path / "never")
    cancelled = api.submit("true", gpus=0, hold=True)
    completed = api.as_completed([killed, cancelled, failed], timeout=60)
    with pytest.warns(gpuherd.WaitWarning, match=f"job {cancelled.id} is held"):
        assert next(completed) == failed
    killed.kill()
    cancelled.kill()
    states = {job.id: job.state() for job in completed}
    assert states == {killed.id: "killed", cancelled.id: "cancelled"}


def test_timeout_yields_what_ended_then_says_how_many_are_left(
    api: gpuherd.Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    left = [held_open(api, tmp_path / "go"), held_open(api, tmp_path / "go2")]
    done = ended(api, "true")
    posts: list[Any] = []
    post = Client.post

    def counted(self: Client, path: str, body: Any = None) -> Any:
        posts.append(body)
        return post(self, path, body)

    monkeypatch.setattr(Client, "post", counted)
    began = time.monotonic()
    got: list[gpuherd.Job] = []
    with pytest.raises(TimeoutError) as raised:
        got.extend(api.as_completed([*left, done], timeout=1.0))
    took = time.monotonic() - began
    assert got == [done]
    assert str(raised.value).startswith("after 1s, 2 of 3 jobs still unfinished (jobs ")
    assert 0.9 <= took < 5
    # Long polls, not a tight loop: a second of waiting is a few requests.
    assert 2 <= len(posts) <= 4, posts
    assert all(body["any"] is True for body in posts)


def test_takes_ids_text_ids_a_job_list_and_a_sweep_each_job_once(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    from ascompleted_tasks import nap

    one, two = ended(api, "true"), ended(api, "exit 1")
    twice = [one.id, str(one.id), one, api.job(one.id), two.id, two]
    assert [job.id for job in api.as_completed(twice, timeout=30)] == [one.id, two.id]
    assert all(isinstance(job, gpuherd.Job) for job in api.as_completed([one.id], timeout=30))
    listed = api.jobs(all=True, limit=500)
    assert {one, two} <= set(listed)
    assert {job.id for job in gpuherd.as_completed(listed, timeout=30)} >= {one.id, two.id}

    go = tmp_path / "go"
    sweep = nap.sweep(go=["", str(go)], name="ascompleted-nap")
    names = {api.job(i).info()["name"]: i for i in sweep.ids}
    quick = names.pop("ascompleted-nap/go=")
    (waits,) = names.values()
    completed = api.as_completed(sweep, timeout=60)
    first = next(completed)
    assert first.id == quick, "the point that waits for no file ends first"
    assert first.result() == {"go": ""}
    go.touch()
    assert [job.id for job in completed] == [waits]
    # A sweep's jobs(), as the handles a sweep's points ran as: done ones come at once.
    assert [job.id for job in sweep.jobs()] == sorted(sweep.ids)
    assert {job.id for job in gpuherd.as_completed(sweep.jobs(), timeout=30)} == set(sweep.ids)
    assert {job.id for job in gpuherd.as_completed(sweep, timeout=30)} == set(sweep.ids)
    assert list(gpuherd.as_completed([], timeout=1)) == []


def test_what_is_not_a_job_is_refused_in_one_line_naming_it(api: gpuherd.Herd) -> None:
    job = ended(api, "true")
    with pytest.raises(
        TypeError, match=r"as_completed\(\) takes jobs: .*: 1\.5 \(float\) is not one"
    ):
        api.as_completed([job, 1.5])
    with pytest.raises(TypeError, match=r"'lr' \(str\) is not one"):
        api.as_completed([job, "lr"])
    with pytest.raises(TypeError, match=r"takes a list of jobs.*; got <gpuherd.Job"):
        api.as_completed(job)
    with pytest.raises(TypeError, match=r"gpuherd.as_completed\(\) takes job handles .*: 7 is"):
        gpuherd.as_completed([job, 7])
    with pytest.raises(ValueError, match="timeout must be 0 or more seconds"):
        api.as_completed([job], timeout=-1)
    assert job.state() == "succeeded"


def test_a_job_of_another_daemon_is_refused_by_every_wait(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    """A handle of another home's daemon (another connect()) is refused by herd.wait() as by
    as_completed(): wait() asked its own daemon about that id, and answered the state of its
    own job of that number (or NotFound). A home named through a link is the same daemon."""
    other_daemon = Herd(tmp_path / "other")
    other_daemon.start("--fake-gpus", "1")
    try:
        theirs = ended(connect(home=other_daemon.home, start=False), "true")
        mine = ended(api, "true")
        homes = f"{other_daemon.home}, not of {api.client.home}"
        said = rf"^job {theirs.id} is of the daemon of {re.escape(homes)}: "
        with pytest.raises(WrongValue, match=said + r"wait\(\) waits on one daemon"):
            api.wait([mine, theirs], timeout=30)
        their_sweep = connect(home=other_daemon.home, start=False).sweep(
            "true {x}", {"x": [1, 2]}, gpus=0, hold=True, cwd=tmp_path, name="theirs"
        )
        first_point = rf"^job {their_sweep.ids[0]} is of the daemon of {re.escape(homes)}: "
        with pytest.raises(WrongValue, match=first_point + r"wait\(\) waits on one daemon"):
            api.wait(their_sweep, timeout=30)  # (its ids alone are read: the refusal stays)
        for refused in (api.as_completed, gpuherd.as_completed):
            with pytest.raises(WrongValue, match=said + r"as_completed\(\) waits on one daemon"):
                refused([mine, theirs], timeout=30)
    finally:
        other_daemon.cleanup()
    (tmp_path / "link").symlink_to(api.client.home)
    linked = gpuherd.Herd(Client(tmp_path / "link")).job(mine.id)
    assert api.wait([linked], timeout=30) == {mine.id: "succeeded"}


def test_ctrl_c_stops_the_wait_not_the_jobs(api: gpuherd.Herd, tmp_path: Path) -> None:
    running = held_open(api, tmp_path / "go")
    # As a terminal's Ctrl-C: SIGINT to this process while it waits in the socket's read.
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as raised:
            list(api.as_completed([running], timeout=30))
    finally:
        timer.cancel()
    assert raised.value.ids == [running.id]  # type: ignore[attr-defined]
    assert "Ctrl-C stops the wait, not the job" in str(raised.value)
    assert running.state() == "running"
    (tmp_path / "go").touch()


def test_a_daemon_older_than_any_is_polled_instead(
    api: gpuherd.Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    post = Client.post
    # The daemon's own refusal of a field it does not know, as an older one words `any`'s.
    with pytest.raises(InvalidValue) as refused:
        post(api.client, "/jobs/wait", {"ids": [1], "zzz": True})
    refusal = str(refused.value).replace("zzz", "any")
    assert "any: unknown field" in refusal

    def older(self: Client, path: str, body: Any = None) -> Any:
        if path == "/jobs/wait" and "any" in (body or {}):
            raise InvalidValue(refusal)
        return post(self, path, body)

    monkeypatch.setattr(Client, "post", older)
    go = tmp_path / "go"
    running, done = held_open(api, go), ended(api, "exit 2")
    completed = api.as_completed([running, done], timeout=60)
    assert next(completed) == done
    go.touch()
    assert next(completed) == running


def test_the_wait_endpoint_answers_at_the_first_end_with_any(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    slow = api.submit("sleep 30", gpus=0)
    quick = api.submit("sleep 0.1", gpus=0)
    began = time.monotonic()
    answer = api.client.post("/jobs/wait", {"ids": [slow.id, quick.id], "timeout": 60, "any": True})
    assert time.monotonic() - began < 10
    assert answer["done"] is False  # (`done`: all have finished, as without `any`)
    assert answer["states"] == {str(slow.id): "running", str(quick.id): "succeeded"}
    # Without it, as before: until all have ended, or the timeout.
    began = time.monotonic()
    answer = api.client.post("/jobs/wait", {"ids": [slow.id, quick.id], "timeout": 1})
    assert time.monotonic() - began >= 0.9
    assert answer["done"] is False
    assert answer["states"][str(slow.id)] == "running"
    answer = api.client.post("/jobs/wait", {"ids": [quick.id], "timeout": 0, "any": False})
    assert answer["done"] is True
    with pytest.raises(InvalidValue, match="any"):
        api.client.post("/jobs/wait", {"ids": [quick.id], "any": "yes"})
    slow.kill()


def test_a_task_shows_its_function_and_its_job_options(api: gpuherd.Herd) -> None:
    from ascompleted_tasks import nap, train

    signature = "train(lr: float, bs: int = 32, run_dir: str = '') -> dict"
    assert repr(train) == f"<gpuherd.task {signature} gpus=1>"
    more = gpuherd.task(gpus=2, retries=3, project="vision")(train)
    assert repr(more) == f"<gpuherd.task {signature} gpus=2, retries=3, project='vision'>"
    assert repr(nap) == "<gpuherd.task nap(go: str, run_dir: str = '') -> dict gpus=0>"
    on = gpuherd.task(herd=api)(nap)
    assert (
        repr(on)
        == f"<gpuherd.task nap(go: str, run_dir: str = '') -> dict gpus=0, herd={api.client.home}>"
    )


def test_a_long_list_is_asked_about_in_turns_each_job_once(
    api: gpuherd.Herd, cli: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each end makes a new wait: one naming every job left made the iteration's cost grow
    with the square of the jobs (500 jobs: 455 waits, 536 KB). Waits name 1,000 at most."""
    lines = tmp_path / "jobs.txt"
    lines.write_text("true\n" * 1_200)
    ids = [int(i) for i in cli.cli("submit", "-q", "--file", str(lines)).stdout.split()]
    asked: list[int] = []
    post = Client.post

    def counted(self: Client, path: str, body: Any = None, **kw: Any) -> Any:
        if path == "/jobs/wait":
            asked.append(len(body["ids"]))
        return post(self, path, body, **kw)

    monkeypatch.setattr(Client, "post", counted)
    came = [job.id for job in api.as_completed(ids, timeout=120)]
    assert sorted(came) == ids and len(came) == len(set(came))
    assert asked and max(asked) <= 1_000, max(asked)


def test_a_held_point_of_a_sweep_is_waited_for_until_released(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    from ascompleted_tasks import nap

    gate = tmp_path / "gate"
    cores = len(os.sched_getaffinity(0))  # the daemon's CPU-only slots: one per core
    gates = [
        api.submit(f"while [ ! -e {gate} ]; do sleep 0.02; done", gpus=0) for _ in range(cores)
    ]
    wait_for(lambda: all(job.state() == "running" for job in gates), 30, "every CPU slot taken")
    sweep = nap.sweep(go=["", str(gate)], name="ascompleted-held")
    held = next(i for i in sweep.ids if api.job(i).info()["name"] == "ascompleted-held/go=")
    assert api.job(held).hold() == "held"
    other = next(i for i in sweep.ids if i != held)
    gate.touch()  # the slots free up: the other point runs and ends, the held one waits
    # Generous timeouts: a task's interpreter takes seconds to start on a loaded machine. What
    # comes first is the other point; the held one is not taken for ended.
    completed = api.as_completed(sweep, timeout=120)
    held_said = pytest.warns(gpuherd.WaitWarning, match=f"job {held} is held")
    with held_said:
        assert next(completed).id == other
    assert api.job(held).state() == "held"
    with held_said, pytest.raises(TimeoutError) as raised:  # held: waited for, not over
        list(api.as_completed([held], timeout=1))
    assert str(raised.value) == f"after 1s, 1 of 1 job still unfinished (job {held})"
    assert api.job(held).state() == "held"
    api.job(held).release()
    assert next(completed).id == held
    assert next(completed, None) is None
