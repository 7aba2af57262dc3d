"""A stop that does not get through while the Ray cluster is away (executors/ray_stops.py),
with a fake Ray and a fake GCS: its SIGTERM and its kill are owed, not forgotten, and sent
once the actor, or the cluster, answers again; the SIGKILL still due at the end of the grace
counted from the stop's request. test_ray_unreachable.py does it on a real cluster."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import need

need("ray", "ray")

import ray
from test_ray_link import FakeGcs
from test_ray_lookup import FakeRay, executor, running, watched

from gpuherd.executors.ray import RayExecutor, handle_of
from gpuherd.executors.ray_link import ClusterLink

MARGIN = 0.2
"""The kill margin (ray_stops.kill_margin), made short."""


class CutOffActor:
    """A running job's actor that the daemon can be cut off from (`away`): its calls then
    fail as Ray's do. Killed, its pulls say it died."""

    def __init__(self) -> None:
        self.away = False
        self.killed = False
        self.terminated: list[float] = []
        """The graces of the stops that reached it."""
        self.refused: list[float] = []
        """Those of the stops that did not."""
        self.pull = SimpleNamespace(remote=self._pull)
        self.terminate = SimpleNamespace(remote=self._terminate)
        self.signal_in_order = SimpleNamespace(remote=lambda *_: None)

    def _unavailable(self) -> ray.exceptions.ActorUnavailableError:
        return ray.exceptions.ActorUnavailableError("the node does not answer", None)

    async def _pull(self, *_: Any) -> dict[str, Any]:
        if self.killed:
            raise ray.exceptions.ActorDiedError()
        if self.away:
            raise self._unavailable()
        await asyncio.sleep(0.05)  # (a long poll, shortened)
        return {"out": b"", "err": b"", "status": None}

    async def _terminate(self, grace: float) -> None:
        if self.away:
            self.refused.append(grace)
            raise self._unavailable()
        self.terminated.append(grace)


@pytest.fixture()
def away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """(executor, its fake GCS, the fake Ray, job 1's actor): job 1 running, followed."""
    monkeypatch.setenv("GPUHERD_TEST_KILL_MARGIN", str(MARGIN))
    monkeypatch.setenv("GPUHERD_RAY_LOST_AFTER", "60")  # never lost here
    actor, fake, gcs = CutOffActor(), FakeRay([1]), FakeGcs()
    fake.answer({1: actor})  # type: ignore[dict-item]
    ex = executor(tmp_path, fake, monkeypatch)
    fake.kill = lambda victim, no_restart=True: setattr(victim, "killed", True)  # type: ignore[method-assign]
    monkeypatch.setattr(ray, "kill", fake.kill)
    ex.link = ClusterLink("192.0.2.2:6379", gcs.read)
    ex.link.start()
    assert running(ex, tmp_path, 1)
    yield ex, gcs, actor
    ex.link.on_back = None  # (its loop has ended)
    ex.link.stop()
    gcs.answer()


async def cut_off(ex: RayExecutor, gcs: FakeGcs, actor: CutOffActor) -> None:
    actor.away = True
    gcs.hang()  # the head goes away
    while ex.link.outage() is None:
        await asyncio.sleep(0.02)


def test_a_kill_refused_while_the_cluster_is_away_is_done_when_it_answers_again(
    tmp_path: Path, away: Any
) -> None:
    """Before: the SIGTERM failed, the kill after the grace was refused, and nothing asked
    again once the cluster answered: the job ran on."""
    ex, gcs, actor = away

    async def scenario() -> None:
        ended = watched(ex, tmp_path, 1)
        await cut_off(ex, gcs, actor)
        ex.terminate(handle_of(1, 1), 0.3)
        run = ex._runs[handle_of(1, 1)]
        await asyncio.wait_for(_until(lambda: run.killed), 5)  # its kill is due, and refused
        assert (actor.terminated, actor.killed) == ([], False)
        assert not ended.done()
        actor.away = False
        gcs.answer()  # back: the kill owed is done
        status = await asyncio.wait_for(ended, 10)
        assert actor.killed
        assert status.signal == signal.SIGKILL  # killed, not lost

    asyncio.run(scenario())


def test_a_stop_that_did_not_reach_its_actor_does_once_it_answers_with_the_grace_left(
    tmp_path: Path, away: Any
) -> None:
    """Before: the SIGTERM that failed was never sent again (the kill, after the grace, was
    the job's only stop: no SIGTERM, no time to save its work)."""
    ex, gcs, actor = away
    grace = 5.0

    async def scenario() -> None:
        watched(ex, tmp_path, 1)
        await cut_off(ex, gcs, actor)
        asked = time.monotonic()
        noted: list[list[float]] = []  # (what the actor had had when told that it went)
        ex.terminate(handle_of(1, 1), grace, sent=lambda: noted.append(list(actor.terminated)))
        await asyncio.wait_for(_until(lambda: actor.refused), 5)
        assert not actor.terminated
        assert not noted  # (was: its `sigterm` note written as it was asked: stop_signals.py)
        actor.away = False  # the actor answers again (its pulls): the stop reaches it
        gcs.answer()
        await asyncio.wait_for(_until(lambda: actor.terminated), 5)
        await asyncio.wait_for(_until(lambda: noted), 5)
        assert noted == [actor.terminated]
        [left] = actor.terminated
        assert 0 < left <= grace - (time.monotonic() - asked) + 0.1, left  # from the request
        assert not actor.killed  # (its kill is not due yet)

    asyncio.run(scenario())


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.02)
