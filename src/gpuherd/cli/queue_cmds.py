"""Verbs that change jobs or the queue: kill, rm, retry, pause, resume, hold, release,
priority, move."""

from __future__ import annotations

import sys
from typing import Any

import click

from gpuherd.cli.options import expand_ids, ids_argument
from gpuherd.client import Client
from gpuherd.core.idspec import summarize


def _act(action: str, ids: tuple[str, ...]) -> None:
    results = Client().post(f"/jobs/{action}", {"ids": expand_ids(ids)})["results"]
    lines = summarize((r["id"], r["ok"], r["message"]) for r in results)
    for ok, line in lines:
        click.echo(line if ok else f"gpuherd: error: {line}", err=not ok)
    if not all(ok for ok, _ in lines):
        sys.exit(1)


def _verb(action: str, doc: str, name: str | None = None) -> click.Command:
    @click.command(name=name or action, help=doc)
    @ids_argument()
    def command(ids: tuple[str, ...]) -> None:
        _act(action, ids)

    return command


kill = _verb(
    "kill",
    "Stop jobs: queued ones are cancelled, running ones get SIGTERM, then "
    "SIGKILL after their grace period. IDS: 3, 3-7, 3,5,9.",
)
rm = _verb("rm", "Remove jobs: cancel queued ones, forget finished ones and their logs.")
retry = _verb(
    "retry",
    "Run finished jobs again as a new attempt; a running job is stopped "
    "gracefully and queued again (for jobs that resume from a checkpoint).",
)
hold = _verb("hold", "Keep queued jobs from starting until `gpuherd release`.")
release = _verb("release", "Let held jobs run again.")


def _queue_or_jobs(action: str) -> Any:
    @click.command(name=action)
    @ids_argument(required=False)
    def command(ids: tuple[str, ...]) -> None:
        if ids:
            _act(action, ids)
        else:
            click.echo(Client().post(f"/queue/{action}")["message"])

    verb = "Pause" if action == "pause" else "Resume"
    signal = "SIGSTOP" if action == "pause" else "SIGCONT"
    command.help = (
        f"{verb} running jobs ({signal} to the whole process group), or without IDS "
        f"{action} the queue's dispatch (running jobs are not touched)."
    )
    return command


pause = _queue_or_jobs("pause")
resume = _queue_or_jobs("resume")


@click.command()
@click.argument("job_id", type=click.IntRange(1))
@click.argument("priority", type=int)
def priority(job_id: int, priority: int) -> None:
    """Set a job's priority (higher runs first)."""
    click.echo(
        f"job {job_id}: "
        + Client().post(f"/jobs/{job_id}/priority", {"priority": priority})["message"]
    )


@click.command()
@click.argument("job_id", type=click.IntRange(1))
@click.option("--first", is_flag=True, help="To the front of the queue.")
@click.option("--before", type=click.IntRange(1), help="Just before this queued job.")
def move(job_id: int, first: bool, before: int | None) -> None:
    """Move a queued job: --first, or --before ID."""
    if first == (before is not None):
        raise click.UsageError("give exactly one of --first or --before ID")
    answer = Client().post(f"/jobs/{job_id}/move", {"first": first, "before": before})
    click.echo(f"job {job_id}: {answer['message']}")


COMMANDS = [kill, rm, retry, pause, resume, hold, release, priority, move]
