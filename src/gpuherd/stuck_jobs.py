"""Why jobs a wait waits for will not end by themselves: a paused one (until resumed), one that
waits for a held or paused job (the daemon's reason names the verb that lets it run), and
any, with the queue paused; and, for the Python API, a held one waited for by name (the CLI
says those its own way: submit_wait.held_note, wait_cmd._held_notes). Said by `gpuherd
wait` and `submit --wait` (cli/stuck_notes.py, on stderr) and by the Python API's waits
(pyapi_stuck.py, as warnings). Apart from the CLI so that the Python API says the same
facts in the same words; it was cli/stuck_notes.py's alone, and `sweep.wait()` with the
queue paused waited in silence, as though hung."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuherd.client import Client
from gpuherd.core.idspec import format_ids
from gpuherd.core.when import format_moment
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


def why_stuck(client: Client, ids: Sequence[int], held: bool = False) -> list[str]:
    """The notes (without the `gpuherd: ` a CLI line starts with) for the jobs among `ids`
    that wait for a resume or a release; with `held`, also for those of them held (the
    Python API's waits: `job.wait()` of a held job waited in silence, as though hung). Of
    more than ASKED_ONE_BY_ONE jobs, only the paused and held ones and a paused queue are
    said: which of thousands wait for a held job would take a listing of the whole queue,
    and a bare `wait` names the held jobs already (wait_cmd._not_waited_for)."""
    stuck = _Stuck()
    if len(ids) > ASKED_ONE_BY_ONE:
        wanted = set(ids)
        listed = client.get("/jobs", state=["paused", "held"] if held else ["paused"])["jobs"]
        for job in listed:
            if job["id"] in wanted:
                stuck.take(job)
        stuck.queue_paused = bool(client.get("/daemon").get("queue_paused"))
    for job in _asked(client, ids, held) if len(ids) <= ASKED_ONE_BY_ONE else ():
        stuck.take(job)
    return stuck.notes()


@dataclass
class _Stuck:
    """The jobs a wait waits for that cannot end by themselves, by why."""

    paused: list[int] = field(default_factory=list)
    holds: dict[float | None, list[int]] = field(default_factory=dict)
    """Held jobs by --begin time (None: until released): one note for one time."""
    blocked: dict[str, list[int]] = field(default_factory=dict)
    """By the daemon's reason: waiting for a held or paused job, or held for a run."""
    queue_paused: bool = False

    def take(self, job: dict[str, Any]) -> None:
        reason = str(job.get("reason") or "")
        if job["state"] == "paused":
            self.paused.append(job["id"])
        elif job["state"] == "held" and reason.startswith("held: attempt"):
            # (held for a run a restored herd.db did not know: its end decides the job)
            self.blocked.setdefault(reason, []).append(job["id"])
        elif job["state"] == "held":
            self.holds.setdefault(job.get("begin"), []).append(job["id"])
        elif reason.startswith(QUEUE_PAUSED):
            self.queue_paused = True
        elif any(word in reason for word in _BLOCKED):
            self.blocked.setdefault(reason, []).append(job["id"])

    def notes(self) -> list[str]:
        name = typed_name()
        notes = []
        if self.queue_paused:
            notes.append(f"the queue is paused: no job starts until {name} resume")
        if self.paused:
            them, one = format_ids(self.paused), len(self.paused) == 1
            notes.append(
                f"{'job' if one else 'jobs'} {them} {'is' if one else 'are'} paused: waiting "
                f"until {'it is' if one else 'they are'} resumed ({name} resume {them})"
            )
        notes += [held_words(ids, begin) for begin, ids in self.holds.items()]
        for reason, ids in self.blocked.items():
            one = len(ids) == 1
            said = reason.replace("gpuherd ", f"{name} ")  # (the daemon cannot know the name)
            them = f"job {ids[0]} is" if one else f"jobs {format_ids(ids)} are"
            notes.append(f"{them} {said}")
        return notes


def held_words(ids: Sequence[int], begin: float | None = None) -> str:
    """`job 7 is held: waiting until it is released (gpuherd release 7 lets it run)`; of
    jobs held until `begin` (their --begin time), `job 7 is held until 02:00 (--begin):
    waiting until then (gpuherd release 7 starts it now)`."""
    them = format_ids(ids)
    one = len(ids) == 1
    if begin is not None:
        return (
            f"{'job' if one else 'jobs'} {them} {'is' if one else 'are'} held until "
            f"{format_moment(begin, time.time())} (--begin): waiting until then "
            f"({typed_name()} release {them} starts {'it' if one else 'them'} now)"
        )
    return (
        f"{'job' if one else 'jobs'} {them} {'is' if one else 'are'} held: waiting until "
        f"{'it is' if one else 'they are'} released ({typed_name()} release {them} lets "
        f"{'it' if one else 'them'} run)"
    )


def _asked(client: Client, ids: Sequence[int], held: bool) -> list[dict[str, Any]]:
    """The jobs among `ids` that are queued or paused now (`held`: or held), each with its
    reason."""
    jobs = []
    for job_id in ids:
        with contextlib.suppress(NotFound):  # (removed meanwhile: the wait says so)
            jobs.append(client.get(f"/jobs/{job_id}"))
    states = ("queued", "paused", "held") if held else ("queued", "paused")
    return [job for job in jobs if job.get("state") in states]
