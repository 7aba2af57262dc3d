"""`--watch` of `gpus` and `ls`: a listing read and drawn again every 2 s until Ctrl-C.

At a terminal it is redrawn in place (rich's Live, imported only here). Piped or redirected
(`gpus -w > gpus.log`, `| tee`) a redraw in place means nothing, and rich's Live wrote
nothing until Ctrl-C, then one frame cut at 80 columns: each reading is appended instead, as
the command prints it once, a blank line between two; so at a dumb terminal (TERM=dumb).

A daemon restart (`daemon restart`, a crash and a start) does not end it: a reading that finds
no daemon says so, as `wait` and `log -f` do, and the watch goes on once one answers again;
none within RESTART_GRACE ends it with the error a reading got (exit 3), as one at the start.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from gpuherd.cli import plain
from gpuherd.cli.log_output import daemon_gone
from gpuherd.client import RESTART_GRACE
from gpuherd.errors import DaemonError, NoAnswer

EVERY = 2.0
"""Seconds between readings: the daemon's telemetry tick (`gpus`), and `watch`'s default."""


def watch(lines: Callable[[plain.Terminal], list[str]]) -> None:
    """Show `lines(term)` (a reading, laid out for `term`) again and again."""
    lines = _through_restarts(lines)
    term = plain.Terminal()
    # A dumb terminal (TERM=dumb: Emacs' M-x shell, some CI logs) cannot move its cursor:
    # rich's Live drew the first reading there and never another. Append, as to a pipe.
    if term.stream.isatty() and os.environ.get("TERM") != "dumb":
        _redraw(lines)
    else:
        _append(lines, term)


def _through_restarts(
    lines: Callable[[plain.Terminal], list[str]],
) -> Callable[[plain.Terminal], list[str]]:
    """`lines`, but a reading that finds the daemon gone, after one that found it, is the
    line saying so, until RESTART_GRACE has passed. A daemon that holds the home but does not
    answer (stopped, stuck: NoAnswer) ends the watch at once, with its line, as before."""
    gone_since: float | None = None
    answered = False

    def reading(term: plain.Terminal) -> list[str]:
        nonlocal gone_since, answered
        try:
            read = lines(term)
        except NoAnswer:
            raise
        except DaemonError:
            now = time.monotonic()
            gone_since = now if gone_since is None else gone_since
            if not answered or now - gone_since > RESTART_GRACE:
                raise
            return [daemon_gone()]
        gone_since, answered = None, True
        return read

    return reading


def _redraw(lines: Callable[[plain.Terminal], list[str]]) -> None:
    from rich import get_console
    from rich.live import Live
    from rich.text import Text

    console = get_console()  # (Live's: its height follows a resized window, LINES too)

    def frame() -> Text:
        # A new Terminal each time: its width follows a resized window.
        term = plain.Terminal()
        shown = fitted(lines(term), console.height, term)
        return Text.from_ansi("\n".join(shown), no_wrap=True)

    # Cut by fitted, not by Live: its `...` under a cut frame was bold (red at a colour
    # terminal), written under NO_COLOR too.
    with Live(frame(), console=console, auto_refresh=False, vertical_overflow="crop") as live:
        while True:
            time.sleep(EVERY)  # nothing to wait on in between: the times shown grow
            live.update(frame(), refresh=True)


def fitted(lines: list[str], height: int, term: plain.Terminal) -> list[str]:
    """`lines` in `height` rows of the window: past it, the first ones and a last `…`, as a
    cut cell ends (the rows that did not fit are the last: the queue's far end)."""
    if len(lines) <= height:
        return lines
    return [*lines[: max(0, height - 1)], term.shown(plain.ELLIPSIS)]


def _append(lines: Callable[[plain.Terminal], list[str]], term: plain.Terminal) -> None:
    while True:
        term.write(lines(term))
        term.stream.flush()
        time.sleep(EVERY)
        term.stream.write("\n")
