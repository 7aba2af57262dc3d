"""The jobs a `retry` runs again ahead of a dependency that was itself cancelled because one
it waited for ended badly: of a chain 18 <- 19 <- 20 whose job 18 failed, `gpuherd retry 19
20` is refused for job 19, and `gpuherd retry 18 19 20` runs the chain again."""

from __future__ import annotations

from gpuherd.core.states import FINISHED_STATES, JobState, OutcomeKind
from gpuherd.store import Store


def ahead_of(store: Store, dep_id: int) -> list[int]:
    """The jobs, first waited for first, whose ends cancelled job `dep_id` (dependency_failed),
    each through the next; empty when `dep_id` was not cancelled so."""
    ahead: list[int] = []
    job_id = dep_id
    while True:
        job = store.get_jobs([job_id]).get(job_id)
        if job is None or job.state is not JobState.CANCELLED or job.outcome is None:
            return ahead
        if job.outcome.kind is not OutcomeKind.DEPENDENCY_FAILED:
            return ahead
        # The first that ended so, as engine_endings.fail_orphaned_waiters names it.
        ended = [d for d, s, _ in store.unmet_deps(job_id) if JobState(s) in FINISHED_STATES]
        if not ended or ended[0] == dep_id or ended[0] in ahead:  # (deps have no cycle)
            return ahead
        job_id = ended[0]
        ahead.insert(0, job_id)
