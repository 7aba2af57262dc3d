"""Keep-alives on the daemon's endless streams (`log -f`, `Job.follow()`), and how long a
client waits through their silence.

A follow legitimately hears nothing for hours (a quiet job), so its client read with no time
limit, and a daemon that was stopped (SIGSTOP) or hung held `log -f` and `job.follow()` for
ever. The daemon now sends an SSE comment (`: keep-alive`, which every SSE reader, older
gpuherd clients and browsers alike, skips) after INTERVAL seconds without a word, and names
the interval in a header of the answer; a client that reads that header gives up after
MISSED keep-alives that did not come. A daemon from before names none: its stream is read
without a limit, as before (a stopped one is still said: client_wait). Shared by the daemon
and the client; standard library only (the CLI imports it at every start).
"""

from __future__ import annotations

import os

INTERVAL = float(os.environ.get("GPUHERD_TEST_KEEP_ALIVE") or 10.0)
"""Seconds of a stream's silence after which the daemon sends a keep-alive. The follow looks
at its log every 0.2 s anyway (api/log_follow.POLL): a keep-alive costs the daemon nothing
more, and only while a stream is open. (The variable is the tests': theirs take a second.)"""
HEADER = "gpuherd-keep-alive"
"""The answer's header naming INTERVAL, in seconds."""
MISSED = 3
"""Keep-alives a client lets go missing before it says the daemon stopped answering: one late
(a loop held a second or two by a large submission) is not a hung daemon."""
COMMENT = ": keep-alive\n\n"
"""The keep-alive itself: an SSE comment and the blank line that ends it."""


def silence_limit(named: str | None) -> float | None:
    """Seconds of silence a client waits for on a stream whose answer's HEADER is `named`;
    None (no limit) when the daemon names no interval, or one that makes no sense."""
    try:
        seconds = float(named) if named is not None else 0.0
    except ValueError:
        return None
    return MISSED * seconds if 0 < seconds < float("inf") else None
