"""A job id, GPU index or attempt number in an API path or query is plain digits: `/jobs/1.0`,
`/jobs/+1`, `/jobs/%201` were job 1 and `/jobs/1_0` job 10, where `/jobs/abc` was refused.
A job id in a body is from 1 up: `"after": [-3]` answered 404 (`no job -3`), as if such a job
might be, and `{"ids": [0]}` to a verb one 404 result. Each is now a 422 that names the value,
and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Herd, paused_with_a_held_job


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """A daemon (2 fake GPUs, queue paused) whose job 1 is held: nothing ever runs."""
    with paused_with_a_held_job(tmp_path_factory) as herd:
        yield herd


def refusal(herd: Herd, method: str, path: str, body: Any = None) -> tuple[int, str]:
    sent = None if body is None else json.dumps(body)
    status, _, raw = herd.request(method, "/api/v1" + path, sent)
    return status, json.loads(raw).get("error", "")


def unchanged(herd: Herd) -> Any:
    gpus = [(g["index"], g["state"]) for g in herd.client.get("/gpus")["gpus"]]
    return herd.all_jobs(), gpus


NOT_DIGITS = ["1.0", "+1", "%201", "1_0", "-1", "%D9%A1", "1e0", "0x1"]
"""Ways to write job 1 (or 10) that are no plain digits; `%D9%A1` is an Arabic-Indic one."""

JOB_ROUTES = [
    ("GET", "/jobs/{id}", None),
    ("GET", "/jobs/{id}/log", None),
    ("GET", "/jobs/{id}/log/follow", None),
    ("POST", "/jobs/{id}/priority", {"priority": 3}),
    ("POST", "/jobs/{id}/move", {"first": True}),
]


@pytest.mark.parametrize(("method", "path", "body"), JOB_ROUTES, ids=[p for _, p, _ in JOB_ROUTES])
def test_a_job_id_in_a_path_that_is_no_plain_digits_is_refused_as_abc_is(
    held: Herd, method: str, path: str, body: Any
) -> None:
    before = unchanged(held)
    for written in [*NOT_DIGITS, "abc"]:
        status, error = refusal(held, method, path.format(id=written), body)
        shown = {"%201": " 1", "%D9%A1": "\u0661"}.get(written, written)
        assert (status, error) == (
            422,
            f"invalid request: path.job_id: {shown!r} is no job id: give its number in plain "
            "digits, as 12",
        ), written
    assert unchanged(held) == before
    # Plain digits name the job, a leading zero too.
    assert refusal(held, "GET", "/jobs/01")[0] == 200


def test_an_id_in_a_query_is_plain_digits_too(held: Herd) -> None:
    status, error = refusal(held, "GET", "/jobs/wait?ids=%2B1&timeout=0")
    assert (status, error) == (
        422,
        "invalid request: query.ids.0: '+1' is no job id: give its number in plain digits, as 12",
    )
    assert refusal(held, "GET", "/jobs/wait?ids=1&timeout=0")[0] == 200
    status, error = refusal(held, "GET", "/jobs/1/log?attempt=1.0")
    assert (status, error) == (
        422,
        "invalid request: query.attempt: '1.0' is no attempt number: give its number in plain "
        "digits, as 1 (numbered from 1)",
    )


def test_a_gpu_index_in_a_path_is_plain_digits_and_a_negative_one_says_its_range(
    held: Herd,
) -> None:
    before = unchanged(held)
    for method, path in [("DELETE", "/gpus/{i}"), ("POST", "/gpus/{i}/drain")]:
        for written, shown in [("+0", "+0"), ("0.0", "0.0"), ("%200", " 0"), ("abc", "abc")]:
            assert refusal(held, method, path.format(i=written)) == (
                422,
                f"invalid request: path.index: {shown!r} is no GPU index: give its number in "
                "plain digits, as 0 (`gpuherd gpus` lists them)",
            )
        # A minus sign is read, and told as a body's `index` is (test_api_requests.py).
        assert refusal(held, method, path.format(i="-1")) == (
            422,
            "GPU -1 is not a GPU index: use 0 to 4095",
        )
    assert unchanged(held) == before


def _job(**fields: Any) -> dict[str, Any]:
    return {"jobs": [{"command": "true", "cwd": "/", "hold": True, **fields}]}


BODY_IDS = [
    ("/jobs", _job(after=[-3]), "jobs.0.after.0", -3),
    ("/jobs", _job(after_any=[1, 0]), "jobs.0.after_any.1", 0),
    ("/jobs", _job(after_fail=[-1]), "jobs.0.after_fail.0", -1),
    ("/jobs/kill", {"ids": [-3]}, "ids.0", -3),
    ("/jobs/hold", {"ids": [1, 0]}, "ids.1", 0),
    ("/jobs/edit", {"ids": [0], "gpus": 2}, "ids.0", 0),
    ("/jobs/edit", {"ids": [1], "after": [-2]}, "after.0", -2),
    ("/jobs/priority", {"ids": [-1], "priority": 2}, "ids.0", -1),
    ("/jobs/wait", {"ids": [-1], "timeout": 0}, "ids.0", -1),
    ("/jobs/1/move", {"before": -3}, "before", -3),
    ("/jobs/1/move", {"swap": 0}, "swap", 0),
]


@pytest.mark.parametrize(
    ("path", "body", "field", "value"), BODY_IDS, ids=[f"{p} {f}" for p, _, f, _ in BODY_IDS]
)
def test_a_job_id_below_1_in_a_body_is_an_invalid_value_not_a_missing_job(
    held: Herd, path: str, body: Any, field: str, value: int
) -> None:
    before = unchanged(held)
    assert refusal(held, "POST", path, body) == (
        422,
        f"invalid request: {field}: job ids are whole numbers from 1 up, got {value}",
    )
    assert unchanged(held) == before


def test_a_sweeps_after_below_1_is_refused_alike(held: Herd) -> None:
    sweep = {
        "spec": {"name": "s", "command": "echo {x}", "grid": {"x": [1]}},
        "cwd": str(held.home.parent),
        "options": {"after": [0], "hold": True},
    }
    assert refusal(held, "POST", "/sweeps", sweep) == (
        422,
        "invalid request: options.after.0: job ids are whole numbers from 1 up, got 0",
    )
    assert held.client.get("/sweeps")["sweeps"] == []


def test_the_schema_says_a_job_id_in_a_body_is_from_1() -> None:
    from gpuherd.api.app import create_app  # (no daemon: the app's schema alone)

    schema = create_app(None, pid=1, socket_path="/nowhere").openapi()
    ids = schema["components"]["schemas"]["IdsRequest"]["properties"]["ids"]
    assert ids["items"]["minimum"] == 1
