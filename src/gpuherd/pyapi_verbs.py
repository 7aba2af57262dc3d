"""The Python API's verbs on many jobs in one request (`JobList.kill()`, `hold()`,
`release()`, `retry()`; `Sweep.kill()`, `hold()`, `release()`), and what a verb is given,
checked once for a job's verbs and a list's alike: a kill's grace, a retry's hold.

A list's verb is the CLI's `gpuherd kill 3-7`: one POST /jobs/ACTION naming every job (a
loop of `job.kill()` was a request per job: 2,000 for a sweep of 2,000 points)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from gpuherd.body_cap import MAX_BODY_BYTES
from gpuherd.core.lifecycle import chosen_grace_refused
from gpuherd.core.units import parse_grace
from gpuherd.errors import InvalidValue
from gpuherd.pyapi_types import WrongType, as_given, check_types, read_value
from gpuherd.pyapi_values import in_units, plain

if TYPE_CHECKING:
    from gpuherd.client import Client
    from gpuherd.pyapi import Job

IDS_PER_REQUEST = MAX_BODY_BYTES // 32
"""The most ids one request names: an id is at most 20 characters with its ", " after it, so
a request stays under the daemon's cap on a body (body_cap.py) with room to spare. Only
millions of jobs take more than one request."""


def kill_options(grace: float | str | timedelta | None) -> dict[str, Any]:
    """A kill's body besides its ids: {} without a grace, else {"grace": seconds}. `grace`
    as `kill --grace` takes it (seconds, "5m", a timedelta; 0: SIGKILL at once), refused
    here in one line, before anything is sent: a value of another kind (WrongType, a
    TypeError), text that is no duration or a grace out of range (InvalidValue)."""
    if grace is None:
        return {}
    given = plain(grace)  # text as `kill --grace` reads it: "0s" is 0 (in_units refuses 0)
    if isinstance(given, str):
        given = read_value("grace", parse_grace, given)
    chosen = in_units({"grace": given})
    check_types(chosen)  # (a WrongType naming grace=, not pydantic's words)
    try:
        seconds = float(chosen["grace"])
    except OverflowError:  # an int past a float's (10**400): out of range as an infinity is
        seconds = math.inf if chosen["grace"] > 0 else -math.inf
    if refused := chosen_grace_refused(seconds):  # the daemon's own words, with no request
        raise InvalidValue(refused)
    return chosen


def retry_action(hold: bool) -> str:
    """The verb of a retry: `retry-held` with hold=True (as `retry --hold`)."""
    if not isinstance(hold, bool):
        raise WrongType(f"hold is True (held, to release later) or False, got {as_given(hold)}")
    return "retry-held" if hold else "retry"


def act_on(jobs: Iterable[Job], action: str, more: Mapping[str, Any]) -> dict[int, str]:
    """POST /jobs/ACTION naming every job of `jobs` once (with `more` in the body): one
    request per connection the handles came from, in pieces of IDS_PER_REQUEST ids. What
    the daemon said of each job, by id, in the order given; nothing sent for no jobs."""
    by_herd: dict[int, tuple[Client, list[int]]] = {}  # (the herd's id: handles of 2 connections)
    order: dict[int, None] = {}
    for job in jobs:
        if job.id not in order:
            order[job.id] = None
            by_herd.setdefault(id(job.herd), (job.herd.client, []))[1].append(job.id)
    said: dict[int, str] = {}
    for client, ids in by_herd.values():
        for start in range(0, len(ids), IDS_PER_REQUEST):
            piece = ids[start : start + IDS_PER_REQUEST]
            answer = client.post(f"/jobs/{action}", {"ids": piece, **more})
            said.update((int(r["id"]), str(r["message"])) for r in answer["results"])
    return {job_id: said[job_id] for job_id in order if job_id in said}
