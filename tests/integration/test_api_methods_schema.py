"""A wrong method and what /openapi.json says, over the Unix socket of a real daemon: a 405
names the methods the path takes (its `Allow` and its line), and the schema describes the
errors and the streams as the daemon answers them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Herd, UnixConnection, paused_with_a_held_job


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with paused_with_a_held_job(tmp_path_factory) as herd:
        yield herd


WRONG_METHODS = [
    # Allow was POST alone, GET being the route of another method on the same path.
    ("PUT", "/api/v1/jobs", "GET, HEAD, POST", "use GET or POST"),
    ("PUT", "/api/v1/jobs/wait", "GET, HEAD, POST", "use GET or POST"),
    # Was a 422 `path.job_id: Input should be a valid integer`: GET /jobs/{job_id} took it.
    ("GET", "/api/v1/jobs/kill", "POST", "use POST"),
    ("GET", "/api/v1/jobs/edit", "POST", "use POST"),
    ("GET", "/api/v1/jobs/retry-held", "POST", "use POST"),
    ("DELETE", "/api/v1/jobs/kill", "POST", "use POST"),
    ("DELETE", "/api/v1/jobs/1", "GET, HEAD", "use GET"),
    ("GET", "/api/v1/queue/pause", "POST", "use POST"),
    ("GET", "/api/v1/gpus/0/drain", "POST", "use POST"),
    ("GET", "/api/v1/gpus/0", "DELETE", "use DELETE"),
]


@pytest.mark.parametrize(("method", "path", "allow", "use"), WRONG_METHODS)
def test_a_wrong_method_is_a_405_naming_the_methods_to_use(
    herd: Herd, method: str, path: str, allow: str, use: str
) -> None:
    before = herd.client.get("/jobs", all=True)
    status, headers, body = herd.request(method, path)
    assert status == 405, body
    assert headers["allow"] == allow
    line = f"{method} is not allowed on {path}: {use} (/openapi.json describes it)"
    assert json.loads(body) == {"error": line}
    assert herd.client.get("/jobs", all=True) == before


def test_a_path_no_route_takes_is_a_404_or_its_own_refusal(herd: Herd) -> None:
    # No method takes `abc` there (no job id, no verb): no such endpoint, not a 405.
    status, headers, body = herd.request("DELETE", "/api/v1/jobs/abc")
    assert (status, json.loads(body)) == (
        404,
        {"error": "no such endpoint: DELETE /api/v1/jobs/abc (/openapi.json lists them)"},
    )
    assert "allow" not in headers
    # The right method with a bad value is still that value's refusal.
    status, _, body = herd.request("GET", "/api/v1/jobs/abc")
    assert status == 422
    assert json.loads(body)["error"].startswith("invalid request: path.job_id: ")
    status, _, body = herd.request("HEAD", "/api/v1/jobs/kill")
    assert (status, body) == (405, b"")


@pytest.fixture(scope="module")
def schema(herd: Herd) -> dict[str, Any]:
    status, _, body = herd.request("GET", "/openapi.json")
    assert status == 200
    answer: dict[str, Any] = json.loads(body)
    return answer


def test_the_schema_describes_errors_as_they_are_answered(
    herd: Herd, schema: dict[str, Any]
) -> None:
    # FastAPI's {"detail": [...]} before, which no answer of the daemon's is.
    schemas = schema["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    assert schemas["Error"]["required"] == ["error"]
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert responses["422"]["content"] == error, (method, path)
            assert responses["default"]["content"] == error, (method, path)
    # what a 422 of an endpoint with no parameters looks like: that Error
    status, _, body = herd.request("POST", "/api/v1/queue/pause?x=1")
    assert status == 422 and set(json.loads(body)) == {"error"}


def test_the_schema_lists_the_actions_a_path_takes(schema: dict[str, Any]) -> None:
    def enum(path: str) -> list[str]:
        (param,) = [p for p in schema["paths"][path]["post"]["parameters"] if p["name"] == "action"]
        return list(param["schema"]["enum"])

    assert enum("/api/v1/jobs/{action}") == [
        "kill", "rm", "retry", "retry-held", "pause", "resume", "hold", "release",
    ]  # fmt: skip
    assert enum("/api/v1/gpus/{index}/{action}") == ["drain", "enable"]


def test_the_schema_says_the_streams_are_event_streams(herd: Herd, schema: dict[str, Any]) -> None:
    for path in ("/api/v1/events", "/api/v1/jobs/{job_id}/log/follow"):
        content = schema["paths"][path]["get"]["responses"]["200"]["content"]
        assert list(content) == ["text/event-stream"], path
    status, headers, _ = herd.request("HEAD", "/api/v1/events")
    assert status == 200 and headers["content-type"].startswith("text/event-stream")


# ---- a body FastAPI could not read as JSON ----------------------------------------------------
# Was 400 "There was an error parsing the body" (FastAPI's line, saying not what to do), and
# a 500 with a traceback in daemon.log for an endpoint that takes no body.

DEEP = b'{"ids": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
NOT_UTF8 = b'{"ids": [1], "x": "\xff\xfe"}'
TOO_DEEP = (
    "invalid request: the body's JSON nests lists or objects too deeply to read: "
    "send them flat, as /openapi.json describes them"
)
BAD_BYTES = "invalid request: the body is not UTF-8 (byte 19 is 0xff): send JSON encoded as UTF-8"
PAUSE = "invalid request: POST /api/v1/queue/pause takes no body (/openapi.json describes it)"


@pytest.mark.parametrize(
    ("path", "body", "line"),
    [
        ("/api/v1/jobs", DEEP, TOO_DEEP),
        ("/api/v1/jobs/wait", DEEP, TOO_DEEP),
        ("/api/v1/jobs/hold", DEEP, TOO_DEEP),
        ("/api/v1/jobs", NOT_UTF8, BAD_BYTES),
        ("/api/v1/jobs/edit", NOT_UTF8, BAD_BYTES),
        ("/api/v1/queue/pause", DEEP, PAUSE),
        ("/api/v1/queue/resume", NOT_UTF8, PAUSE.replace("pause", "resume")),
    ],
    ids=lambda value: f"{len(value)} bytes" if isinstance(value, bytes) else "",  # (not DEEP)
)
def test_a_body_that_cannot_be_read_is_a_422_saying_why(
    herd: Herd, path: str, body: bytes, line: str
) -> None:
    before = herd.client.get("/jobs", all=True), herd.client.get("/daemon")["queue_paused"]
    conn = UnixConnection(herd.client.socket_path, timeout=30)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert (status, answer) == (422, {"error": line})
    assert (herd.client.get("/jobs", all=True), herd.client.get("/daemon")["queue_paused"]) == (
        before
    )
    assert "Traceback" not in (herd.home / "daemon.log").read_text()


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("/api/v1/jobs?limit=1&limit=50", "limit"),  # listed 50: the first value dropped
        ("/api/v1/jobs?all=true&ids_only=true&ids_only=false", "ids_only"),
        ("/api/v1/jobs/wait?ids=1&timeout=0&timeout=5", "timeout"),
        ("/api/v1/jobs/1/log?stream=stdout&stream=stderr", "stream"),
    ],
)
def test_a_query_value_given_twice_is_refused_not_dropped(
    herd: Herd, query: str, name: str
) -> None:
    status, _, body = herd.request("GET", query)
    line = f"invalid request: query.{name}: given 2 times: give it once"
    assert (status, json.loads(body)) == (422, {"error": line})


def test_a_repeatable_query_parameter_still_repeats(herd: Herd) -> None:
    status, _, body = herd.request("GET", "/api/v1/jobs?state=held&state=RUNNING&ids_only=true")
    assert status == 200 and json.loads(body)["ids"] == [1]
    status, _, body = herd.request("GET", "/api/v1/jobs/wait?ids=1&ids=1&timeout=0")
    assert status == 200 and json.loads(body)["states"] == {"1": "held"}
