"""Printing a job's log (`log`, `log -f`, `submit --follow`): following it as it comes,
pointing at stderr when stdout is empty, and checking `--attempt` against the job's."""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from gpuherd.client import Client
from gpuherd.errors import HerdError
from gpuherd.following import follow_log


def check_attempt(client: Client, job_id: int, attempt: int | None) -> None:
    """Refuse `--attempt 0` (or below) in words, naming the job's latest attempt when the
    daemon can tell it: a wrong number above it is the daemon's to refuse (`has no
    attempt 3: it has run once`)."""
    if attempt is None or attempt >= 1:
        return
    try:
        latest = int(client.get(f"/jobs/{job_id}")["attempt"])
    except HerdError:
        latest = None  # no such job, or no daemon: the number alone is wrong enough
    if latest is None:
        known = "leave --attempt out for the latest"
    elif latest == 0:
        known = f"job {job_id} has not started yet"
    else:
        known = f"job {job_id}'s latest is {latest} (what `gpuherd log {job_id}` shows)"
    raise click.UsageError(f"--attempt {attempt}: attempts are numbered from 1; {known}")


def has_text(client: Client, job_id: int, stream: str, attempt: int | None) -> bool | None:
    """Whether that log holds text; None when it cannot be read (not started, or gone)."""
    try:
        pieces = client.download(f"/jobs/{job_id}/log", stream=stream, attempt=attempt, lines=1)
        return any(pieces)
    except HerdError:
        return None


def point_at_stderr(client: Client, job_id: int, attempt: int | None, follow: str) -> None:
    """A job whose stdout is empty but not its stderr (logging, tqdm and warnings write
    there) looks silent: say where its output is."""
    if has_text(client, job_id, "stderr", attempt):  # (None: nothing to point at)
        click.echo(
            f"gpuherd: job {job_id} wrote nothing to stdout so far, but to stderr: "
            f"gpuherd log{follow} {job_id} --stderr",
            err=True,
        )


def print_follow(
    client: Client,
    job_id: int,
    stream: str = "stdout",
    attempt: int | None = None,
    lines: int | None = None,
    on_gone: Callable[[], None] | None = None,
) -> None:
    """Print a job's log as it comes until the job ends (`log -f`, `submit --follow`)."""
    for kind, piece in follow_log(client, job_id, stream, attempt, lines, on_gone):
        if kind == "attempt":  # a retry: its log follows (said on stderr, apart from the log)
            click.echo(f"gpuherd: job {job_id}: attempt {piece} began", err=True)
            continue
        sys.stdout.write(piece)
        sys.stdout.flush()
