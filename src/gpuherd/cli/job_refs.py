"""Which jobs a command means: `last` where the CLI takes job ids (the job submitted last:
`gpuherd log`, `show`, `kill last`, `wait last`, `--after last`, as task-spooler's `tsp -d`),
and the ids of the jobs a listing matches (`ls -q`, `wait`, `clean`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from gpuherd.cli.param_types import LAST, their_word
from gpuherd.client import Client
from gpuherd.core.idspec import parse_job_refs
from gpuherd.errors import HerdError
from gpuherd.typed_name import typed_name

FINISHED = {"succeeded", "failed", "killed", "cancelled", "lost"}


def newest_job(client: Client, said: str | None = None) -> int | None:
    """The id of the job submitted last (None: no job yet). Where `last` was `said`: a
    HerdError when that job is gone (`gpuherd rm`, `clean`), as the newest job left is
    another one (`--after last` waited for an older, failed job and was cancelled at once)."""
    # Asked before the newest job: one submitted in between is newer, not taken for a removal.
    submitted = client.get("/daemon").get("last_job") if said is not None else None
    newest = client.get("/jobs", all=True, limit=1, newest=True)["jobs"]
    newest_id = int(newest[0]["id"]) if newest else None
    if submitted and (newest_id or 0) < submitted:  # (None: a daemon from before last_job)
        raise HerdError(
            f"{said}: job {submitted}, the job submitted last, was removed ({typed_name()} rm "
            f"or clean): give the id of the job you mean ({typed_name()} ls --all lists the "
            "jobs there are)"
        )
    return newest_id


def one_job(client: Client, job_id: int | str | None) -> int:
    """The job a command of one job means (JOB_ID): the one given, or for `last`, or none
    given where the id may be left out (`log`, `show`), the job submitted last (where left
    out: the newest job there is, the one submitted last removed or not)."""
    if job_id is not None and job_id != LAST:
        return int(job_id)
    newest = newest_job(client, LAST if job_id == LAST else None)
    if newest is None:
        raise HerdError(f"no job yet: `{typed_name()} submit` queues one")
    return newest


def resolve_last(client: Client, ids: Sequence[int | str], option: str) -> list[int]:
    """`ids` with `last` replaced by the job submitted last, asked once (`option`: where it
    was given, `--after`; "" for a verb's IDS)."""
    if LAST not in ids:
        return [int(i) for i in ids]
    said = f"{option} {LAST}".strip()
    newest = newest_job(client, said)
    if newest is None:
        raise HerdError(f"{said}: there is no job yet" + (" to wait for" if option else ""))
    return sorted({newest if i == LAST else int(i) for i in ids})


def given_ids(client: Client, tokens: tuple[str, ...]) -> list[int]:
    """Job ids from argv tokens (`3-7,9`, `1 2 3`, lines of `"$(gpuherd ls -q)"`), where
    `last` is the job submitted last (`gpuherd kill last`, as `tsp -k` kills the last job;
    `kill 82,last` too). A blank word (`kill "$(gpuherd ls -q --state lost)"` when none is)
    names none: given nothing else, it is said as no ids given is, and exits 0 (it was
    refused, exit 2, where `kill` alone does nothing and says so)."""
    words = tuple(token for token in tokens if token.strip())
    if not words:
        click.echo(none_given(click.get_current_context().info_name or "do"))
        sys.exit(0)
    try:
        ids = parse_job_refs(list(words), LAST)
    except ValueError as exc:
        ctx = click.get_current_context(silent=True)
        theirs = next(filter(None, (their_word(ctx, word) for word in words)), None)
        # It names the id: no "Invalid value for IDS"; `kill all` says how to name them all.
        raise click.UsageError(theirs or str(exc)) from None
    return resolve_last(client, ids, "")


def none_given(verb: str) -> str:
    """What a verb given no job ids says (`kill $(gpuherd ls -q ...)` when nothing matched
    does nothing, as `xargs -r`), exit 0: queue_cmds' words, for the verbs of job_refs too."""
    example = f"{typed_name()} {verb} 3-7" + (" 10" if verb == "priority" else "")
    return f"no job ids given: nothing to {_NOTHING_TO.get(verb, verb)} (e.g. {example})"


_NOTHING_TO = {"wait": "wait for", "priority": "change"}
"""What there is nothing to do, where it is not the verb itself (`nothing to kill`)."""


def listed_ids(
    client: Client,
    states: tuple[str, ...] = (),
    match: dict[str, Any] | None = None,
    all_jobs: bool = False,
) -> list[int]:
    """The ids `ls -q` prints: of the jobs matching, or else of every job not finished."""
    match = match or {}
    answer = client.get("/jobs", state=list(states), **match, all=all_jobs or None, ids_only=True)
    filtered(answer, match)
    if "ids" in answer:
        return list(answer["ids"])
    # A daemon from before ids_only answers with the whole listing.
    return [job["id"] for job in unless_finished(answer["jobs"], states, all_jobs)]


def filtered(answer: dict[str, Any], match: dict[str, Any]) -> dict[str, Any]:
    """The answer, unless the daemon ignored a filter asked for: an older daemon lists every
    job, and `kill $(gpuherd ls -q --sweep S)` would then kill them all."""
    known = ("project", *answer.get("filtered", ()))  # every daemon knows --project
    unknown = [k for k, v in match.items() if v is not None and k not in known]
    if unknown:
        raise click.ClickException(
            f"the daemon cannot filter by --{unknown[0]}: it runs an older gpuherd; restart "
            f"it ({typed_name()} daemon stop, then {typed_name()} daemon start: running jobs go on)"
        )
    return answer


def unless_finished(
    jobs: list[dict[str, Any]], states: tuple[str, ...], all_jobs: bool
) -> list[dict[str, Any]]:
    """`kill $(ls -q)`: without --all or --state, not the finished jobs `ls` shows for context."""
    return jobs if states or all_jobs else [j for j in jobs if j["state"] not in FINISHED]
