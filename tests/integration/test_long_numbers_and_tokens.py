"""Numbers of more digits than int() reads (4,300), log offsets near 2**63, the `?token=`
redirect's Location, GPUHERD_TOKEN's shape and a job's `--env GPUHERD_TOKEN` (hunt `sec`,
findings 3 to 7)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import Herd
from herd_home import UnixConnection

LONG = "9" * 5000
SHOWN = "99999...99999 (5,000 digits)"
AT_MOST = "is too large (at most 2**63 - 1)"
TOKEN = "fixed-secret-token-for-this-test-0123456789"


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """A listening daemon, with one job that has run (`echo hi`)."""
    herd = Herd(tmp_path_factory.mktemp("long") / "home")
    try:
        herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")
        herd.wait_state(herd.submit("--", "echo hi"), "succeeded")
        yield herd
    finally:
        herd.cleanup()


def _ask(herd: Herd, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """A GET over the home's socket, read to its end (a stream cut short raises)."""
    conn = UnixConnection(herd.client.socket_path, timeout=20)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def _no_traceback(herd: Herd) -> None:
    assert "Traceback" not in (herd.home / "daemon.log").read_text()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["show", LONG], f"job id {SHOWN} {AT_MOST}"),
        (["log", LONG], f"job id {SHOWN} {AT_MOST}"),
        (["kill", LONG], f"job id {SHOWN} {AT_MOST}"),
        (["kill", f"1-{LONG}"], f"job id {SHOWN} {AT_MOST}"),
        (["ls", "--limit", LONG], f"--limit: {SHOWN} {AT_MOST}"),
        (["priority", "1", LONG], f"priority {SHOWN} {AT_MOST}"),
        (["submit", "--gpus", LONG, "--", "true"], f"--gpus: {SHOWN} is out of range"),
        (["gpus", "drain", LONG], f"invalid GPU index '{SHOWN}'"),
    ],
)
def test_a_number_of_5000_digits_is_one_line_in_the_cli(
    herd: Herd, args: list[str], said: str
) -> None:
    """It was a traceback (`kill`: Python's `use sys.set_int_max_str_digits()`)."""
    proc = herd.cli(*args, check=False)
    assert proc.returncode != 0
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("gpuherd: error: ")
    assert said in proc.stderr
    assert "Traceback" not in proc.stderr and "sys.set_int" not in proc.stderr


@pytest.mark.parametrize(
    ("method", "path", "body", "said"),
    [
        ("POST", "/jobs/kill", f'{{"ids": [{LONG}]}}', f"ids {SHOWN} {AT_MOST}"),
        (
            "POST",
            "/jobs",
            f'{{"jobs": [{{"command": "true", "cwd": "/tmp", "gpus": {LONG}}}]}}',
            f"jobs.0.gpus {SHOWN} {AT_MOST}",
        ),
        ("GET", f"/jobs/{LONG}", None, f"job_id {SHOWN} {AT_MOST}"),
        ("GET", f"/jobs?limit={LONG}", None, f"limit {SHOWN} {AT_MOST}"),
        ("GET", f"/jobs/1/log?offset={LONG}", None, f"offset {SHOWN} {AT_MOST}"),
    ],
)
def test_a_number_of_5000_digits_is_too_large_in_the_api(
    herd: Herd, method: str, path: str, body: str | None, said: str
) -> None:
    """It was `the body's JSON nests lists or objects too deeply` (a body), or pydantic's
    `Unable to parse input string as an integer, exceeded maximum size` (a path, a query)."""
    status, _, answer = herd.request(method, "/api/v1" + path, body)
    assert (status, json.loads(answer)["error"]) == (422, said)


def test_a_cut_body_with_a_long_number_is_said_not_json(herd: Herd) -> None:
    status, _, answer = herd.request("POST", "/api/v1/jobs/kill", f'{{"ids": [{LONG}')
    assert status == 422
    assert json.loads(answer)["error"].startswith("invalid request: the body is not valid JSON")


def test_a_log_offset_past_the_end_reads_nothing(herd: Herd) -> None:
    """`offset=2**63-1` answered 200 and was cut off (a seek failed: EINVAL)."""
    largest = 2**63 - 1
    assert _ask(herd, f"/api/v1/jobs/1/log?offset={largest}") == (200, "")
    status, events = _ask(herd, f"/api/v1/jobs/1/log/follow?offset={largest}")
    assert status == 200
    assert 'event: end\ndata: {"state": "succeeded"}' in events
    assert "event: message" not in events
    _no_traceback(herd)


@pytest.mark.parametrize(
    "place", ["1:0:99999999999999999999", f"1:0:{LONG}", f"1:{2**63 - 1}:{2**63 - 1}", "1:²:0"]
)
def test_a_job_pages_stream_ends_whatever_its_last_event_id(herd: Herd, place: str) -> None:
    """It stopped after `event: state`, with no `end`; one that is no place is ignored."""
    status, events = _ask(herd, "/ui/jobs/1/stream", {"Last-Event-ID": place})
    assert status == 200
    assert "event: end" in events
    _no_traceback(herd)


def _tcp_get(url: str, target: str) -> http.client.HTTPResponse:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    conn.putrequest("GET", target, skip_accept_encoding=True)
    conn.endheaders()
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("//evil.example/", "/evil.example/"),  # was `//evil.example/`: another host's
        ("/%2F%2Fevil.com", "/%2F%2Fevil.com"),  # was `///evil.com`
        ("/%0d%0aX:%20y", "/%0d%0aX:%20y"),  # was no answer, a traceback in daemon.log
        ("/sweeps/lr-%C3%A9", "/sweeps/lr-%C3%A9"),  # was the byte \xe9
        ("/jobs/1", "/jobs/1"),
    ],
)
def test_the_token_redirect_names_the_path_as_sent(herd: Herd, path: str, location: str) -> None:
    url = herd.cli("ui", "--url").stdout.strip()
    token = parse_qs(urlsplit(url).query)["token"][0]
    answer = _tcp_get(url, f"{path}?token={token}")
    assert (answer.status, answer.headers["location"]) == (303, location)
    _no_traceback(herd)


@pytest.mark.parametrize("token", ["a", "ab&c#d é", TOKEN[:31], "x" * 257, TOKEN + "!"])
def test_a_gpuherd_token_that_is_no_token_is_refused_at_start(tmp_path: Path, token: str) -> None:
    herd = Herd(tmp_path / "home")
    try:
        env = {**herd.env, "GPUHERD_TOKEN": token}
        proc = herd.cli(
            "daemon", "start", "--fake-gpus", "1", "--listen", "127.0.0.1:0", env=env, check=False
        )
        assert proc.returncode != 0
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("gpuherd: error: GPUHERD_TOKEN is not a dashboard token")
        assert "32 to 256 letters of A-Z a-z 0-9 _ -" in proc.stderr
        assert "secrets.token_urlsafe" in proc.stderr
        assert len(token) < 3 or token not in proc.stderr  # (the secret is never repeated)
        assert not herd.is_up()
    finally:
        herd.cleanup()


def test_a_gpuherd_token_of_its_shape_is_taken(tmp_path: Path) -> None:
    herd = Herd(tmp_path / "home")
    try:
        env = {**herd.env, "GPUHERD_TOKEN": TOKEN}
        herd.cli("daemon", "start", "--fake-gpus", "1", "--listen", "127.0.0.1:0", env=env)
        assert herd.cli("ui", "--url").stdout.strip().endswith(f"/?token={TOKEN}")
    finally:
        herd.cleanup()


def test_a_jobs_env_may_not_hold_the_daemons_token(herd: Herd) -> None:
    """It was shown by `show`, and silently not given to the job."""
    before = herd.ls_all()
    said = "env (--env): GPUHERD_TOKEN is the daemon's secret"
    proc = herd.cli("submit", "--env", "GPUHERD_TOKEN=x", "--", "true", check=False)
    assert proc.returncode != 0 and said in proc.stderr
    status, _, answer = herd.request(
        "POST",
        "/api/v1/jobs",
        json.dumps(
            {"jobs": [{"command": "true", "cwd": "/tmp", "env_overrides": {"GPUHERD_TOKEN": "x"}}]}
        ),
    )
    assert status == 422 and "GPUHERD_TOKEN is the daemon's secret" in answer.decode()
    held = herd.submit("--hold", "--", "true")
    proc = herd.cli("edit", str(held), "--env", "GPUHERD_TOKEN=y", check=False)
    assert proc.returncode != 0 and said in proc.stderr
    assert len(herd.ls_all()) == len(before) + 1
