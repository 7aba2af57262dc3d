"""A daemon on a Ray cluster leaves its jobs' actors running when it stops, for the next
daemon. The cluster coming back from an outage just then (the link's thread says so, on the
loop, as the daemon stops) must not kill them: before, the closed executor, which follows no
run any more, took every actor of the home for one no running attempt owns, and killed it.
With a fake Ray, as test_ray_lookup.py's: the moment cannot be made with a real cluster."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import need

need("ray", "ray")

from test_ray_lookup import FakeActor, FakeRay, executor


def test_the_cluster_back_as_the_daemon_stops_kills_no_actor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeRay([1])  # job 1's actor runs on, left for the next daemon
    fake.answer({1: FakeActor()})
    listings: list[bool] = []

    def listing(all_namespaces: bool = False) -> list[dict[str, str]]:
        listings.append(all_namespaces)
        return fake.list(all_namespaces)

    fake.util = SimpleNamespace(list_named_actors=listing)
    ray_executor = executor(tmp_path, fake, monkeypatch)
    ray_executor.close()  # the daemon stops
    ray_executor._cluster_back()  # the link's word, queued on the loop before the close
    # (The actors are listed, then each not owned is killed in a thread of its own: no
    # listing, no kill.)
    assert listings == []
    assert fake.killed == []
