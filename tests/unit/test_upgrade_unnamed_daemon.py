"""After `pip install -U`, a daemon of the first 0.1.0 days left running answers without the
`gpuherd-version` header: the client still says, once, that it runs an older gpuherd (before,
it said nothing, and a new option met that daemon's bare 422 refusal)."""

from __future__ import annotations

import io

import pytest

from gpuherd import __version__, client_http

WARNING = (
    "gpuherd: warning: the daemon runs an older gpuherd, which names no version, and this is "
    f"{__version__}: restart it to run this version (`gpuherd daemon restart`: running jobs "
    "go on)\n"
)


def answer(head: str, body: bytes = b"{}") -> None:
    raw = f"{head}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    client_http.Response(io.BufferedReader(io.BytesIO(raw)))  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def nothing_told_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_http, "_versions_told", set())


@pytest.mark.parametrize(
    "head",
    [
        "HTTP/1.1 200 OK\r\nContent-Type: application/json",
        # An option the old daemon does not know: its refusal is the first answer.
        "HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json",
    ],
)
def test_an_answer_of_a_daemon_that_names_no_version_is_told_once(
    head: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(2):
        answer(head)
    assert capsys.readouterr().err == WARNING


@pytest.mark.parametrize(
    "head",
    [
        f"HTTP/1.1 200 OK\r\ngpuherd-version: {__version__}",
        # uvicorn's own answers, which never pass through the app that names its version.
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8",
        "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8",
    ],
)
def test_no_warning_for_this_version_or_uvicorns_own_answers(
    head: str, capsys: pytest.CaptureFixture[str]
) -> None:
    answer(head)
    assert capsys.readouterr().err == ""
