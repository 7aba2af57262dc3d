"""Why jobs a wait waits for will not end by themselves: a paused one (until resumed), one that
waits for a held or paused job (the daemon's reason names the verb that lets it run), and
any, with the queue paused. Said by `gpuherd wait` and `submit --wait` (cli/stuck_notes.py,
on stderr) and by the Python API's waits (pyapi_stuck.py, as warnings). Apart from the CLI
so that the Python API says the same facts in the same words; it was cli/stuck_notes.py's
alone, and `sweep.wait()` with the queue paused waited in silence, as though hung."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from gpuherd.client import Client
from gpuherd.core.idspec import format_ids
from gpuherd.errors import NotFound
from gpuherd.typed_name import typed_name

ASKED_ONE_BY_ONE = 20
"""Up to this many jobs are asked about one by one (GET /jobs/N, each with its reason); of
more, the paused jobs are listed and the daemon asked whether the queue is paused."""
_BLOCKED = ("gpuherd release ", "gpuherd resume ")
"""The daemon's words in the reason of a job that waits for a held or paused job (and for
nothing that ends by itself: a held job's --begin time is said as such, with neither)."""
QUEUE_PAUSED = "queue paused"
"""The reason of a queued job that waits for the queue's resume alone."""


def why_stuck(client: Client, ids: Sequence[int]) -> list[str]:
    """The notes (without the `gpuherd: ` a CLI line starts with) for the jobs among `ids`
    that wait for a resume or a release. Of more than ASKED_ONE_BY_ONE jobs, only the paused
    ones and a paused queue are said: which of thousands wait for a held job would take a
    listing of the whole queue, and a bare `wait` names the held jobs already
    (wait_cmd._not_waited_for)."""
    paused: list[int] = []
    blocked: dict[str, list[int]] = {}
    queue_paused = False
    if len(ids) > ASKED_ONE_BY_ONE:
        wanted = set(ids)
        paused = [job["id"] for job in client.get("/jobs", state=["paused"])["jobs"]]
        paused = [job_id for job_id in paused if job_id in wanted]
        queue_paused = bool(client.get("/daemon").get("queue_paused"))
    for job in _asked(client, ids) if len(ids) <= ASKED_ONE_BY_ONE else ():
        reason = str(job.get("reason") or "")
        if job["state"] == "paused":
            paused.append(job["id"])
        elif reason.startswith(QUEUE_PAUSED):
            queue_paused = True
        elif any(word in reason for word in _BLOCKED):
            blocked.setdefault(reason, []).append(job["id"])
    name = typed_name()
    notes = []
    if queue_paused:
        notes.append(f"the queue is paused: no job starts until {name} resume")
    if paused:
        them, one = format_ids(paused), len(paused) == 1
        notes.append(
            f"{'job' if one else 'jobs'} {them} {'is' if one else 'are'} paused: waiting "
            f"until {'it is' if one else 'they are'} resumed ({name} resume {them})"
        )
    for reason, stuck in blocked.items():
        one = len(stuck) == 1
        said = reason.replace("gpuherd ", f"{name} ")  # (the daemon cannot know the name typed)
        them = f"job {stuck[0]} is" if one else f"jobs {format_ids(stuck)} are"
        notes.append(f"{them} {said}")
    return notes


def _asked(client: Client, ids: Sequence[int]) -> list[dict[str, Any]]:
    """The jobs among `ids` that are queued or paused now, each with its reason."""
    jobs = []
    for job_id in ids:
        with contextlib.suppress(NotFound):  # (removed meanwhile: the wait says so)
            jobs.append(client.get(f"/jobs/{job_id}"))
    return [job for job in jobs if job.get("state") in ("queued", "paused")]
