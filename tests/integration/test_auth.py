"""The TCP listener's gate, against a real daemon: token, cookie, Host, cross-site requests."""

from __future__ import annotations

import http.client
import json
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from conftest import Herd, UnixConnection
from gpuherd.api.auth import HostCheck
from gpuherd.errors import HerdError
from gpuherd.listen_address import parse_address


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: str


@dataclass
class Dashboard:
    """The TCP side of a daemon started with --listen 127.0.0.1:0."""

    herd: Herd
    url: str

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)

    @property
    def token(self) -> str:
        return parse_qs(urlsplit(self.url).query)["token"][0]

    def request(
        self,
        method: str,
        path: str,
        headers: dict[str, str] | None = None,
        body: str | None = None,
    ) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return Answer(response.status, response.headers, response.read().decode())
        finally:
            conn.close()

    def cookie(self) -> str:
        """The cookie the gate sets for a visit with ?token=."""
        answer = self.request("GET", f"/jobs?token={self.token}")
        assert answer.status == 303
        return answer.headers["set-cookie"].split(";")[0]

    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def dashboard(herd: Herd) -> Dashboard:
    """A daemon of this test's own, listening on a free port (for tests that change it)."""
    herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")
    return Dashboard(herd, herd.cli("ui", "--url").stdout.strip())


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """One listening daemon for the tests that only read."""
    herd = Herd(tmp_path_factory.mktemp("auth") / "home")
    try:
        herd.start("--fake-gpus", "2", "--listen", "127.0.0.1:0")
        yield Dashboard(herd, herd.cli("ui", "--url").stdout.strip())
    finally:
        herd.cleanup()


def _form(**fields: str) -> str:
    return urlencode(fields)


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize("path", ["/", "/jobs", "/jobs/1", "/api/v1/jobs", "/static/htmx.min.js"])
def test_no_token_is_refused_on_pages_and_api(shared: Dashboard, path: str) -> None:
    answer = shared.request("GET", path)
    assert answer.status == 403
    assert "token" in answer.body
    assert answer.body.count("\n") <= 1  # one line that says why
    assert shared.request("GET", path, {"Cookie": "gpuherd_0000=nope"}).status == 403


def test_a_wrong_token_is_refused(shared: Dashboard) -> None:
    answer = shared.request("GET", "/api/v1/jobs", {"Authorization": "token not-the-token"})
    assert answer.status == 403
    assert "wrong token" in json.loads(answer.body)["error"]
    assert shared.request("GET", "/jobs?token=guess").status == 403


def test_query_token_sets_a_strict_cookie_then_the_cookie_works(shared: Dashboard) -> None:
    answer = shared.request("GET", f"/jobs?state=queued&token={shared.token}")
    assert answer.status == 303
    assert answer.headers["location"] == "/jobs?state=queued"  # the token left the URL
    cookie = answer.headers["set-cookie"]
    assert shared.token not in cookie  # a value derived from it (see the test below)
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    pair = cookie.split(";")[0]
    page = shared.request("GET", "/jobs?state=queued", {"Cookie": pair})
    assert page.status == 200 and "<table" in page.body
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    api = shared.request("GET", "/api/v1/daemon", {"Cookie": pair})
    assert api.status == 200 and json.loads(api.body)["pid"] == shared.herd.pid


def test_the_cookie_is_no_token_and_the_token_is_no_cookie(shared: Dashboard) -> None:
    """Browsers send a host's cookies to every port of that host: a server on another port
    that receives the dashboard's cookie must not get the API's token with it."""
    pair = shared.cookie()
    name, value = pair.split("=", 1)
    assert value != shared.token and shared.token not in value
    for header in ({"Authorization": f"token {value}"}, {"Authorization": f"Bearer {value}"}):
        answer = shared.request("GET", "/api/v1/jobs", header)
        assert answer.status == 403 and "wrong token" in json.loads(answer.body)["error"]
    assert shared.request("GET", f"/api/v1/jobs?token={value}").status == 403
    # The raw token is not taken as the cookie either: only the gate's own value is.
    assert shared.request("GET", "/api/v1/jobs", {"Cookie": f"{name}={shared.token}"}).status == 403
    assert shared.request("GET", "/api/v1/jobs", {"Cookie": pair}).status == 200


def test_api_accepts_the_token_in_a_header_or_the_query(shared: Dashboard) -> None:
    header = shared.request("GET", "/api/v1/jobs", {"Authorization": f"token {shared.token}"})
    assert header.status == 200 and json.loads(header.body)["jobs"] == []
    bearer = shared.request("GET", "/api/v1/gpus", {"Authorization": f"Bearer {shared.token}"})
    assert bearer.status == 200
    query = shared.request("GET", f"/api/v1/jobs?token={shared.token}")
    assert query.status == 200  # API calls are answered, not redirected


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.evil.example"])
def test_a_foreign_host_header_is_refused(shared: Dashboard, host: str) -> None:
    """DNS rebinding: the attacker's name resolves to 127.0.0.1, the token is even right."""
    headers = {"Host": host.format(port=shared.port), "Cookie": shared.cookie()}
    answer = shared.request("GET", "/", headers)
    assert answer.status == 403
    assert "Host" in answer.body


@pytest.mark.parametrize(
    "host", ["localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}", "127.0.0.1:9999"]
)
def test_local_host_headers_are_accepted(shared: Dashboard, host: str) -> None:
    """Loopback names and addresses, on any port (an SSH tunnel to another local port)."""
    headers = {"Host": host.format(port=shared.port), "Cookie": shared.cookie()}
    assert shared.request("GET", "/", headers).status == 200


def test_a_cross_site_post_is_refused(dashboard: Dashboard) -> None:
    cookie = dashboard.cookie()
    foreign = {**FORM, "Cookie": cookie, "Origin": "http://evil.example"}
    answer = dashboard.request("POST", "/ui/queue/pause", foreign, _form(next="/"))
    assert answer.status == 403 and "cross-site" in answer.body
    # Without Origin or Referer, the cookie alone does not change anything either.
    bare = dashboard.request("POST", "/ui/queue/pause", {**FORM, "Cookie": cookie}, "")
    assert bare.status == 403
    # A foreign Origin is refused even with the token in a header.
    api = {"Authorization": f"token {dashboard.token}", "Origin": "http://evil.example"}
    assert dashboard.request("POST", "/api/v1/queue/pause", api).status == 403
    assert dashboard.herd.client.get("/daemon")["queue_paused"] is False
    # The same request from the dashboard's own page goes through.
    own = {**FORM, "Cookie": cookie, "Origin": dashboard.origin()}
    assert dashboard.request("POST", "/ui/queue/pause", own, _form(next="/")).status == 303
    assert dashboard.herd.client.get("/daemon")["queue_paused"] is True
    referer = {**FORM, "Cookie": cookie, "Referer": dashboard.origin() + "/jobs"}
    assert dashboard.request("POST", "/ui/queue/resume", referer, "").status == 303
    assert dashboard.herd.client.get("/daemon")["queue_paused"] is False
    # A script with the token in a header (no browser, no Origin) may act.
    script = {"Authorization": f"token {dashboard.token}"}
    assert dashboard.request("POST", "/api/v1/queue/pause", script).status == 200


def test_the_token_file_is_private_and_goes_with_the_listener(dashboard: Dashboard) -> None:
    path = dashboard.herd.home / "ui_token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == dashboard.token
    dashboard.herd.cli("ui", "--stop")
    assert not path.exists()
    with pytest.raises(OSError):
        dashboard.request("GET", "/")


def test_jobs_never_see_the_token(herd: Herd, tmp_path: Path) -> None:
    """Not from the daemon's environment, nor the submitter's, nor a dashboard submission."""
    secret = "fixed-secret-token-for-this-test-0123456789"
    herd.cli(
        "daemon",
        "start",
        "--fake-gpus",
        "1",
        "--listen",
        "127.0.0.1:0",
        env={**herd.env, "GPUHERD_TOKEN": secret},
    )
    url = herd.cli("ui", "--url").stdout.strip()
    board = Dashboard(herd, url)
    assert board.token == secret
    from_cli = tmp_path / "cli.env"
    job = herd.cli(
        "submit",
        "-q",
        "--gpus",
        "0",
        "--",
        "sh",
        "-c",
        f"env > {from_cli}",
        env={**herd.env, "GPUHERD_TOKEN": secret},
    )
    herd.wait_state(int(job.stdout), "succeeded")
    from_page = tmp_path / "page.env"
    headers = {**FORM, "Cookie": board.cookie(), "Origin": board.origin()}
    form = _form(commands=f"env > {from_page}", gpus="0", cwd=str(tmp_path))
    answer = board.request("POST", "/submit", headers, form)
    assert answer.status == 303, answer.body
    page_job = int(answer.headers["location"].split("=")[-1])
    herd.wait_state(page_job, "succeeded")
    for path in (from_cli, from_page):
        text = path.read_text()
        assert "GPUHERD_JOB_ID=" in text
        assert secret not in text


def test_the_unix_socket_needs_no_token(shared: Dashboard) -> None:
    assert shared.herd.client.get("/jobs")["jobs"] == []
    conn = UnixConnection(shared.herd.client.socket_path, timeout=10)
    try:
        conn.request("GET", "/")
        response = conn.getresponse()
        assert response.status == 200
        assert "GPU 0" in response.read().decode()
    finally:
        conn.close()


def test_the_listener_is_managed_only_over_the_socket(shared: Dashboard) -> None:
    headers = {"Authorization": f"token {shared.token}", "Content-Type": "application/json"}
    body = json.dumps({"address": "0.0.0.0:0"})
    answer = shared.request("POST", "/api/v1/daemon/listen", headers, body)
    assert answer.status == 403
    assert shared.request("GET", "/api/v1/daemon/listen", headers).status == 403


def test_gpuherd_ui_starts_and_stops_a_listener(daemon: Herd) -> None:
    missing = daemon.cli("ui", "--url", check=False)
    assert missing.returncode == 1 and "not listening" in missing.stderr
    started = daemon.cli("ui", "--listen", "127.0.0.1:0").stdout
    assert started.startswith("dashboard: http://127.0.0.1:")
    url = daemon.cli("ui", "--url").stdout.strip()
    assert url in started
    board = Dashboard(daemon, url)
    assert board.request("GET", "/", {"Cookie": board.cookie()}).status == 200
    assert daemon.cli("ui").stdout.strip() == f"dashboard: {url}"  # already listening: same
    assert daemon.cli("ui", "--stop").stdout == "dashboard listener stopped\n"
    assert daemon.cli("ui", "--url", check=False).returncode == 1
    again = daemon.cli("ui", "--stop")  # nothing to stop: said so, not "stopped"
    assert again.stdout == "the dashboard was not listening on TCP: nothing to stop\n"


def test_a_busy_port_is_reported(herd: Herd) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        failed = herd.cli(
            "daemon", "start", "--fake-gpus", "1", "--listen", f"127.0.0.1:{port}", check=False
        )
    assert failed.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in failed.stderr
    assert not herd.client.is_up()


def test_no_dashboard_module_on_the_cli_path() -> None:
    """`gpuherd ls/submit/log` never import the dashboard (nor FastAPI, nor Jinja2)."""
    code = (
        "import sys; from gpuherd.cli import main; "
        "print([m for m in sys.modules if m.startswith(('gpuherd.api', 'fastapi', 'jinja2'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- the pure parts of the gate ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8888", ("127.0.0.1", 8888)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:8888", ("::1", 8888)),
        ("[::]:0", ("::", 0)),
        ("myhost.lab:9000", ("myhost.lab", 9000)),
        ("8888", ("127.0.0.1", 8888)),
        (":8888", ("127.0.0.1", 8888)),
    ],
)
def test_listen_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["127.0.0.1", "host:port", "::1:8888", "1.2.3.4:70000", ""])
def test_bad_listen_addresses(text: str) -> None:
    with pytest.raises(HerdError, match="listen address"):
        parse_address(text)


def test_host_check() -> None:
    local = HostCheck("127.0.0.1")
    for ok in ("127.0.0.1:8888", "localhost:1", "LOCALHOST.:8888", "[::1]:8888", "10.0.0.5"):
        assert local.allows(ok), ok
    for bad in ("evil.example:8888", "", "localhost.evil.example", socket.gethostname() + "x"):
        assert not local.allows(bad), bad
    assert HostCheck("0.0.0.0").allows(f"{socket.gethostname()}:8888")
    assert not HostCheck("127.0.0.1").allows(f"{socket.gethostname()}:8888") or (
        socket.gethostname() == "localhost"
    )
    assert HostCheck("myhost.lab").allows("MyHost.lab:9000")
