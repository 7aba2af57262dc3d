"""`gpuherd ui --open` gives the browser a one-time link, not the token: a browser's command
line is shown by `ps` to every user of the machine (`BROWSER="/tmp/x %s" gpuherd ui --open`
put `?token=…` there). The link logs Debian's chromium in (the cookie, as `?token=` sets
it), once; and only a connection of the daemon's own user takes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from test_dashboard import browser, expect
from test_dashboard_walk import _without_browsers

from conftest import Herd

__all__ = ["browser", "expect"]  # the fixtures, shared with test_dashboard.py


def opened_by_ui_open(herd: Herd, folder: Path) -> str:
    """The URL `ui --open` gave the browser (a fake one that writes down its argument)."""
    opened, fake = folder / "opened", folder / "fake-browser"
    fake.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}\n')
    os.chmod(fake, 0o755)
    answer = herd.cli("ui", "--open", env=_without_browsers(herd, folder, str(fake)))
    assert answer.stderr == ""
    return opened.read_text()


def test_ui_open_logs_the_browser_in_with_a_one_time_link(
    herd: Herd, browser: Any, expect: Any, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    token = (herd.home / "ui_token").read_text().strip()
    url = opened_by_ui_open(herd, tmp_path)
    assert token not in url and "token" not in url
    assert urlsplit(url).query.startswith("code=")
    context = browser.new_context()
    page = context.new_page()
    response = page.goto(url)
    assert response is not None and response.status == 200
    assert "code=" not in page.url  # dropped from the address, as ?token= is
    expect(page.locator(".card.gpu")).to_have_count(1)  # the overview, logged in by its cookie
    assert page.goto(urlsplit(url)._replace(query="").geturl() + "jobs").status == 200
    again = browser.new_context().new_page()
    refused = again.goto(url)
    assert refused is not None and refused.status == 403
    assert "was used already or is more than 60 s old" in again.inner_text("body")
    context.close()
    again.context.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="connecting as another user needs root")
def test_another_user_who_reads_the_link_in_ps_is_refused(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "1", "--listen", "127.0.0.1:0")
    url = opened_by_ui_open(herd, tmp_path)
    fetch = (  # one request, its redirect not followed: its status and its one line
        "import http.client, sys, urllib.parse\n"
        "url = urllib.parse.urlsplit(sys.argv[1])\n"
        "conn = http.client.HTTPConnection(url.netloc, timeout=30)\n"
        "conn.request('GET', url.path + '?' + url.query)\n"
        "answer = conn.getresponse()\n"
        "print(answer.status, answer.read().decode())\n"
    )
    as_nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    stranger = subprocess.run(
        [*as_nobody, sys.executable, "-I", "-c", fetch, url], capture_output=True, text=True
    )
    assert stranger.stdout.startswith("403 403 Forbidden: the one-time link of `gpuherd ui "), (
        stranger
    )
    assert "this connection is of uid 65534" in stranger.stdout
    mine = subprocess.run([sys.executable, "-I", "-c", fetch, url], capture_output=True, text=True)
    assert mine.stdout == "303 \n"  # the stranger's try did not use it up: the cookie's redirect
