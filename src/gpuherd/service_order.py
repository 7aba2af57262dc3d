"""`priority`, and `move`: a waiting job's place in the queue, to the front, just before
another waiting job, or swapped with another's (tsp -U, pueue's switch). A part of `Service`.

Waiting jobs start in the order priority (higher first), then position; a job's place among
equal priorities is its position. A move that has to pass jobs of a higher priority takes
their priority, and says so: the place asked for, not the priority, is what the user meant.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.core.model import Job
from gpuherd.core.states import WAITING_STATES, what_it_is
from gpuherd.errors import Conflict, InvalidValue
from gpuherd.service_jobs import JobVerbs
from gpuherd.submission_text import field
from gpuherd.wire import ActionResult

PLACES = (field("first"), field("before", "ID"), field("swap", "ID"))
"""The places a move takes, one at a time: `first (--first)`, `before ID (--before ID)`,
`swap ID (--swap ID)`."""


class MoveVerbs(JobVerbs):
    async def set_priorities(self, ids: Sequence[int], priority: int) -> list[ActionResult]:
        """set_priority of each job, one result each (`gpuherd priority IDS P`: a sweep's
        points at once), in pieces as the other verbs of many jobs (JobVerbs.act)."""
        return await self.in_pieces(
            lambda piece: self._each(piece, lambda job: self._prioritized(job, priority)), ids
        )

    def set_priority(self, job_id: int, priority: int) -> str:
        """A waiting or running job's priority (a running one's counts if it is queued again)."""
        return self._prioritized(self._job(job_id), priority)

    def _prioritized(self, job: Job, priority: int) -> str:
        job_id = job.id
        self._refuse_ended(job, "change its priority")
        self.store.update_job(
            job_id, self.engine.clock(), "priority", detail=str(priority), priority=priority
        )
        # Published (no state change) so pages and event streams showing the job see it.
        self.engine.publish({"id": job_id, "state": job.state.value, "event": "priority"})
        self.engine.wake()
        return f"priority {priority}"

    def move(self, job_id: int, first: bool, before: int | None, swap: int | None = None) -> str:
        """To the front (`first`), just before job `before`, or in the place of job `swap`,
        which takes this one's."""
        given = [first, before is not None, swap is not None].count(True)
        if given != 1:
            raise InvalidValue(
                f"say where to move the job: {', '.join(PLACES[:2])}, or {PLACES[2]}"
                if not given
                else f"give only one of {', '.join(PLACES[:2])} or {PLACES[2]}"
            )
        other = before if swap is None else swap
        if other == job_id:
            verb = "move before" if swap is None else "swap with"
            raise InvalidValue(f"job {job_id} cannot {verb} itself: name another queued job")
        job = self._waiting(job_id)
        if swap is not None:
            return self._swap(job, self._waiting(swap))
        with self.store.transaction():  # a renumbering and the move: both or neither
            priority, new_position = self._place(job, before)
            raised = _priority_change(job.priority, priority)
            self.store.update_job(
                job_id,
                self.engine.clock(),
                "move",
                detail=f"position {new_position}{raised}",
                priority=priority,
                position=new_position,
            )
        self._moved(job)
        return ("moved to the front" if first else f"moved before job {before}") + raised

    def _swap(self, job: Job, other: Job) -> str:
        """`job` and `other` exchange their places: each takes the other's priority and
        position (its position alone would not move it past a job of another priority)."""
        with self.store.transaction():  # the two moves (and a renumbering): all or none
            if (job.priority, job.position) == (other.priority, other.position):
                # One place for two (ties go by id): give the class distinct positions first.
                self.store.renumber_positions(job.priority)
                job, other = self._job(job.id), self._job(other.id)
            now = self.engine.clock()
            for mover, into in ((job, other), (other, job)):
                changed = _priority_change(mover.priority, into.priority)
                self.store.update_job(
                    mover.id,
                    now,
                    "swap",
                    detail=f"with job {into.id}: position {into.position}{changed}",
                    priority=into.priority,
                    position=into.position,
                )
        self._moved(job, other)
        if job.priority == other.priority:
            return f"swapped with job {other.id}"
        return (
            f"swapped with job {other.id} (priority {job.priority} -> {other.priority}; "
            f"job {other.id}: priority {other.priority} -> {job.priority})"
        )

    def _waiting(self, job_id: int) -> Job:
        """Job `job_id`, which must be queued or held to move (NotFound for no such job)."""
        job = self._job(job_id)
        self._refuse_ended(job, "move it")
        self._refuse_unless_waiting(job, "move", "only queued or held jobs can move")
        return job

    def _moved(self, *jobs: Job) -> None:
        """Pages and event streams showing the jobs see them in their new places."""
        for job in jobs:
            self.engine.publish({"id": job.id, "state": job.state.value, "event": "move"})
        self.engine.wake()

    def _place(self, job: Job, before: int | None) -> tuple[int, float]:
        """The priority and position that put `job` at the front of the queue (`before` None)
        or just ahead of job `before`. A position between two others is their midpoint; where
        a float has no number left between them, the priority class is renumbered first."""
        for renumbered in (False, True):
            if before is None:
                front = self.store.queue_front()
                priority, ahead_of = front if front else (job.priority, job.position)
                priority, prev = max(priority, job.priority), None
            else:
                anchor = self._job(before)
                if anchor.state not in WAITING_STATES:
                    raise Conflict(
                        f"job {before} {what_it_is(anchor.state)}: move before a queued job"
                    )
                priority, ahead_of = anchor.priority, anchor.position
                prev = self.store.neighbour_position(priority, ahead_of, before=True)
            position = ahead_of - 1.0 if prev is None else (prev + ahead_of) / 2
            if renumbered or ((prev is None or prev < position) and position < ahead_of):
                break
            self.store.renumber_positions(priority)
        return priority, position


def _priority_change(was: int, now: int) -> str:
    """` (priority 0 -> 5)` for a move that changed the job's priority; '' if none."""
    return f" (priority {was} -> {now})" if now != was else ""
