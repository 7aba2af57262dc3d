"""The words of the HTTP API's refusals, over the Unix socket of a real daemon: a job that is
no object, a number past 64 bits (one shape wherever it is sent, with its unit), a POST to a
job's path (405), and `attempt=0` on a log. A refused request changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Herd, paused_with_a_held_job

HUGE = "99999999999999999999"
AT_MOST = "is too large (at most 2**63 - 1)"


def send(herd: Herd, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], str]:
    """The status, headers and `error` line of a request to /api/v1`path`; `body`, JSON text
    (a str: sent as written, so that 1e400 and 2**64 reach the daemon as such)."""
    sent = body if body is None or isinstance(body, str) else json.dumps(body)
    status, heads, answer = herd.request(method, "/api/v1" + path, sent)
    return status, heads, str(json.loads(answer).get("error"))


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with paused_with_a_held_job(tmp_path_factory) as herd:
        yield herd


def jobs(herd: Herd) -> Any:
    return herd.client.get("/jobs", all=True)["jobs"]


JOB = '{"command": "true", "cwd": "/tmp"'
NOT_OBJECTS = [  # each said `Input should be a dictionary or an instance of SubmitItem`
    ('{"jobs": [1]}', "jobs.0", "1"),
    (f'{{"jobs": [{JOB}}}, "echo hi"]}}', "jobs.1", '"echo hi"'),
]


@pytest.mark.parametrize(("body", "where", "got"), NOT_OBJECTS)
def test_a_job_that_is_no_object_is_said_in_the_apis_words(
    herd: Herd, body: str, where: str, got: str
) -> None:
    before = jobs(herd)
    status, _, error = send(herd, "POST", "/jobs", body)
    job = 'a job is a JSON object, as {"command": "...", "cwd": "/abs/dir"}'
    assert (status, error) == (422, f"invalid request: {where}: {job}, got {got}")
    assert "SubmitItem" not in error
    assert jobs(herd) == before


MEM_UNIT = "give mem in bytes, of each GPU's memory (1 GiB: 1073741824)"
TOO_LARGE = [
    # `mem: inf is too large`: no unit, and Python's word for what JSON sent as 1e400
    (
        "POST",
        "/jobs",
        f'{{"jobs": [{JOB}, "mem": 1e400}}]}}',
        f"jobs.0.mem Infinity (a number past 1.8e308) {AT_MOST}: {MEM_UNIT}",
    ),
    # was `invalid request: jobs.0.mem: 1e+30 is too large (...)`
    (
        "POST",
        "/jobs",
        f'{{"jobs": [{JOB}, "mem": 1e30}}]}}',
        f"jobs.0.mem 1e+30 {AT_MOST}: {MEM_UNIT}",
    ),
    # was `priority N`, the job it is of unsaid, where a float said `jobs.0.mem`
    (
        "POST",
        "/jobs",
        f'{{"jobs": [{JOB}, "priority": {HUGE}}}]}}',
        f"jobs.0.priority {HUGE} {AT_MOST}",
    ),
    # was `invalid request: query.limit: N is too large (...)`, where `ids N` and `job_id N`
    ("GET", f"/jobs?limit={HUGE}", None, f"limit {HUGE} {AT_MOST}"),
    ("GET", f"/jobs/1/log?attempt={HUGE}", None, f"attempt {HUGE} {AT_MOST}"),
    ("GET", f"/jobs/{HUGE}", None, f"job_id {HUGE} {AT_MOST}"),
    ("GET", f"/jobs/wait?ids={HUGE}", None, f"ids {HUGE} {AT_MOST}"),
    ("POST", "/jobs/kill", f'{{"ids": [1, {HUGE}]}}', f"ids {HUGE} {AT_MOST}"),
]


@pytest.mark.parametrize(("method", "path", "body", "says"), TOO_LARGE)
def test_a_number_past_64_bits_is_said_in_one_shape(
    herd: Herd, method: str, path: str, body: str | None, says: str
) -> None:
    before = jobs(herd)
    status, _, error = send(herd, method, path, body)
    assert (status, error) == (422, says)
    assert jobs(herd) == before


@pytest.mark.parametrize("body", [{"ids": [1]}, None])
def test_a_post_to_a_jobs_path_is_a_405_naming_get(herd: Herd, body: Any) -> None:
    """It was a 404 `unknown action '1'`: the path is a job's, which GET takes."""
    before = jobs(herd)
    status, headers, error = send(herd, "POST", "/jobs/1", body)
    assert status == 405
    assert headers["allow"] == "GET, HEAD"
    assert error == "POST is not allowed on /api/v1/jobs/1: use GET (/openapi.json describes it)"
    assert jobs(herd) == before
    # An action that is none is still told the actions there are.
    status, _, error = send(herd, "POST", "/jobs/explode", {"ids": [1]})
    assert (status, error.split(":")[0]) == (404, "unknown action 'explode'")


UNKNOWN_ACTIONS = [  # a path that names no endpoint, with a body it would refuse anyway
    ("/jobs/explode", None),  # 415: "the body must be JSON, sent with 'Content-Type: …'"
    ("/jobs/explode", {"idz": [1]}),  # 422: "ids: Field required; idz: unknown field"
    ("/gpus/0/explode", {"x": 1}),  # 422: "POST /api/v1/gpus/0/explode takes no body"
]


@pytest.mark.parametrize(("path", "body"), UNKNOWN_ACTIONS)
def test_an_unknown_action_is_said_before_what_its_body_lacks(
    herd: Herd, path: str, body: Any
) -> None:
    """The body was looked at first: fixing it (or dropping it) only led to the 404. The
    path's error, whatever the body, as with a body the endpoint would take."""
    before = jobs(herd)
    good = {"ids": [1]} if path.startswith("/jobs") else None
    status, _, error = send(herd, "POST", path, body)
    assert status == 404, error
    assert error == send(herd, "POST", path, good)[2]
    assert jobs(herd) == before


@pytest.mark.parametrize("path", ["/jobs/1/log?attempt=0", "/jobs/1/log/follow?attempt=0"])
def test_attempt_0_is_refused_not_taken_for_the_latest(herd: Herd, path: str) -> None:
    """`attempt=0` answered the latest attempt's log, undocumented; no client sends it (the
    CLI and the Python API refuse it), and attempts are numbered from 1."""
    status, _, error = send(herd, "GET", path)
    assert (status, error) == (
        422,
        "invalid request: query.attempt: attempts are numbered from 1, got 0: "
        "leave attempt out for the latest",
    )


BYTES = [  # each was taken as so many bytes: any number of `"mem": 16` jobs shared a GPU
    ("/jobs", f'{{"jobs": [{JOB}, "mem": 16}}]}}', "mem (--mem) 16 B", "16 GiB is 17179869184"),
    ("/jobs", f'{{"jobs": [{JOB}, "ram": 2000}}]}}', "ram (--ram) 2,000 B", "2000 MiB is"),
    ("/jobs/edit", '{"ids": [1], "mem": 1}', "job 1: mem (--mem) 1 B", "1 GiB is 1073741824"),
]


@pytest.mark.parametrize(("path", "body", "begins", "example"), BYTES)
def test_a_memory_request_of_a_few_bytes_is_refused_as_the_cli_refuses_it(
    herd: Herd, path: str, body: str, begins: str, example: str
) -> None:
    """As `--mem 16` and `mem=16` are (a number without a unit under 1 MiB), a raw request's
    few bytes are refused, saying that a request gives bytes; 1 MiB itself is taken."""
    before = jobs(herd)
    _, _, error = herd.request("POST", "/api/v1" + path, body)
    said = json.loads(error)
    line = said.get("error") or said["results"][0]["message"]
    assert line.startswith(f"{begins} is under 1 MiB, the least a job may ask for"), line
    assert example in line
    assert jobs(herd) == before
    taken = herd.client.post("/jobs/edit", {"ids": [1], "mem": 2**20})
    assert taken["results"][0]["ok"], taken
