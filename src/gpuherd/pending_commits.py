"""The jobs whose git commit is still being looked up (job_commits.py), kept in herd.db's
settings (one row) from their submission until git answers: a daemon that stops (or is
killed) first leaves them there, and the next one looks them up again as it starts.

The row: a JSON list of {"cwd", "path", "ids"}, a place (a working directory and the
submitter's PATH: what git runs with) and its jobs as [first, last] runs of ids."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuherd.core.idspec import number_runs
from gpuherd.git_lookups import Where
from gpuherd.saved_settings import DamagedSetting

if TYPE_CHECKING:
    from gpuherd.store import Store

SETTING = "git_pending"

log = logging.getLogger("gpuherd.daemon")

Pending = dict[Where, set[int]]


def pending(store: Store) -> Pending:
    """The jobs waiting for their commit, by place (none, if the row is damaged: said)."""
    text = store.get_setting(SETTING)
    if not text:
        return {}
    newest = store.last_job_id()
    try:
        found: Pending = {}
        for entry in json.loads(text):
            place = (str(entry["cwd"]), None if entry["path"] is None else str(entry["path"]))
            ids = found.setdefault(place, set())
            for first, last in entry["ids"]:
                first, last = int(first), int(last)
                # (a run past the ids there are was a hand edit's: [1, 1e9] held the daemon's
                # loop as it built a billion ids, and 1e999 refused every slow-git submission)
                if not 1 <= first <= last <= newest:
                    raise ValueError(f"ids {first}-{last} are not jobs' (the last is {newest})")
                ids.update(range(first, last + 1))
        return found
    # (a hand edit: what it held is lost)
    except (ValueError, TypeError, KeyError, ArithmeticError) as exc:
        said = DamagedSetting(SETTING, text, str(exc) or type(exc).__name__)
        log.warning("%s: forgotten (those jobs keep no commit)", said)
        return {}


def note(store: Store, jobs: Iterable[tuple[Where, int]]) -> None:
    """Add these jobs (place, job id) to those waiting for their commit."""
    with store.transaction():
        found = pending(store)
        for place, job_id in jobs:
            found.setdefault(place, set()).add(job_id)
        _save(store, found)


def drop(store: Store, ids: Iterable[int]) -> None:
    """These jobs wait no more (git answered for them; in the caller's transaction)."""
    gone = set(ids)
    with store.transaction():
        found = pending(store)
        _save(store, {place: left for place, ids in found.items() if (left := ids - gone)})


def _save(store: Store, found: Pending) -> None:
    rows = [
        {"cwd": cwd, "path": path, "ids": number_runs(ids)}
        for (cwd, path), ids in sorted(found.items(), key=lambda x: (x[0][0], x[0][1] or ""))
    ]
    store.set_setting(SETTING, json.dumps(rows) if rows else "")
