"""The options that make a job wait for others: --after, --after-any and --after-fail (one
per kind of dependency, core/deps.KINDS), as submit, sweep and edit take them, and their
`last` made an id."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuherd.cli.job_refs import resolve_last
from gpuherd.cli.param_types import AFTER_IDS, LAST, completes
from gpuherd.core.deps import KINDS, contradiction, option

if TYPE_CHECKING:
    from gpuherd.client import Client

F = TypeVar("F", bound=Callable[..., Any])

_STARTS = {
    "after": "Start only after these jobs succeeded",
    "after_any": "Start only once these jobs ended, however they ended",
    # (one parenthesis, the ids' own, follows each: a second beside it read as a stutter)
    "after_fail": "Start only once these jobs ended without success: failed, timed out, "
    "killed, cancelled or lost",
}


def after_options(short: str | None = None, replaces: bool = False) -> Callable[[F], F]:
    """--after (these jobs must succeed; `short` is its short name), --after-any (must end,
    however) and --after-fail (must end without success); `replaces`: of `edit`, where they
    replace what the job waited for."""
    instead = " They replace the jobs it waited for so." if replaces else ""

    def one(kind: str) -> Callable[[F], F]:
        names = [short, option(kind)] if short and kind == "after" else [option(kind)]
        return click.option(
            *names,
            type=AFTER_IDS,
            multiple=True,
            shell_complete=completes("jobs"),
            # Given twice, both count (click keeps only the last of a plain option: the job
            # could start before the first dependency ended).
            callback=lambda _ctx, _param, lists: [i for ids in lists for i in ids],
            help=f"{_STARTS[kind]} (e.g. 3,5-7, or last: the job submitted last; "
            f"repeatable).{instead}",
        )

    def add(command: F) -> F:
        for kind in reversed(KINDS):  # click lists the last added first
            command = one(kind)(command)
        return command

    return add


def resolved(client: Client, given: Mapping[str, Any]) -> dict[str, list[int]]:
    """The kinds of dependency `given` holds (as the options give them), `last` made the id
    of the job submitted last; a job named in both --after and --after-fail is a mistake of
    the command line (exit 2), refused before the daemon is asked anything."""
    refuse_contradiction(given)
    return {
        kind: resolve_last(client, given[kind] or [], option(kind))
        for kind in KINDS
        if kind in given
    }


def refuse_contradiction(given: Mapping[str, Any]) -> None:
    """UsageError, in the daemon's words, if the ids given to --after and --after-fail share
    a job: it could never run. `last` is left out: which job it is only the daemon knows, so
    a contradiction that `last` makes (`--after last --after-fail 7`, 7 the job submitted
    last), as one with what an edited job waited for already, stays the daemon's to refuse
    (exit 1)."""

    def ids(kind: str) -> list[int]:
        return [i for i in given.get(kind) or () if i != LAST]

    if refusal := contradiction(ids("after"), ids("after_fail")):
        raise click.UsageError(refusal)
