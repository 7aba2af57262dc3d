"""The dashboard's scheduler banner (api/scheduler_banner.py) says what `gpuherd daemon status`
says (engine_health.TickHealth.status): a failing pass first, else a callback of the engine
that broke, which stays said for the daemon's life; nothing while the scheduler works."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

from gpuherd.api import views
from gpuherd.api.scheduler_banner import trouble
from gpuherd.engine_health import TickHealth

HOME = Path("/home/me/.local/share/gpuherd")


def _said(health: TickHealth) -> str:
    body = views.render("_scheduler.html", scheduler=trouble(health, HOME)).body
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", bytes(body).decode())).split())


def test_a_broken_callback_is_said_and_a_failing_pass_before_it() -> None:
    health = TickHealth(lambda _: None)
    assert _said(health) == ""

    at = time.mktime((2026, 12, 3, 14, 2, 11, 0, 0, -1))
    health.broken = (at, "AttributeError: 'Engine' object has no attribute 'oops'")
    assert _said(health) == (
        "The scheduler failed at 2026-12-03 14:02:11 (AttributeError: 'Engine' object has no"
        " attribute 'oops'): a job that shows running after it ended is recorded by the next"
        " start (gpuherd daemon restart). Its traceback is in the daemon log,"
        f" {HOME}/daemon.log (gpuherd daemon log prints it)."
    )

    health.failed(ValueError("bad row"), logged=True)  # (daemon status says this one first)
    assert _said(health).startswith("Not starting: the scheduler fails since ")
    assert "(ValueError: bad row): queued jobs wait until a pass works again" in _said(health)
    health.worked()
    assert _said(health).startswith("The scheduler failed at 2026-12-03 14:02:11 ")
