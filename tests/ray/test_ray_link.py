"""The daemon's watcher of its Ray cluster (executors/ray_link.py), with a fake node listing:
whether the cluster answers is learned off the event loop, and said at once."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from conftest import need, wait_for

need("ray", "ray")

from gpuherd.executors import ray_link
from gpuherd.executors.ray_link import UNAVAILABLE_LIMIT, ClusterDown, ClusterLink

NODE = {"NodeID": "n1", "Alive": True, "Resources": {"GPU": 2.0}}


class FakeGcs:
    """A node listing that answers, hangs (until `answer()`), or fails."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()
        self.error: Exception | None = None

    def read(self) -> list[dict[str, Any]]:
        self.open.wait()
        if self.error is not None:
            raise self.error
        return [NODE]

    def hang(self) -> None:
        self.open.clear()

    def answer(self) -> None:
        self.error = None
        self.open.set()


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUHERD_RAY_LOST_AFTER", raising=False)
    monkeypatch.setattr(ray_link, "POLL", 0.05)
    monkeypatch.setattr(ray_link, "STALE", 0.3)


def refused_at_once(call: Any) -> str:
    began = time.monotonic()
    with pytest.raises(ClusterDown) as caught:
        call()
    # Not a wait for the GCS that hangs: that is CALL_TIMEOUT (5 s) or for ever. (An in-process
    # raise; 2 s leaves a loaded machine's scheduling out of it.)
    assert time.monotonic() - began < 2
    return str(caught.value)


def test_a_head_that_hangs_is_down_at_once_for_the_loop_and_back_when_it_answers() -> None:
    gcs = FakeGcs()
    link = ClusterLink("192.0.2.2:6379", gcs.read)
    back = threading.Event()
    link.on_back = back.set
    link.start()
    try:
        assert link.nodes() == [NODE] and link.outage() is None
        gcs.hang()  # the watcher's read now blocks, as Ray's does while the GCS is away
        wait_for(lambda: link.outage() is not None, 5, "the cluster to count as down")
        said = refused_at_once(link.nodes)
        assert said.startswith("the Ray cluster at 192.0.2.2:6379 does not answer (since ")
        assert link.reason() == said
        assert refused_at_once(lambda: link.call(lambda: 1)) == said  # nothing new waits
        assert not back.is_set()
        gcs.answer()
        wait_for(back.is_set, 5, "the link to say the cluster is back")
        assert link.outage() is None and link.nodes() == [NODE]
    finally:
        link.stop()
        gcs.answer()


def test_a_new_cluster_at_the_address_asks_for_a_restart() -> None:
    gcs = FakeGcs()
    link = ClusterLink("192.0.2.2:6379", gcs.read)
    link.start()
    try:
        gcs.error = RuntimeError("RPC error: WrongClusterID: Perhaps the client is accessing GCS")
        wait_for(lambda: link.outage() is not None, 5, "the cluster to count as down")
        down = link.outage()
        assert down is not None and down.restarted
        said = refused_at_once(link.nodes)
        assert said == (
            "the Ray cluster at 192.0.2.2:6379 was started again (a new cluster): restart "
            "the daemon to join it (`gpuherd daemon stop; gpuherd daemon start`)"
        )
    finally:
        link.stop()


def test_a_call_waits_for_its_deadline_at_most() -> None:
    link = ClusterLink("192.0.2.2:6379", FakeGcs().read)  # not watching: never down
    assert link.call(lambda: 5) == 5
    with pytest.raises(ValueError):
        link.call(lambda: int("x"))
    gate = threading.Event()
    began = time.monotonic()
    with pytest.raises(ClusterDown, match=r"did not answer within 0\.2s"):
        link.call(gate.wait, timeout=0.2)
    assert time.monotonic() - began < 3  # its deadline, not CALL_TIMEOUT's 5 s nor for ever
    gate.set()


def test_what_a_call_given_up_on_returns_late_goes_to_abandoned() -> None:
    """An actor created after its launch gave up waiting is killed (RayExecutor._kill_late):
    nothing would follow it, and its job would run beside its next attempt."""
    link = ClusterLink("192.0.2.2:6379", FakeGcs().read)
    gate, late = threading.Event(), threading.Event()
    abandoned: list[str] = []

    def created() -> str:
        gate.wait()
        return "actor"

    def kill(actor: str) -> None:
        abandoned.append(actor)
        late.set()

    with pytest.raises(ClusterDown):
        link.call(created, timeout=0.1, abandoned=kill)
    assert abandoned == []
    gate.set()
    assert late.wait(5.0)
    assert abandoned == ["actor"]
    assert link.call(lambda: "in time", abandoned=kill) == "in time"
    assert abandoned == ["actor"]


def test_an_unheard_actor_is_lost_after_lost_after_while_the_head_is_away() -> None:
    gcs = FakeGcs()
    link = ClusterLink("192.0.2.2:6379", gcs.read)
    assert link.lost_after == 300.0  # GPUHERD_RAY_LOST_AFTER unset
    link.lost_after = 60.0
    link.start()
    try:
        # The cluster answers: only many failed pulls in a row make the attempt lost.
        assert link.gives_up(UNAVAILABLE_LIMIT - 1, 1000.0) is None
        assert "did not answer" in (link.gives_up(UNAVAILABLE_LIMIT, 1.0) or "")
        gcs.hang()
        wait_for(lambda: link.outage() is not None, 5, "the cluster to count as down")
        # Away: not at once, whatever the pulls; after `lost_after` s unheard, lost.
        assert link.gives_up(UNAVAILABLE_LIMIT * 10, 59.0) is None
        note = link.gives_up(1, 61.0) or ""
        assert "does not answer" in note and "went unheard for 61s: lost" in note
    finally:
        link.stop()
        gcs.answer()
