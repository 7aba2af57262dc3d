"""`Sweep.kill()`, `hold()` and `release()` ask the daemon for the ids of the sweep's jobs in
the states they act on, not for the listing of them (`herd.jobs`): each listed job is worded
(why it waits, its files...), and a sweep of 40,000 queued points took seconds to list and
read for a verb that sends their ids. Their answers are as they were (real daemon)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest

from conftest import Herd
from gpuherd.pyapi import connect


def test_a_sweeps_verbs_ask_for_the_ids_of_its_jobs_alone(
    daemon: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    herd = connect(home=daemon.home, start=False)
    herd.pause()  # (its points stay queued once released)
    sweep = herd.sweep("true {x}", {"x": [1, 2, 3]}, name="ids", gpus=0, cwd=tmp_path)
    other = herd.submit("true", gpus=0)  # (no point of it: never named)
    asked: list[dict[str, Any]] = []
    get = herd.client.get

    def listed(path: str, **query: Any) -> Any:
        if path == "/jobs":
            asked.append(query)
        return get(path, **query)

    def refused(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError("the sweep's jobs listed whole")

    monkeypatch.setattr(herd.client, "get", listed)
    monkeypatch.setattr(herd, "jobs", refused)
    assert sweep.hold() == dict.fromkeys(sweep.ids, "held")
    assert sweep.hold() == {}  # none is queued now
    assert sweep.release() == dict.fromkeys(sweep.ids, "queued")
    assert sweep.kill() == dict.fromkeys(sweep.ids, "cancelled")
    assert sweep.kill() == {}
    assert [query.get("ids_only") for query in asked] == [True] * 5
    assert {query["sweep"] for query in asked} == {"ids"}
    assert other.state() == "queued"
    herd.resume()
