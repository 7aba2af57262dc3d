"""The dashboard's token through daemon restarts: kept (ui_token, 0600), so an open tab's cookie
and a script's token go on working after `gpuherd daemon restart` (before, every restart made a
new one, and every open tab failed until reopened from `gpuherd ui`). A token file that another
user could have written or read, or that holds no token, is not taken; GPUHERD_TOKEN still
wins; `gpuherd ui --new-token` makes a new one on purpose, and `ui --stop` forgets it."""

from __future__ import annotations

import http.client
import os
import stat
from pathlib import Path

import pytest
from test_auth import Dashboard

from conftest import Herd

PLANTED = "planted-token-of-43-letters-AAAAAAAAAAAAAAA"


def _listening(herd: Herd, *options: str) -> Dashboard:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0", *options)
    return Dashboard(herd, herd.cli("ui", "--url").stdout.strip())


def _token_file(herd: Herd) -> Path:
    return herd.home / "ui_token"


def _private(path: Path) -> str:
    """The token in `path`, which is 0600 and this user's."""
    info = path.lstat()
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600, oct(info.st_mode)
    assert info.st_uid == os.geteuid()
    return path.read_text().strip()


def _jobs_answer(board: Dashboard, headers: dict[str, str]) -> int:
    return board.request("GET", "/api/v1/jobs", headers).status


def test_a_restart_keeps_the_token_and_the_open_tabs_cookie(herd: Herd) -> None:
    board = _listening(herd)
    cookie = {"Cookie": board.cookie()}  # a tab opened from the printed URL
    assert board.request("GET", "/jobs", cookie).status == 200
    herd.cli("daemon", "restart")
    assert herd.cli("ui", "--url").stdout.strip() == board.url  # same token, same address
    assert _private(_token_file(herd)) == board.token
    assert board.request("GET", "/jobs", cookie).status == 200  # the tab goes on
    assert _jobs_answer(board, {"Authorization": f"token {board.token}"}) == 200
    # A plain stop and start keeps it too: the token lives in the home, 0600.
    herd.cli("daemon", "stop")
    assert _private(_token_file(herd)) == board.token
    assert _listening(herd).token == board.token


def test_ui_new_token_refuses_the_old_one_at_once(herd: Herd) -> None:
    board = _listening(herd)
    cookie = {"Cookie": board.cookie()}
    said = herd.cli("ui", "--new-token").stdout
    assert said.startswith("dashboard: http://127.0.0.1:") and board.token not in said
    new = Dashboard(herd, herd.cli("ui", "--url").stdout.strip())
    assert new.port == board.port and new.token != board.token
    assert _private(_token_file(herd)) == new.token
    assert _jobs_answer(board, {"Authorization": f"token {board.token}"}) == 403
    assert board.request("GET", "/jobs", cookie).status == 403
    assert _jobs_answer(new, {"Authorization": f"token {new.token}"}) == 200
    herd.cli("daemon", "restart")  # and the new one is the one kept
    assert herd.cli("ui", "--url").stdout.strip() == new.url


def test_ui_new_token_ends_the_streams_the_old_one_opened(herd: Herd) -> None:
    """A stream's token is checked as it opens: one left open would go on telling the old
    token's holder every change."""
    board = _listening(herd)
    conn = http.client.HTTPConnection("127.0.0.1", board.port, timeout=10)
    try:
        conn.request("GET", "/ui/events", headers={"Authorization": f"token {board.token}"})
        stream = conn.getresponse()
        assert stream.status == 200
        herd.cli("ui", "--new-token")
        try:
            stream.read()  # to its end: the connection closed (a timeout here fails the test)
        except http.client.IncompleteRead:
            pass  # (closed inside a chunk)
    finally:
        conn.close()


def test_ui_new_token_starts_the_listener_where_there_is_none(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    _token_file(herd).write_text(PLANTED + "\n")
    _token_file(herd).chmod(0o600)
    said = herd.cli("ui", "--new-token", "--listen", "127.0.0.1:0").stdout
    board = Dashboard(herd, herd.cli("ui", "--url").stdout.strip())
    assert said.startswith(f"dashboard: {board.url}")
    assert board.token != PLANTED and _private(_token_file(herd)) == board.token


def test_ui_stop_forgets_the_token(herd: Herd) -> None:
    board = _listening(herd)
    herd.cli("ui", "--stop")
    assert not _token_file(herd).exists()
    herd.cli("ui", "--listen", "127.0.0.1:0")
    again = Dashboard(herd, herd.cli("ui", "--url").stdout.strip())
    assert again.token != board.token and _private(_token_file(herd)) == again.token


def test_gpuherd_token_wins_and_cannot_be_renewed_by_ui(herd: Herd) -> None:
    _token_file(herd).parent.mkdir(parents=True)
    _token_file(herd).write_text(PLANTED + "\n")
    _token_file(herd).chmod(0o600)
    secret = "fixed-secret-token-for-this-test-0123456789"
    env = {**herd.env, "GPUHERD_TOKEN": secret}
    herd.cli("daemon", "start", "--fake-gpus", "1", "--listen", "127.0.0.1:0", env=env)
    assert Dashboard(herd, herd.cli("ui", "--url").stdout.strip()).token == secret
    refused = herd.cli("ui", "--new-token", check=False)
    assert refused.returncode == 1, refused
    assert refused.stderr == (
        "gpuherd: error: the dashboard's token is GPUHERD_TOKEN, from the daemon's "
        "environment: change it there, then `gpuherd daemon restart`\n"
    )


def _foreign(path: Path) -> None:
    path.write_text(PLANTED + "\n")
    path.chmod(0o600)
    os.chown(path, 65534, 65534)


def _readable(path: Path) -> None:
    path.write_text(PLANTED + "\n")
    path.chmod(0o644)


def _malformed(path: Path) -> None:
    path.write_text("short\n")
    path.chmod(0o600)


def _linked(path: Path) -> None:
    target = path.with_name("elsewhere")
    target.write_text(PLANTED + "\n")
    target.chmod(0o600)
    path.symlink_to(target)


@pytest.mark.parametrize(
    ("plant", "why"),
    [
        pytest.param(_foreign, "it belongs to uid 65534, not to this user", id="other-owner"),
        pytest.param(_readable, "its mode is 0644, not 0600: others may read it", id="mode-0644"),
        pytest.param(_malformed, "it holds no token", id="malformed"),
        pytest.param(_linked, "it cannot be read", id="symlink"),
    ],
)
def test_a_token_file_not_safe_to_trust_is_not_kept(herd: Herd, plant: object, why: str) -> None:
    if os.geteuid() != 0 and plant is _foreign:
        pytest.skip("giving a file to another user needs root")
    herd.home.mkdir(parents=True)
    path = _token_file(herd)
    plant(path)  # type: ignore[operator]
    board = _listening(herd)
    assert board.token != PLANTED and len(board.token) >= 32
    assert _private(path) == board.token  # a file of its own, 0600, in its place
    log = (herd.home / "daemon.log").read_text()
    assert f"not keeping the dashboard's token in {path}: {why}" in log, log[-2000:]


def test_new_token_goes_neither_with_stop_nor_with_url(herd: Herd) -> None:
    assert herd.usage_error("ui", "--stop", "--new-token").startswith(
        "gpuherd: error: --stop goes alone, not with --new-token: it stops the TCP listener"
    )
    assert herd.usage_error("ui", "--url", "--new-token").startswith(
        "gpuherd: error: --url goes alone, not with --new-token: it only prints the URL of a "
        "running listener"
    )
