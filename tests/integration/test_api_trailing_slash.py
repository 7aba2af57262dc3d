"""A path with a trailing `/` (`POST /api/v1/jobs/`), over a real daemon's socket: an API path
answers the one-line 404 naming the path to use, and does nothing. Starlette's slash redirect
answered an empty 307: `curl -s -X POST .../jobs/` (and urllib, which does not follow a 307
with a POST's body) submitted, killed or removed nothing, without a word. A browser's GET of
a dashboard page's address with a `/` is still sent to the page (307), its query kept."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import Herd, paused_with_a_held_job

JOB = {"command": "echo slash", "cwd": "/tmp"}


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with paused_with_a_held_job(tmp_path_factory) as herd:  # job 1, held
        yield herd


@pytest.mark.parametrize(
    ("method", "path", "body", "bare"),
    [
        ("POST", "/api/v1/jobs/", {"jobs": [JOB]}, "/api/v1/jobs"),
        ("POST", "/api/v1/jobs/kill/", {"ids": [1]}, "/api/v1/jobs/kill"),
        ("POST", "/api/v1/jobs/release//", {"ids": [1]}, "/api/v1/jobs/release"),
        ("DELETE", "/api/v1/jobs/1/", None, "/api/v1/jobs/1"),
        ("DELETE", "/api/v1/sweeps/", None, "/api/v1/sweeps"),
        ("GET", "/api/v1/jobs/", None, "/api/v1/jobs"),
    ],
)
def test_an_api_path_with_a_trailing_slash_is_a_404_naming_the_path_to_use(
    herd: Herd, method: str, path: str, body: object, bare: str
) -> None:
    before = herd.all_jobs()
    status, heads, answer = herd.request(method, path, None if body is None else json.dumps(body))
    said = f"no such endpoint: {method} {path}: leave out the trailing / ({bare})"
    assert (status, json.loads(answer)) == (404, {"error": said})
    assert "location" not in heads
    assert herd.all_jobs() == before  # nothing submitted, killed, released or removed


def test_a_path_no_route_takes_with_or_without_its_slash_is_the_plain_404(herd: Herd) -> None:
    status, _, answer = herd.request("POST", "/api/v1/explode/", "{}")
    said = "no such endpoint: POST /api/v1/explode/ (/openapi.json lists them)"
    assert (status, json.loads(answer)) == (404, {"error": said})


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/jobs/?state=held", "/jobs?state=held"),
        ("/ui/jobs/", "/ui/jobs"),
        ("/sweeps/lr-%C3%A9/", "/sweeps/lr-%C3%A9"),  # the path as sent, escaped
    ],
)
def test_a_dashboard_page_typed_with_a_slash_is_sent_to_the_page(
    herd: Herd, path: str, location: str
) -> None:
    for method in ("GET", "HEAD"):
        status, heads, _ = herd.request(method, path)
        assert (status, heads.get("location")) == (307, location), method


def test_a_dashboard_post_with_a_slash_is_refused_in_one_line(herd: Herd) -> None:
    status, heads, answer = herd.request("POST", "/ui/jobs/act/", "{}")
    said = "no such endpoint: POST /ui/jobs/act/: leave out the trailing / (/ui/jobs/act)"
    assert (status, json.loads(answer)) == (404, {"error": said})
    assert "location" not in heads


def test_an_escaped_slash_is_no_redirect_to_itself(herd: Herd) -> None:
    # `/jobs%2F` is the path `/jobs/`: a Location of the path as sent was itself, forever.
    status, heads, _ = herd.request("GET", "/jobs%2F")
    assert (status, heads.get("location")) == (404, None)
