"""A restart's recovery finding its Ray actors again (executors/ray_lookup.py, through
RayExecutor.is_running) while the cluster's GCS does not answer, with a fake Ray: no start
waits more than one deadline for all its attempts together, and an attempt it could not say
of is followed, never counted lost on a guess: until its actor is found (then followed as
any, a stop asked meanwhile reaching it), found gone (lost), or the cluster has been away
for GPUHERD_RAY_LOST_AFTER (lost). A real GCS that hangs cannot be made here: one that is
frozen never lets a daemon start, and Ray's delay for tests (`testing_asio_delay_us`) slows
every start of a job as much (test_ray_unreachable.py freezes the actors instead)."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import need, wait_for

need("ray", "ray")

import ray
from test_ray_link import FakeGcs

from gpuherd.executors import ray_link, ray_lookup
from gpuherd.executors.base import ExitStatus
from gpuherd.executors.ray import RayExecutor, handle_of
from gpuherd.executors.ray_link import ClusterDown, ClusterLink
from gpuherd.gpus.ray import RayNodes

DEADLINE = 0.5
"""LOOKUP_TIMEOUT, made short."""
NEVER = 5.0
"""Seconds the fake's `get_actor` waits at most (for ever, to a test)."""
NAMESPACE = "gpuherd-tag"


class FakeActor:
    """A job's actor whose job has ended (exit 0): its first pull says so."""

    def __init__(self) -> None:
        self.terminated: list[float] = []
        self.signalled: list[int] = []
        self.pull = SimpleNamespace(remote=lambda *_: _now({"out": b"", "err": b"", "status": 0}))
        self.release = SimpleNamespace(remote=lambda: _now(None))
        self.terminate = SimpleNamespace(remote=lambda grace: _now(self.terminated.append(grace)))
        self.signal_in_order = SimpleNamespace(
            remote=lambda signum, *_: self.signalled.append(signum)
        )


async def _now(value: Any) -> Any:
    return value


class FakeRay:
    """What ray_lookup asks of Ray: this home's actors listed at once; `get_actor` answered
    only once `answer()` says what (an actor, or none), as a GCS back from away would. And
    `ray.kill` (the real one would start a Ray instance to refuse a fake actor)."""

    def __init__(self, jobs: list[int]) -> None:
        self.names = [f"{NAMESPACE}-{job}-1" for job in jobs]
        self.util = SimpleNamespace(list_named_actors=self.list)
        self.found: dict[str, FakeActor | None] = {}
        self.killed: list[FakeActor] = []
        self._answered = threading.Event()
        self.listing = threading.Event()
        """Cleared: the listing is answered only once it is set."""
        self.listing.set()

    def kill(self, actor: FakeActor, no_restart: bool = True) -> None:
        self.killed.append(actor)

    def list(self, all_namespaces: bool = False) -> list[dict[str, str]]:
        self.listing.wait(NEVER)
        return [{"name": name, "namespace": NAMESPACE} for name in self.names]

    def get_actor(self, name: str, namespace: str | None = None) -> FakeActor:
        self._answered.wait(NEVER)
        if (actor := self.found.get(name)) is None:
            raise ValueError(f"Failed to look up actor with name '{name}'")
        return actor

    def answer(self, found: dict[int, FakeActor | None]) -> None:
        self.found = {f"{NAMESPACE}-{job}-1": actor for job, actor in found.items()}
        self._answered.set()


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_lookup, "LOOKUP_TIMEOUT", DEADLINE)
    monkeypatch.setattr(ray_link, "POLL", 0.05)
    monkeypatch.setattr(ray_link, "STALE", 0.3)
    monkeypatch.setenv("GPUHERD_RAY_LOST_AFTER", "1")


def executor(tmp_path: Path, fake: FakeRay, monkeypatch: pytest.MonkeyPatch) -> RayExecutor:
    monkeypatch.setattr(ray_lookup, "_ray", fake)
    monkeypatch.setattr(ray, "kill", fake.kill)
    link = ClusterLink("192.0.2.2:6379", FakeGcs().read)  # not watching: it answers
    nodes = RayNodes(tmp_path / "ray-gpus.json", read=lambda fresh: [])
    return RayExecutor(nodes, NAMESPACE, "tag", "192.0.2.2:6379", link)


def attempt_dir(tmp_path: Path, job: int) -> str:
    folder = tmp_path / f"job-{job}"
    folder.mkdir(exist_ok=True)
    return str(folder)


def running(ex: RayExecutor, tmp_path: Path, job: int) -> bool:
    return ex.is_running(handle_of(job, 1), job, 1, f"key:{job}:1", attempt_dir(tmp_path, job))


def watched(ex: RayExecutor, tmp_path: Path, job: int) -> asyncio.Future[ExitStatus]:
    ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
    ex.watch(handle_of(job, 1), attempt_dir(tmp_path, job), "key", ended.set_result)
    return ended


def stderr(tmp_path: Path, job: int) -> str:
    return (tmp_path / f"job-{job}" / "stderr.log").read_text()


def test_a_start_waits_one_deadline_for_all_its_attempts_and_follows_them_until_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: `get_actor` and then the actor were asked for each attempt in turn, without
    a deadline for the first: a GCS that did not answer held the start for ever."""
    fake = FakeRay([1, 2, 3])
    ex = executor(tmp_path, fake, monkeypatch)
    began = time.monotonic()
    assert [running(ex, tmp_path, job) for job in (1, 2, 3)] == [True] * 3
    assert not running(ex, tmp_path, 4)  # not listed: it has no actor
    ex.end_leftovers("")  # (recovery's listing: nothing more asked, nothing killed)
    took = time.monotonic() - began
    # One deadline for all: ~DEADLINE. One each in turn took 3 x DEADLINE at least (the
    # slack is for a loaded machine).
    assert took < 3 * DEADLINE - 0.1, f"recovery took {took:.1f}s"

    async def scenario() -> None:
        ends = {job: watched(ex, tmp_path, job) for job in (1, 2, 3)}
        ex.terminate(handle_of(1, 1), 7.0)  # a stop asked before its actor is found
        ex.signal(handle_of(3, 1), signal.SIGSTOP)  # and a pause
        await asyncio.sleep(0.2)
        assert not any(end.done() for end in ends.values())  # not lost on a guess
        first, third = FakeActor(), FakeActor()
        fake.answer({1: first, 2: None, 3: third})
        statuses = await asyncio.wait_for(asyncio.gather(*ends.values()), 10)
        assert [s.exit_code for s in statuses] == [0, None, 0]
        [left] = first.terminated  # the grace left, counted from the stop's request
        assert 7.0 - (time.monotonic() - began) < left < 7.0 and first.signalled == []
        assert (third.terminated, third.signalled) == ([], [signal.SIGSTOP])
        assert fake.killed == [first, third]  # their ends collected: their GPUs freed
        assert statuses[1].lost
        assert "Ray actor gpuherd-tag-2-1 is gone" in stderr(tmp_path, 2)

    asyncio.run(scenario())


def listed(recovery: ray_lookup.Lookups) -> bool:
    try:
        return bool(recovery.listed())
    except ClusterDown:
        return False


def test_a_listing_answered_after_the_deadline_never_says_an_attempt_has_no_actor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeRay([1, 2])
    fake.listing.clear()
    ex = executor(tmp_path, fake, monkeypatch)
    try:
        assert running(ex, tmp_path, 1)  # no listing by the deadline: followed
        fake.listing.set()  # it answers now, late: job 2's actor is in it, not looked up
        recovery = ex._lookups
        assert recovery is not None
        wait_for(lambda: listed(recovery), 5, "the listing to answer")
        assert running(ex, tmp_path, 2)  # followed too: counted lost, it could run twice
    finally:
        fake.answer({})


def test_an_attempt_not_found_while_the_cluster_is_away_is_lost_after_lost_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gcs = FakeGcs()
    fake = FakeRay([1])
    ex = executor(tmp_path, fake, monkeypatch)
    ex.link = ClusterLink("192.0.2.2:6379", gcs.read)
    ex.link.start()
    try:
        gcs.hang()  # the head goes away
        wait_for(lambda: ex.link.outage() is not None, 5, "the cluster to count as down")
        began = time.monotonic()
        assert running(ex, tmp_path, 1)  # (nothing asked: the cluster is away)
        assert time.monotonic() - began < NEVER / 2  # (a look would wait NEVER)
        assert (ex.out_of_reach(handle_of(1, 1)) or "").startswith(
            "the Ray cluster at 192.0.2.2:6379 does not answer (since "
        )

        async def scenario() -> None:
            status = await asyncio.wait_for(watched(ex, tmp_path, 1), 10)
            assert status.lost
            assert time.monotonic() - began >= 1.0  # GPUHERD_RAY_LOST_AFTER
            assert "went unheard for 1s: lost" in stderr(tmp_path, 1)

        asyncio.run(scenario())
    finally:
        ex.link.on_back = None  # (its loop has ended)
        ex.link.stop()
        gcs.answer()
        fake.answer({})


def test_an_actor_of_an_older_gpuherd_gets_its_signals_by_the_method_it_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An actor made before signals were numbered (a job that ran on across the daemon's
    upgrade) has only `signal(signum)`: calling `signal_in_order` on it failed inside Ray,
    silently, and a pause left the job running while `ls` said paused."""
    ex = executor(tmp_path, FakeRay([]), monkeypatch)
    new, old = FakeActor(), FakeActor()
    del old.signal_in_order
    old.signal = SimpleNamespace(remote=old.signalled.append)
    for actor in (new, old):
        ex._send_signal(SimpleNamespace(actor=actor), signal.SIGSTOP)
    assert (new.signalled, old.signalled) == ([signal.SIGSTOP], [signal.SIGSTOP])
