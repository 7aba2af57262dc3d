"""The words a lost Ray attempt's history gets (`show`'s history, `ls`'s INFO): what became
of it where the executor knows (its node's raylet died, its node left the cluster), the
generic words otherwise; with a fake Ray (test_ray_lookup.py) whose actor dies as Ray says.

Before: every lost end said `lost: the process vanished without an exit status`, though its
stderr named the cause."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import need

need("ray", "ray")

import ray
from ray.core.generated.common_pb2 import ActorDiedErrorContext
from test_ray_lookup import FakeRay, executor, running, stderr, watched

from gpuherd.core.lifecycle import Ended, classify
from gpuherd.executors import ray_link, ray_verdict

NODE_DIED = (
    "The actor died because its node has died. Node Id: 0abc\n\tthe actor's node was "
    "terminated unexpectedly: health check failed due to missing too many heartbeats"
)
RAYLET_NOTE = b"gpuherd: the node's raylet died: every process of the job was killed\n"


def died(message: str) -> ray.exceptions.ActorDiedError:
    """The error Ray raises to a call on an actor that died of a system failure."""
    context = ActorDiedErrorContext(
        actor_id=ray.ActorID.from_random().binary(), class_name="JobActor", error_message=message
    )
    return ray.exceptions.ActorDiedError(context)


class DyingActor:
    """A running job's actor: its first pull gives `err` (its stderr), the next raises
    `error` (it died)."""

    def __init__(self, err: bytes, error: Exception) -> None:
        self.pulls = 0
        self.err, self.error = err, error
        self.info = SimpleNamespace(remote=lambda: _now({"host": "node-a", "node_id": "n1"}))
        self.pull = SimpleNamespace(remote=self._pull)
        self.release = SimpleNamespace(remote=lambda: _now(None))

    async def _pull(self, *_: Any) -> dict[str, Any]:
        self.pulls += 1
        if self.pulls > 1:
            raise self.error
        return {"out": b"", "err": self.err, "status": None, "age": 0.0}


async def _now(value: Any) -> Any:
    return value


def history_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, actor: DyingActor) -> str:
    """What the attempt's end, lost, says in its job's history."""
    fake = FakeRay([1])
    fake.answer({1: actor})  # type: ignore[dict-item]
    ex = executor(tmp_path, fake, monkeypatch)
    assert running(ex, tmp_path, 1)

    async def scenario() -> str:
        status = await asyncio.wait_for(watched(ex, tmp_path, 1), 10)
        assert status.lost
        ended = Ended(status.exit_code, status.signal, why=status.why)
        return classify(ended).describe()

    return asyncio.run(scenario())


@pytest.mark.parametrize(
    ("err", "message", "words"),
    [
        (RAYLET_NOTE, NODE_DIED, "lost: its Ray node died (raylet gone)"),
        (b"", NODE_DIED, "lost: its Ray node left the cluster"),
        (b"", "The actor died unexpectedly.", "lost: the process vanished without an exit status"),
    ],
    ids=["raylet", "node", "unknown"],
)
def test_a_lost_attempt_says_what_became_of_its_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, err: bytes, message: str, words: str
) -> None:
    actor = DyingActor(err, died(message))
    assert history_words(tmp_path, monkeypatch, actor) == words


def test_a_lost_attempt_ends_once_ray_counts_its_actor_dead_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose raylet was killed can end before Ray counts its node dead, and before a
    pull brings the supervisor's note: its pull fails with Ray's generic words. Before: the
    attempt ended lost at once, its retry could go to the node Ray still listed, and its
    stderr and history said only that the actor died unexpectedly. Now the daemon waits for
    the GCS to count the actor dead (ray_verdict.py) and gives Ray's words for why."""
    asked: list[str] = []

    def death_cause(actor_id: str) -> str | None:
        asked.append(actor_id)
        return None if len(asked) < 3 else NODE_DIED  # alive to the GCS twice, then dead

    monkeypatch.setattr(ray_verdict, "death_cause", death_cause)
    monkeypatch.setattr(ray_verdict, "VERDICT_POLL", 0.01)
    actor = DyingActor(b"", died("The actor died unexpectedly before finishing this task."))
    actor._actor_id = ray.ActorID.from_random()  # type: ignore[attr-defined]
    assert history_words(tmp_path, monkeypatch, actor) == "lost: its Ray node left the cluster"
    assert asked == [actor._actor_id.hex()] * 3  # type: ignore[attr-defined]
    told = "gpuherd: the job's Ray actor ended without an exit status: The actor died because"
    assert told in stderr(tmp_path, 1)
    assert "health check failed due to missing too many heartbeats" in stderr(tmp_path, 1)


def test_without_a_verdict_a_lost_attempt_gives_rays_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster does not answer the question (or no verdict comes in time): the attempt
    ends lost with the words of the error its pull got, as before."""

    def death_cause(actor_id: str) -> str | None:
        raise ray_link.ClusterDown("the Ray cluster at 192.0.2.2:6379 does not answer")

    monkeypatch.setattr(ray_verdict, "death_cause", death_cause)
    actor = DyingActor(b"", died("The actor died unexpectedly before finishing this task."))
    actor._actor_id = ray.ActorID.from_random()  # type: ignore[attr-defined]
    words = history_words(tmp_path, monkeypatch, actor)
    assert words == "lost: the process vanished without an exit status"
    told = "gpuherd: the job's Ray actor ended without an exit status: The actor died unexp"
    assert told in stderr(tmp_path, 1)
