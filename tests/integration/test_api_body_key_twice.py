"""A key given twice in a JSON request body is refused (422), named by its path, as a query
parameter given twice is (`query.limit: given 2 times: give it once`), over a real daemon's
socket. json.loads kept the last value: `{"ids": [1], "ids": [2], "name": "dup"}` edited job
2 alone and answered 200, without a word of job 1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Herd, paused_with_a_held_job

JOB = '{"command": "true", "cwd": "/tmp", "hold": true}'
TWICE = '{"command": "true", "cwd": "/tmp", "hold": true, "command": "false"}'


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with paused_with_a_held_job(tmp_path_factory) as herd:  # job 1, held
        herd.submit("--hold", "--", "true")  # job 2
        yield herd


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        ("/jobs/edit", '{"ids": [1], "ids": [2], "name": "dup"}', "ids: given 2 times"),
        (
            "/jobs/edit",
            '{"ids": [1], "name": "a", "name": "b", "name": "c"}',
            "name: given 3 times",
        ),
        (
            "/jobs",
            f'{{"jobs": [{JOB}, {JOB[:-1]}, "command": "false"}}]}}',
            "jobs.1.command: given 2 times",
        ),
        ("/jobs", f'{{"jobs": [{JOB}], "env": {{"A": "1", "A": "2"}}}}', "env.A: given 2 times"),
        ("/jobs/kill", '{"ids": [1], "ids": [2]}', "ids: given 2 times"),
    ],
)
def test_a_key_given_twice_is_refused_and_nothing_is_done(
    herd: Herd, path: str, body: str, said: str
) -> None:
    before = herd.all_jobs()
    status, _, answer = herd.request("POST", "/api/v1" + path, body)
    expected = f"invalid request: {said}: give it once"
    assert (status, json.loads(answer)) == (422, {"error": expected})
    assert herd.all_jobs() == before


def test_the_same_key_in_two_objects_is_no_repeat(herd: Herd) -> None:
    status, _, answer = herd.request("POST", "/api/v1/jobs/edit", '{"ids": [1], "name": "one"}')
    assert status == 200, answer
    body = f'{{"jobs": [{JOB}, {JOB}], "env": {{"PATH": "/usr/bin:/bin"}}}}'
    status, _, answer = herd.request("POST", "/api/v1/jobs", body)
    assert status == 200 and len(json.loads(answer)["ids"]) == 2, answer


def test_a_repeat_before_a_nesting_too_deep_to_read_again_is_said_in_general(herd: Herd) -> None:
    # The path is found by reading the body again, deeper than Python reads here: the line
    # says what is wrong without it, not a 500.
    deep = '[{"a": 1, "a": 2}, ' + "[" * 100_000 + "]" * 100_000 + "]"
    status, _, answer = herd.request("POST", "/api/v1/jobs/edit", deep)
    said = "invalid request: the body gives a key twice in an object: give it once"
    assert (status, json.loads(answer)) == (422, {"error": said})
