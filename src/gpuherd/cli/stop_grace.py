"""`--grace D` of `daemon stop --kill` and `daemon restart --kill`: the running jobs'
SIGKILL D after their SIGTERM instead of after each job's own grace."""

from __future__ import annotations

import click

from gpuherd.cli.param_types import GRACE

GRACE_OPTION = click.option(
    "--grace",
    type=GRACE,
    help="With --kill: SIGKILL this long after the SIGTERM (5m; 0: at once) instead of after "
    "each job's own grace.",
)


def refuse_grace_without_kill(grace: float | None, kill: bool) -> None:
    """A grace is the kill's: without --kill the running jobs go on, and nothing would use it
    (checked before anything stops)."""
    if grace is not None and not kill:
        raise click.UsageError("--grace goes with --kill (the stop of running jobs): add --kill")
