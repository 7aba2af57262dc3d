"""`ls`'s options for a researcher's history and for scripts, as Slurm's `sacct -S ... -o ...
-P` and `squeue -o` give them: a time window (--since, --until), the columns (--columns),
CSV (--csv), and a listing kept up to date (--watch); and the combinations refused."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuherd.cli.options import all_of
from gpuherd.cli.param_types import SINCE
from gpuherd.core.when import window_refusal

if TYPE_CHECKING:
    from gpuherd.client import Client

F = TypeVar("F", bound=Callable[..., Any])


def _columns(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from gpuherd.cli.ls_table import parse_columns  # deferred: the tables' code

    try:
        return parse_columns(value)
    except ValueError as exc:
        raise click.UsageError(f"--columns: {exc}", ctx) from None


def _column_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from gpuherd.cli.completion_cmd import columns  # (loaded only when the shell asks)

    return columns(ctx, param, incomplete)


def window_options() -> Callable[[F], F]:
    """--since and --until: the jobs in the queue in a time window (JobFilter says which)."""
    return all_of(
        click.option(
            "--since",
            type=SINCE,
            metavar="WHEN",
            help="Only jobs in the queue since then (ended since, or not ended), finished ones"
            " too: 2d, 12h, yesterday, 23:30, 2026-11-20.",
        ),
        click.option(
            "--until",
            type=SINCE,
            metavar="WHEN",
            help="Only jobs submitted by then (WHEN as for --since).",
        ),
    )


def view_options() -> Callable[[F], F]:
    """--columns, --csv and --watch: what the listing shows, and how."""
    return all_of(
        click.option(
            "--columns",
            callback=_columns,
            shell_complete=_column_names,
            metavar="LIST",
            help="The columns, in order (e.g. id,state,time): id, state, name, gpus, prio, time,"
            " info, command, project, sweep, git, exit, pid, submitted, started, ended, folder,"
            " stdout, stderr.",
        ),
        click.option("--csv", "as_csv", is_flag=True, help="Print CSV (values as --json's)."),
        click.option(
            "-w", "--watch", is_flag=True, help="Refresh in place every 2 s (Ctrl-C ends)."
        ),
    )


def check_ls_options(
    quiet: bool,
    as_json: bool,
    as_csv: bool,
    watch: bool,
    columns: tuple[str, ...] | None,
    since: float | None,
    until: float | None,
) -> None:
    """One way to print at a time (as `sweep status` refuses --csv with --json); --columns
    for what has columns; a window that can hold a job. (-q with --json: one_output.)"""
    ways = (("--watch", watch), ("--csv", as_csv), ("--json", as_json), ("-q", quiet))
    given = [flag for flag, on in ways if on]
    if len(given) > 1:
        raise click.UsageError(f"give {given[0]} or {given[1]}, not both")
    if columns is not None and (as_json or quiet):
        flag, what = ("--json", "every field") if as_json else ("-q", "the ids alone")
        raise click.UsageError(
            f"--columns picks the table's or --csv's columns; {flag} prints {what}"
        )
    if refusal := window_refusal(since, until, time.time()):
        raise click.UsageError(refusal)


def prefix_hint(
    client: Client, states: tuple[str, ...], match: dict[str, Any], all_jobs: bool
) -> str:
    """For `ls --name resnet` that matched nothing, where jobs named `resnet-...` would:
    --name takes a whole name (as pueue's and task-spooler's users may not expect), and a
    pattern finds those. Asked only then, and for one job."""
    name = match["name"]
    if not name or any(c in name for c in "*?["):
        return ""
    wider = {**match, "name": name + "*"}
    found = client.get("/jobs", state=list(states), **wider, all=all_jobs or None, limit=1)
    if not found["jobs"]:
        return ""
    pattern = shlex.quote(name + "*")
    return f"none is named {name}; --name {pattern} finds the names that start with {name}"
