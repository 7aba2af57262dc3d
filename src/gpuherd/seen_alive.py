"""The attempts a stopping daemon left running, and when it last saw them alive: a sign of
life for the next daemon, which may find one of them gone with no exit status (lost). A
job that replaced its shell (`exec python train.py`) writes nothing at its end, and one
that wrote no log either was recorded as lost at its start, run time 0.0s, though the daemon
that stopped had watched it run until then (core.recovery.lost_end takes the latest sign).

Kept in herd.db's settings (one row, replaced at each stop, dropped once read): a daemon that
crashes leaves none, and its attempts' signs are their folders' alone, as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from gpuherd.store import Store

SETTING = "seen_alive"


def leave(store: Store, attempts: Iterable[tuple[int, int]], at: float) -> None:
    """Record that these attempts (job id, attempt) ran at `at` (the daemon stops, they go on)."""
    store.set_setting(SETTING, json.dumps({"at": at, "attempts": sorted(attempts)}))


def take(store: Store) -> dict[tuple[int, int], float]:
    """What the last daemon left (when each attempt was seen alive), and drop it: it holds
    only for the start that follows that stop."""
    text = store.get_setting(SETTING)
    if not text:
        return {}
    store.set_setting(SETTING, "")
    try:
        left = json.loads(text)
        at = float(left["at"])
        return {(int(job), int(attempt)): at for job, attempt in left["attempts"]}
    except (ValueError, TypeError, KeyError):  # (written by this module: not expected)
        return {}
