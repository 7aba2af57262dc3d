"""A wait over more jobs than one `GET /jobs/wait` holds (500 ids) is one `POST /jobs/wait`:
100,000 ids in 500s took 200 requests, each reading its jobs again, 1.5 s past a wait's
timeout. A daemon from before the POST is asked with its GET, 500 ids at a time."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from daemon_relay import relayed

from conftest import Herd
from gpuherd.client import Client
from gpuherd.errors import InvalidValue

JOBS = 1_200  # more than two GETs' worth


class Counting(Client):
    """A client that notes each request's method and path (without the query)."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.asked: list[str] = []

    def request(self, method: str, path: str, body: Any = None, raw: bool = False) -> Any:
        self.asked.append(f"{method} {path.split('?')[0]}")
        return super().request(method, path, body, raw)


def held_batch(herd: Herd) -> list[int]:
    """JOBS held jobs in one batch: every 100th exits 3, the others succeed."""
    jobs = [
        {"command": "exit 3" if n % 100 == 0 else "true", "cwd": "/", "gpus": 0, "hold": True}
        for n in range(JOBS)
    ]
    ids: list[int] = herd.client.post("/jobs", {"jobs": jobs})["ids"]
    return ids


def test_a_wait_over_many_jobs_is_one_request_and_answers_each_jobs_state(
    shared_daemon: Herd,
) -> None:
    daemon = shared_daemon
    ids = held_batch(daemon)
    # Released across the GET's 500-id chunks: the first, the middle and the last ones.
    released = ids[:20] + ids[590:610] + ids[-20:]
    daemon.client.post("/jobs/release", {"ids": released})
    client = Counting(daemon.home)
    assert client.wait_for(released).done
    assert client.asked == ["POST /jobs/wait"]

    client.asked.clear()
    began = time.monotonic()
    waited = client.wait_for(ids, began + 1.0)
    assert time.monotonic() - began < 1.0 + 5  # the timeout's time, not one per chunk
    assert client.asked == ["POST /jobs/wait"]
    assert not waited.done
    failing = {i for n, i in enumerate(ids) if n % 100 == 0}
    expected = {
        i: ("held" if i not in released else "failed" if i in failing else "succeeded") for i in ids
    }
    assert waited.states == expected
    assert sorted(waited.endings) == sorted(failing & set(released))
    assert {(e["state"], e["outcome"], e["exit_code"]) for e in waited.endings.values()} == {
        ("failed", "exit", 3)
    }

    # The rest cancelled: done, every job named, the cancelled ones' endings too.
    daemon.client.post("/jobs/kill", {"ids": ids})
    client.asked.clear()
    waited = client.wait_for(ids)
    assert client.asked == ["POST /jobs/wait"]
    assert waited.done
    assert waited.states == {i: ("cancelled" if i not in released else expected[i]) for i in ids}
    assert len(waited.endings) == JOBS - len(released) + len(failing & set(released))


def held_note(ids: list[int]) -> str:
    """What `wait` says first of these held jobs, named (consecutive ids)."""
    them = f"{ids[0]}-{ids[-1]}"
    return (
        f"gpuherd: jobs {them} are held: waiting until they are released"
        f" (gpuherd release {them} lets them run)"
    )


def test_the_cli_waits_with_one_request_and_says_the_same(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    ids = held_batch(daemon)
    with relayed(daemon, tmp_path, older=False) as (env, requests):
        gave_up = daemon.cli(
            "wait", f"{ids[0]}-{ids[-1]}", "--timeout", "0.5s", env=env, check=False
        )
    assert (gave_up.returncode, gave_up.stdout) == (2, "")
    assert gave_up.stderr == (
        f"{held_note(ids)}\ngave up waiting; still unfinished: {ids[0]}-{ids[-1]}\n"
    )
    # The wait in one request; before it, the held jobs listed, whose release it waits for,
    # and, as some are named, their reasons (one held for an unwatched run waits for its end).
    asked = [" ".join(line.split()[:2]).split("?")[0] for line in requests]
    assert asked == ["GET /api/v1/jobs", "GET /api/v1/jobs", "POST /api/v1/jobs/wait"]


def test_an_older_daemon_is_asked_with_its_get_500_ids_at_a_time(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    ids = held_batch(daemon)
    daemon.client.post("/jobs/kill", {"ids": ids[:10]})
    with relayed(daemon, tmp_path, older=True) as (env, requests):
        done = daemon.cli("wait", f"{ids[0]}-{ids[-1]}", "--timeout", "0.5s", env=env, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"{held_note(ids[10:])}\ngave up waiting; still unfinished: {ids[10]}-{ids[-1]}\n"
    )
    asked = [" ".join(line.split()[:2]).split("?")[0] for line in requests]
    listed = ["GET /api/v1/jobs"] * 2  # (the held jobs, then their reasons: above)
    looked = [f"GET /api/v1/jobs/{i}" for i in ids[:10]]  # (the others': cli/stuck_notes.py)
    assert asked == [*listed, *looked, "POST /api/v1/jobs/wait"] + ["GET /api/v1/jobs/wait"] * 3
    # The GET itself, as a script would send it: a chunk's answer.
    answer = daemon.client.get("/jobs/wait", ids=ids[:500], timeout=0)
    assert answer["done"] is False
    assert answer["states"] == {
        str(i): ("cancelled" if n < 10 else "held") for n, i in enumerate(ids[:500])
    }


def test_a_post_the_daemon_cannot_take_is_refused_in_one_line(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    (job,) = daemon.client.post("/jobs", {"jobs": [{"command": "true", "cwd": "/", "hold": True}]})[
        "ids"
    ]
    refused = {
        "timeout must be between 0 and 3600 seconds, got 5000": {"ids": [job], "timeout": 5000},
        "timeout must be between 0 and 3600 seconds, got -1": {"ids": [job], "timeout": -1},
        "ids is empty: name the jobs to wait for": {"ids": [], "timeout": 0},
        "invalid request: timout: unknown field (misspelt?)": {"ids": [job], "timout": 0},
        "invalid request: ids.0: Input should be a valid integer": {"ids": [str(job)]},
        "100,001 ids: a wait takes at most 100,000; send them in pieces": {
            "ids": [job] * 100_001,
            "timeout": 0,
        },
    }
    for said, body in refused.items():
        with pytest.raises(InvalidValue) as caught:
            daemon.client.post("/jobs/wait", body)
        assert str(caught.value) == said
    answer = daemon.client.post("/jobs/wait", {"ids": [job], "timeout": 0})
    assert answer == {"done": False, "states": {str(job): "held"}, "endings": {}}
