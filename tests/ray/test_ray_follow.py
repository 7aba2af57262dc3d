"""Following an attempt whose actor's node hangs (executors/ray_follow.py), with a fake Ray:
the follow loop asks where a job without GPUs runs with a deadline, goes on to its pulls
(which know what to do with an actor out of reach), and records the node once it answers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import need

need("ray", "ray")

from test_ray_lookup import FakeRay, executor, running, watched
from test_ray_stops import _until

from gpuherd.executors import ray_follow
from gpuherd.executors.ray import handle_of

INFO_TIMEOUT = 0.3
"""ray_follow.INFO_TIMEOUT, made short."""


class HungNodeActor:
    """A running job's actor whose node does not answer `info` until `answers` (a call
    asked meanwhile never does); its pulls answer, and say it ended once `ended`."""

    def __init__(self) -> None:
        self.answers = False
        self.ended = False
        self.pulls = 0
        self.info = SimpleNamespace(remote=self._info)
        self.pull = SimpleNamespace(remote=self._pull)
        self.release = SimpleNamespace(remote=self._release)

    def _info(self) -> asyncio.Future[dict[str, Any]]:
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self.answers:
            answer.set_result({"host": "node-a", "node_id": "n1"})
        return answer  # (else never done)

    async def _pull(self, *_: Any) -> dict[str, Any]:
        self.pulls += 1
        await asyncio.sleep(0.05)  # (a long poll, shortened)
        status = 0 if self.ended else None
        return {"out": b"", "err": b"", "status": status, "age": 0.0}

    async def _release(self) -> None:
        return None


def test_a_node_that_does_not_say_where_it_runs_does_not_hold_its_follow_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: `info` was awaited without a deadline before the first pull: the job's follow
    loop waited there for ever (no log pulled, its end never seen)."""
    monkeypatch.setattr(ray_follow, "INFO_TIMEOUT", INFO_TIMEOUT)
    actor, fake = HungNodeActor(), FakeRay([1])
    fake.answer({1: actor})  # type: ignore[dict-item]
    ex = executor(tmp_path, fake, monkeypatch)
    assert running(ex, tmp_path, 1)
    located: list[tuple[str, str]] = []
    # As launched: a job without GPUs, whose node Ray chose (ray.py, `located`).
    ex._runs[handle_of(1, 1)].locate = lambda host, node: located.append((host, node))

    async def scenario() -> None:
        ended = watched(ex, tmp_path, 1)
        await asyncio.wait_for(_until(lambda: actor.pulls), INFO_TIMEOUT + 2.0)
        assert located == []
        actor.answers = True  # its node is back: asked again after a pull, it is recorded
        await asyncio.wait_for(_until(lambda: located), 5)
        assert located == [("node-a", "n1")]
        actor.ended = True
        status = await asyncio.wait_for(ended, 5)
        assert status.exit_code == 0

    asyncio.run(scenario())
