"""How the app's routes are set up (gpuherd.api.routes, app.AddsDashboard): each route once,
every /api/v1 one checked, and the dashboard's added at the first request outside /api/."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

from gpuherd.api.app import create_app, refuse_body_where_none, refuse_unknown_query

SCRIPT = """
import asyncio, json, sys
from gpuherd.api.app import create_app

app = create_app(None, pid=1, socket_path="/nowhere")  # (a service only the routes read)

def get(path):
    sent = []
    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}
    async def send(message):
        sent.append(message)
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
        "query_string": b"", "headers": [(b"host", b"localhost")], "client": ("127.0.0.1", 1),
        "server": ("localhost", 80),
    }
    asyncio.run(app(scope, receive, send))
    body = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    return sent[0]["status"], body

def seen():
    return {
        "paths": [route.path for route in app.routes],
        "jinja2": "jinja2" in sys.modules,
        "openapi": app.openapi(),
    }

api = get("/api/v1/nothing")
before = seen()
page = get("/nothing")
print(json.dumps({"api": api, "before": before, "page": page, "after": seen()}))
"""


def test_every_api_route_is_checked_and_declared_once() -> None:
    app = create_app(None, pid=1, socket_path="/nowhere")
    api = [route for route in app.routes if getattr(route, "path", "").startswith("/api/v1/")]
    assert len(api) > 20
    for route in api:
        calls = [dep.dependency for dep in route.dependencies]
        assert calls == [refuse_unknown_query, refuse_body_where_none], route
    declared = [(route.path, *sorted(route.methods)) for route in api]
    assert len(declared) == len(set(declared))


def test_the_dashboard_is_added_at_the_first_request_outside_the_api() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=60
    )
    seen = json.loads(out.stdout)
    status, body = seen["api"]
    assert status == 404
    assert json.loads(body)["error"].startswith("no such endpoint: GET /api/v1/nothing")
    before, after = seen["before"], seen["after"]
    assert "/" not in before["paths"]
    assert not before["jinja2"]  # a daemon that serves no page never imports it
    status, body = seen["page"]
    assert status == 404
    assert "no such page: /nothing" in body  # the dashboard's error page
    # The dashboard's routes follow the API's, as when added at start, and are not in the
    # OpenAPI document.
    assert after["paths"][: len(before["paths"])] == before["paths"]
    assert "/" in after["paths"][len(before["paths"]) :]
    assert after["openapi"] == before["openapi"]


def _first(method: str, path: str, app: Any = None) -> int:
    """The status of a new app's (or `app`'s) very first request (no service: /ui/ping reads
    none)."""
    app = app or create_app(None, pid=1, socket_path="/nowhere")
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
        "query_string": b"", "headers": [(b"host", b"localhost")], "client": ("127.0.0.1", 1),
        "server": ("localhost", 80),
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    return int(str(sent[0]["status"]))


def test_the_first_request_is_routed_among_the_dashboards_routes() -> None:
    # Added before it is routed, not after: its own route answers (HEAD as GET), and a
    # method the path does not take is a 405, not a 404 for a path not there yet.
    assert _first("GET", "/ui/ping") == 204
    assert _first("HEAD", "/ui/ping") == 204
    assert _first("POST", "/ui/ping") == 405


def test_the_apps_of_one_process_share_the_api_routes_and_keep_their_own_lists() -> None:
    """FastAPI analyses the API's routes once per process (app.api_routes); each app still
    has its own list of routes, and its own state."""
    first, second = (create_app(None, pid=pid, socket_path="/nowhere") for pid in (1, 2))

    def api(app: Any) -> list[Any]:
        return [route for route in app.routes if route.path.startswith("/api/v1/")]

    assert len(api(first)) > 20
    assert all(mine is theirs for mine, theirs in zip(api(first), api(second), strict=True))
    assert (first.state.pid, second.state.pid) == (1, 2)
    assert _first("GET", "/ui/ping", first) == 204  # the dashboard, added to the first alone
    assert "/ui/ping" in [route.path for route in first.routes]
    assert "/ui/ping" not in [route.path for route in second.routes]
