"""The buttons that act on jobs in the dashboard: a job's page, a jobs table's row, and the
jobs page's buttons for the ticked rows, each as (action, label, question)."""

from __future__ import annotations

from gpuherd.core.states import ACTIVE_STATES, FINISHED_STATES, LIVE_STATES, JobState

MOVABLE_STATES = frozenset({JobState.QUEUED, JobState.HELD})
"""The states of a job that `gpuherd move` moves (Service.move)."""

LIKELIEST = {JobState.HELD: "release", JobState.PAUSED: "resume"}
"""A jobs row's first action where it is not job_actions' first (kill, cancel or retry): the
one a user most likely wants. A narrow window shows it alone beside the row's ⋯ menu, and a
held job's showed "cancel", a paused job's "kill"."""


def job_actions(state: str, job_id: int, front: bool = False) -> list[tuple[str, str, str]]:
    """The (action, label, question) buttons that make sense for job `job_id` in `state`;
    the question, if any, is asked before an action that cannot be undone (dashboard.js).
    `front`: "to front" too for a waiting job (a jobs table's row; a job's page has a line
    of its own for moving, with "Move before job N")."""
    s = JobState(state)
    actions: list[tuple[str, str]] = []
    if s in ACTIVE_STATES:
        actions.append(("kill", "kill" if s in LIVE_STATES else "cancel"))
    if s is JobState.RUNNING:
        actions.append(("pause", "pause"))
    if s is JobState.PAUSED:
        actions.append(("resume", "resume"))
    if s is JobState.QUEUED:
        actions.append(("hold", "hold"))
    if s is JobState.HELD:
        actions.append(("release", "release"))
    if s in FINISHED_STATES or s in LIVE_STATES:
        actions.append(("retry", "retry"))
    if s in ACTIVE_STATES:
        actions += [("prio-up", "prio +"), ("prio-down", "prio −")]
    if front and s in MOVABLE_STATES:
        actions.append(("front", "to front"))
    if s not in LIVE_STATES:
        actions.append(("rm", "remove"))
    return [(action, label, _question(action, s, job_id)) for action, label in actions]


def row_actions(state: str, job_id: int) -> list[tuple[str, str, str]]:
    """A jobs table row's buttons: job_actions with "to front", the likeliest first (release
    a held job, resume a paused one; kill a running one, retry a finished one), the others
    in their order (sorted() keeps it)."""
    first = LIKELIEST.get(JobState(state))
    return sorted(job_actions(state, job_id, front=True), key=lambda act: act[0] != first)


def _question(action: str, state: JobState, job_id: int) -> str:
    """What to ask before `action` on a job in `state`: killing or restarting a job that
    runs loses its work, removing a job loses its logs. '' for the rest."""
    if action == "rm":
        return f"Remove job {job_id} and its logs?"
    if state in LIVE_STATES and action in ("kill", "retry"):
        then = "" if action == "kill" else " and start it again"
        return f"Job {job_id} is {state.value}: kill it{then}? Its work so far is lost."
    return ""


BULK_ACTIONS = [
    ("kill", "kill", "Kill the {selected}? The work of those running is lost."),
    ("retry", "retry", "Retry the {selected}? Those running are killed and start again."),
    ("hold", "hold", ""),
    ("release", "release", ""),
    ("pause", "pause", ""),
    ("resume", "resume", ""),
    ("rm", "remove", "Remove the {selected}, logs and all?"),
]
"""The jobs page's buttons for the jobs ticked: (action, label, question) as job_actions;
dashboard.js writes how many are ticked for {selected} ("3 selected jobs") as it asks."""


def retry_failed_question(failed: int, filtered: bool, older: int = 0) -> str:
    """What *Retry all failed* asks, with how many jobs it retries (`failed`, those of the
    page's filter on every page where `filtered`): it asked "Retry every failed job?", the
    same for 1 as for 3,000. Nothing for none: there is nothing to lose. `older`: the failed
    jobs it leaves out (older_runs)."""
    if not failed:
        return ""
    these = "the 1 failed job" if failed == 1 else f"all {failed:,} failed jobs"
    asked = f"Retry {these} of this filter, on every page?" if filtered else f"Retry {these}?"
    return f"{asked} ({older_runs(older)})" if older else asked


def older_runs(older: int) -> str:
    """Of the failed jobs *Retry all failed* leaves out, older runs of sweep points run
    again since, which `retry` refuses (a sweep submitted twice: half its failed jobs)."""
    runs = "1 older run of a sweep point" if older == 1 else f"{older:,} older runs of points"
    return f"{runs} run again since left out: each point's latest job is retried"
