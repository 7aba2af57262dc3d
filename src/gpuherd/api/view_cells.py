"""The dashboard's table cells as Jinja filters (views.environment): times, and words allowed
to wrap only where a narrow table can afford it."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from markupsafe import Markup, escape

from gpuherd.core.idspec import format_ids
from gpuherd.core.states import LIVE_STATES
from gpuherd.core.when import SAID_IN


def when(ts: float | None) -> str:
    """A moment in the zone of the browser that asked (api/askers_zone.py), else the daemon's."""
    return datetime.fromtimestamp(ts, SAID_IN.get()).strftime("%Y-%m-%d %H:%M:%S") if ts else "-"


def when_cell(ts: float | None) -> Markup:
    """`when` for a narrow table's cell: it may wrap between the date and the time only. At
    700 px the attempts table broke "2026-12-03" at its hyphens, over three lines."""
    day, _, hour = when(ts).partition(" ")
    if not hour:
        return escape(day)
    return Markup('<span class="nowrap">{}</span> <span class="nowrap">{}</span>').format(day, hour)


def breakable(text: str) -> Markup:
    """`text` allowed to wrap after each underscore, in a table's cell: `dependency_failed`,
    one word of 145 px, made the jobs table wider than a 1280-px window. The text (what a
    search or a copy finds) is unchanged: `<wbr>` adds no character. In a span that may wrap
    (dashboard.css), as its `nowrap` cell may not: `exit 0` stays on one line."""
    if "_" not in text:
        return escape(text)
    parts = Markup("_<wbr>").join(escape(part) for part in text.split("_"))
    return Markup('<span class="breakable">') + parts + Markup("</span>")


SHORT_OUTCOMES = {"dependency_failed": "dep. failed"}
"""Outcomes the jobs table writes shorter below 1200 px, where its Exit column has a fixed
budget (dashboard.css): `dependency_` alone was wider than it, and the table than the window."""


def outcome_cell(text: str) -> Markup:
    """The jobs table's Exit cell: `text` breakable, and for a SHORT_OUTCOMES one its short
    form in `data-short`, which the stylesheet shows instead below 1200 px. The text (what a
    search or a copy finds) stays whole, and so does the cell's title."""
    short = SHORT_OUTCOMES.get(text)
    if short is None:
        return breakable(text)
    parts = Markup("_<wbr>").join(escape(part) for part in text.split("_"))
    return Markup('<span class="breakable" data-short="{}">{}</span>').format(short, parts)


LIVE_STATE_NAMES = frozenset(state.value for state in LIVE_STATES)


def live_pid(job: dict[str, Any]) -> str:
    """The jobs table's PID: a running or paused job's, as `gpuherd ls` shows it. An ended
    job's pid names a process gone (or another program by now) and looked alive in the
    column; its page keeps it, among the attempt's record."""
    pid = job.get("pid")
    return str(pid) if pid and job.get("state") in LIVE_STATE_NAMES else ""


def thousands(n: int) -> str:
    """A count as the pages print it, grouped by thousands: 10504 -> "10,504" (as the CLI's
    sweep lines do). Ids are not counts: a job's number is written as it is typed."""
    return f"{n:,}"


_SIZE = re.compile(r"\b\d+(?:\.\d+)? (?:B|KiB|MiB|GiB|TiB|PiB|EiB)\b")
"""A size as format_size writes it: `1.0 GiB`, `512 B`."""


def sizes_whole(text: str) -> Markup:
    """`text` with each size in it kept on one line (a span that does not wrap): on a 390-px
    job page the "asked for" line broke `1.0 GiB` between number and unit. The text itself
    (the CLI's, what a copy finds) keeps its plain spaces."""
    out, last = Markup(), 0
    for found in _SIZE.finditer(text):
        out += escape(text[last : found.start()])
        out += Markup('<span class="nowrap">{}</span>').format(found.group(0))
        last = found.end()
    return out + escape(text[last:])


def missing_gpus(answer: dict[str, Any]) -> str:
    """The configured GPUs the probe does not see, of GET /gpus, and of them those drained, in
    `gpuherd gpus`' words (cli/gpu_table._missing): `1 (draining)`, `1-2 (1 draining)`. The
    pages said `GPU 1` alone, so nothing showed that `gpus drain 1` of a lost GPU was taken."""
    said = format_ids(answer["missing"])
    if drained := answer.get("missing_draining"):
        some = drained != answer["missing"]
        said += f" ({format_ids(drained)} draining)" if some else " (draining)"
    return said
