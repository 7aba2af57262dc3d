"""`--watch` of `gpus` and `ls`: a listing read and drawn again every 2 s until Ctrl-C.

At a terminal it is redrawn in place (rich's Live, imported only here). Piped or redirected
(`gpus -w > gpus.log`, `| tee`) a redraw in place means nothing, and rich's Live wrote
nothing until Ctrl-C, then one frame cut at 80 columns: each reading is appended instead, as
the command prints it once, a blank line between two.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gpuherd.cli import plain

EVERY = 2.0
"""Seconds between readings: the daemon's telemetry tick (`gpus`), and `watch`'s default."""


def watch(lines: Callable[[plain.Terminal], list[str]]) -> None:
    """Show `lines(term)` (a reading, laid out for `term`) again and again."""
    term = plain.Terminal()
    if term.stream.isatty():
        _redraw(lines)
    else:
        _append(lines, term)


def _redraw(lines: Callable[[plain.Terminal], list[str]]) -> None:
    from rich.live import Live
    from rich.text import Text

    def frame() -> Text:
        # A new Terminal each time: its width follows a resized window.
        return Text.from_ansi("\n".join(lines(plain.Terminal())), no_wrap=True)

    with Live(frame(), auto_refresh=False) as live:
        while True:
            time.sleep(EVERY)  # nothing to wait on in between: the times shown grow
            live.update(frame(), refresh=True)


def _append(lines: Callable[[plain.Terminal], list[str]], term: plain.Terminal) -> None:
    while True:
        term.write(lines(term))
        term.stream.flush()
        time.sleep(EVERY)
        term.stream.write("\n")
