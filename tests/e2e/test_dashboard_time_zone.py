"""The dashboard says its times in the browser's time zone, and reads its `begin` box there: a
daemon under systemd runs in UTC, and its pages said `Created 2026-12-04 15:12:40` to a user in
Tokyo, whose `begin 23:30` in the submit form was 23:30 UTC (08:30 the next morning there).
The page's zone.js tells the daemon the zone in a cookie (api/askers_zone.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest
from test_dashboard import TIMEOUT_MS, browser
from test_dashboard_pages import post

from conftest import Herd

__all__ = ["browser"]  # (the fixture, imported for the tests here)

TOKYO = "Asia/Tokyo"  # UTC+9 all year: never the daemon's (UTC) clock


@pytest.fixture
def utc_daemon(tmp_path: Path) -> Iterator[tuple[Herd, str]]:
    herd = Herd(tmp_path / "home")
    herd.env["TZ"] = "UTC"
    try:
        herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
        yield herd, herd.cli("ui", "--url").stdout.strip()
    finally:
        herd.cleanup()


def _created(page: Any) -> str:
    return str(page.locator("dt:text-is('Created') + dd").inner_text())


def test_a_browser_in_tokyo_sees_the_times_of_tokyo(
    browser: Any, utc_daemon: tuple[Herd, str]
) -> None:
    herd, url = utc_daemon
    job = herd.submit("--hold", "true")
    created = herd.job(job)["created_at"]
    for zone in (TOKYO, "UTC"):
        context = browser.new_context(timezone_id=zone)
        try:
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)  # (the token's cookie)
            page.goto(url.split("/?")[0] + f"/jobs/{job}")
            shown = datetime.fromtimestamp(created, ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")
            page.wait_for_function(
                "want => [...document.querySelectorAll('dd')].some(d => d.textContent === want)",
                arg=shown,
            )
            assert _created(page) == shown, zone
            cookie = {c["name"]: c["value"] for c in context.cookies()}["gpuherd_zone"]
            assert cookie.endswith(quote(" " + zone, safe="")), cookie
        finally:
            context.close()


def test_the_submit_forms_begin_is_read_in_the_browsers_zone(
    utc_daemon: tuple[Herd, str], tmp_path: Path
) -> None:
    herd, _ = utc_daemon
    fields = {"commands": "true", "cwd": str(tmp_path), "gpus": "0", "begin": "23:30"}
    in_tokyo = {"Cookie": "gpuherd_zone=" + quote(f"32400 {TOKYO}")}
    answer = post(herd, "/submit", htmx=False, headers=in_tokyo, **fields)
    assert answer.status == 303, answer.body[:300]
    [job] = (int(i) for i in re.findall(r"\d+", answer.headers["location"]))
    begin = datetime.fromtimestamp(herd.job(job)["begin"], ZoneInfo(TOKYO))
    assert (begin.hour, begin.minute) == (23, 30)
    # No cookie (curl, a browser that refuses it): the daemon's zone, as before.
    answer = post(herd, "/submit", htmx=False, **fields)
    [job] = (int(i) for i in re.findall(r"\d+", answer.headers["location"]))
    begin = datetime.fromtimestamp(herd.job(job)["begin"], ZoneInfo("UTC"))
    assert (begin.hour, begin.minute) == (23, 30)


def test_a_listener_started_from_another_zone_answers_in_the_daemons(
    browser: Any, tmp_path: Path
) -> None:
    # `gpuherd ui` typed in Tokyo started the listener inside its own request, and every
    # page asked of it without a zone (no script, no cookie) came out in Tokyo's.
    herd = Herd(tmp_path / "home")
    herd.env["TZ"] = "UTC"
    try:
        herd.start("--fake-gpus", "1")
        # (--listen on a free port: 8888-8897, ui's own, are another test's to hold, all ten)
        said = herd.cli("ui", "--listen", "127.0.0.1:0", env={**herd.env, "TZ": TOKYO}).stdout
        url = said.split("dashboard: ", 1)[1].strip()
        job = herd.submit("--hold", "true")
        created = herd.job(job)["created_at"]
        context = browser.new_context(java_script_enabled=False)  # (zone.js sets no cookie)
        try:
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            page.goto(url.split("/?")[0] + f"/jobs/{job}")
            shown = datetime.fromtimestamp(created, ZoneInfo("UTC")).strftime("%Y-%m-%d %H:%M:%S")
            assert _created(page) == shown
        finally:
            context.close()
    finally:
        herd.cleanup()
