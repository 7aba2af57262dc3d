"""`herd.wait(sweep)` waits for each point's latest job, named by id, and asks for the sweep's
jobs' ids alone: it listed every job of the sweep (40,000 points' jobs, each worded, ~1.5 s of
the wait) only to read their ids. A real daemon (4 fake GPUs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import Herd


@pytest.fixture
def api(shared_daemon: Herd) -> gpuherd.Herd:
    return gpuherd.connect(shared_daemon.home, start=False)


def test_a_sweeps_wait_names_each_points_latest_job_and_lists_none(
    api: gpuherd.Herd, shared_work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options: dict[str, Any] = {"gpus": 0, "cwd": shared_work, "name": "wait-ids"}
    options["results_dir"] = shared_work / "results"
    first = api.sweep("exit {code}", {"code": [0, 3]}, **options)
    done, failed = first.ids
    assert api.wait(first, timeout=60) == {done: "succeeded", failed: "failed"}
    again = api.sweep("exit {code}", {"code": [0, 3]}, **options)  # the failed point reruns
    (rerun,) = again.ids
    asked: list[tuple[str, str]] = []
    request = api.client.request

    def recorded(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        asked.append((method, path))
        return request(method, path, *args, **kwargs)

    monkeypatch.setattr(api.client, "request", recorded)
    # The failed point's first job is no point's latest now: not waited for, nor named.
    assert api.wait(again, timeout=60) == {done: "succeeded", rerun: "failed"}
    listings = [path for method, path in asked if method == "GET" and path.startswith("/jobs?")]
    assert listings == []
    assert ("POST", "/jobs/wait") in asked
