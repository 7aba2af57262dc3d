"""A job's dependencies: their kinds (Slurm's afterok, afterany, afternotok), which end of the
job waited for meets each, and how one job's lists are kept apart (pure)."""

from __future__ import annotations

from collections.abc import Sequence, Set

from gpuherd.core.idspec import format_ids
from gpuherd.core.states import BAD_END_STATES, FINISHED_STATES, JobState

KINDS = ("after", "after_any", "after_fail")
"""The JobSpec fields that name the jobs a job waits for, one per kind: each is also the
name of the kind in the `deps` table, the Python API's and the HTTP API's field, and (with
dashes) the CLI's option."""

MEETS: dict[str, frozenset[JobState]] = {
    "after": frozenset({JobState.SUCCEEDED}),
    "after_any": FINISHED_STATES,
    # Slurm's afternotok: "terminated in some failed state". Every end but a success:
    # a failure (an exit code, a signal, a timeout, CUDA out of memory, a failed start),
    # a kill, a cancel (one by a dependency too), a lost process. A job that will be
    # retried is queued again, not ended: its waiters wait through its retries.
    "after_fail": BAD_END_STATES,
}
"""The end states of a job that meet each kind of dependency on it."""


def option(kind: str) -> str:
    """The CLI option of a kind: `--after-fail`."""
    return "--" + kind.replace("_", "-")


def never_met(kind: str, state: JobState) -> bool:
    """Whether a dependency of this kind on a job in `state` can no longer be met: that job
    has ended, and not in an end the kind waits for (its waiter is cancelled)."""
    return state in FINISHED_STATES and state not in MEETS[kind]


def kinds_never_met(state: JobState) -> tuple[str, ...]:
    """The kinds of dependency a job that ended in `state` leaves for ever unmet."""
    return tuple(kind for kind in KINDS if never_met(kind, state))


def kept_apart(
    after: Sequence[int], after_any: Sequence[int], after_fail: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The three lists as a job stores them: each sorted, without repeats, and a job named in
    `after_any` and in another list kept in the other alone (its success, or its failure,
    is also an end: the stricter wait says all). A job in both `after` and `after_fail` is
    kept in both; `contradiction` finds it, to refuse it."""
    strict = set(after) | set(after_fail)
    return (
        tuple(sorted(set(after))),
        tuple(sorted(set(after_any) - strict)),
        tuple(sorted(set(after_fail))),
    )


def contradiction(after: Sequence[int], after_fail: Sequence[int]) -> str | None:
    """What is wrong with a job waiting for the success and the failure of the same job
    (it could never run), or None."""
    both = sorted(set(after) & set(after_fail))
    if not both:
        return None
    return (
        f"job {both[0]} is in both after (--after) and after_fail (--after-fail): a job "
        "cannot both succeed and fail; keep it in one of them"
    )


def kept_list_contradiction(
    job_id: int, after: Sequence[int], after_fail: Sequence[int], edited: Set[str]
) -> str | None:
    """`contradiction` of a job an edit gives one of the two lists (`edited`: the kinds it
    gives or clears), the other being the job's own, kept: said so, with how to change that
    one too. "keep it in one of them" alone sent the user to the command line, where the
    other list was not (`edit 5 --after-fail 4` of a job `--after 4`)."""
    said = contradiction(after, after_fail)
    changed = {"after", "after_fail"} & edited
    if said is None or len(changed) != 1:
        return said
    kept = "after" if "after_fail" in changed else "after_fail"
    dep = min(set(after) & set(after_fail))
    then = "its failure" if kept == "after" else "its success"
    return (
        f"{said.removesuffix('; keep it in one of them')}; job {job_id} already waits for job "
        f"{dep} with {option(kept)}, which this edit keeps: give {option(kept)} too, without "
        f"job {dep} (or --clear {kept}), to wait for {then} instead"
    )


def cancelled_with(said: str, waiters: Sequence[int], named: Set[int], tail: str) -> str:
    """A verb's answer for a job it cancelled (`said`: `cancelled`, `removed`), naming the
    `waiters` cancelled with it as they waited for it (`--after` it, and theirs): else they
    were gone unsaid. Those the verb `named` have lines of their own; `tail` ends the part
    that names them (`, cancelled` after `removed`)."""
    others = sorted(set(waiters) - named) if waiters else []  # (most cancels have none)
    return f"{said}, and {jobs_said(others)}, which waited for it{tail}" if others else said


def cancelled_once_ended(said: str, waiters: Sequence[int], named: Set[int]) -> str:
    """cancelled_with for a running job a kill stops (`said`: `stopping (...)`): the
    `waiters` its end will cancel, in the present tense, as it has not ended yet."""
    others = sorted(set(waiters) - named) if waiters else []
    if not others:
        return said
    wait = "waits" if len(others) == 1 else "wait"
    return f"{said}, and {jobs_said(others)}, which {wait} for it, will be cancelled once it ends"


def jobs_said(ids: Sequence[int]) -> str:
    """`job 5`, `jobs 5-7,9`, `250 jobs (2,4,6,8,…)`: sorted ids, named in a line."""
    runs = format_ids(ids).split(",")
    if len(ids) == 1:
        return f"job {ids[0]}"
    if len(runs) <= _RANGES_SAID:
        return f"jobs {','.join(runs)}"
    # A sweep's points, say, every other id: the line stays a line.
    return f"{len(ids):,} jobs ({','.join(runs[:_RANGES_SAID])},…)"


_RANGES_SAID = 4
