"""`submit`, `ls`, `show`, `log`, `wait`: put jobs in and look at them."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from gpuherd import paths
from gpuherd.cli import option_checks as checks
from gpuherd.cli.after_options import after_options, resolved
from gpuherd.cli.interrupted_request import said_if_interrupted, submission
from gpuherd.cli.job_refs import (
    FINISHED,
    filtered,
    listed_ids,
    one_job,
    unless_finished,
)
from gpuherd.cli.log_output import (
    check_attempt,
    ended_badly,
    ends_pointing,
    has_text_at,
    not_started_note,
    point_at_stderr,
    print_follow,
    say_daemon_gone,
)
from gpuherd.cli.ls_options import check_ls_options, prefix_hint, view_options, window_options
from gpuherd.cli.main import prefixed
from gpuherd.cli.option_values import refuse_option_as_value
from gpuherd.cli.options import (
    begin_option,
    cwd_option,
    env_option,
    filter_options,
    gpus_option,
    grace_option,
    hold_option,
    json_option,
    max_log_size_option,
    memory_options,
    no_output_options,
    only_gpus_option,
    priority_option,
    project_option,
    quiet_option,
    retries_option,
    retry_delay_option,
    states_option,
    timeout_option,
)
from gpuherd.cli.output_failed import note_queued
from gpuherd.cli.output_options import check_outputs, output_options, refuse_follow_unkept
from gpuherd.cli.param_types import (
    ATTEMPT,
    JOB_ID,
    TakesJobIds,
    WholeRange,
    completes,
)
from gpuherd.client import Client
from gpuherd.core.deps import KINDS
from gpuherd.core.idspec import format_ids
from gpuherd.core.states import JobState
from gpuherd.errors import DaemonError, HerdError, NotFound
from gpuherd.typed_name import typed_name


class _KeepsArgs(click.Command):
    """Keeps its arguments as given (ctx.meta["args"]): what came before submit's command."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["args"] = list(args)
        refuse_option_as_value(ctx, args)
        return super().parse_args(ctx, args)


@click.command(cls=_KeepsArgs, context_settings={"allow_interspersed_args": False})
@click.argument("command", nargs=-1, type=click.UNPROCESSED, shell_complete=completes("files"))
@click.option("-n", "--name", callback=checks.refuse_blank, help="A name to find the job by.")
@gpus_option(short="-g")
@only_gpus_option()
@memory_options()
@priority_option(short="-p")
@after_options(short="-a")
@retries_option()
@retry_delay_option()
@timeout_option()
@max_log_size_option()
@no_output_options()
@output_options()
@grace_option()
@hold_option()
@begin_option()
@project_option()
@cwd_option()
@env_option()
@click.option(
    "--file",
    "file",
    metavar="FILE",
    shell_complete=completes("files"),
    help="Submit one job per line of FILE ('-' = stdin); # comments are skipped.",
)
@click.option(
    "-w",
    "--wait",
    "wait_end",
    is_flag=True,
    help="Wait until the jobs end; exit with the job's exit status (128+N after signal N; "
    "1 when it ended otherwise; of several jobs, the first one's that did not succeed).",
)
@click.option(
    "--follow",
    is_flag=True,
    help="Print the job's stdout as it comes, then exit as --wait does (one job only); "
    "gpuherd's own lines (the job's id) go to stderr.",
)
@quiet_option()
@json_option()
def submit(
    command: tuple[str, ...],
    file: str | None,
    env_pairs: tuple[tuple[str, str], ...],
    wait_end: bool,
    follow: bool,
    quiet: bool,
    as_json: bool,
    **opts: Any,
) -> None:
    """Queue a command: `gpuherd submit -- python train.py --lr 0.1`.

    One argument is run as written by sh (pipes, &&); several are quoted and joined.
    With --wait (or --follow), wait for it to end and exit with its exit status.
    """
    # deferred: only submit parses commands (shlex)
    from gpuherd.cli.job_input import no_command_in, submitted_file
    from gpuherd.cli.submit_hints import gpus_had, stray_values, warn_submitted
    from gpuherd.core.commands import command_from_args
    from gpuherd.wire_requests import options_sent

    checks.one_output(quiet, as_json)
    if file is not None and command:
        raise click.UsageError("give a command or --file, not both")
    ctx = click.get_current_context()
    args = ctx.meta.get("args", command)  # (absent when invoked, not parsed)
    where = (opts["cwd"] or "", dict(env_pairs).get("PATH"))  # the job's folder and PATH
    if command and (
        stray := stray_values(command, args[: len(args) - len(command)], ctx.command, *where)
    ):
        raise click.UsageError(stray)
    only = opts["only_gpus"]
    checks.refuse_cpu_only_mem(opts["gpus"], opts["mem"], "--gpus", opts["exclusive"], None, only)
    checks.refuse_hold_with_begin(opts["hold"], opts["begin"])
    checks.refuse_kill_without_timeout(opts["on_no_output"], opts["no_output_timeout"])
    commands = submitted_file(file) if file is not None else []
    if file is None:
        # An empty one (`submit -- "$CMD"`, CMD unset) is a mistake of the command line too,
        # exit 2: the daemon's refusal of it was exit 1, as of a job it cannot take.
        commands = [command_from_args(command)] if command else []
        if not commands or not commands[0].strip():
            wrong = "the command is empty" if command else "no command"
            raise click.UsageError(f"{wrong}: {typed_name()} submit -- python train.py")
    if not commands:
        raise HerdError(no_command_in(file))
    if follow and len(commands) > 1:
        raise click.UsageError("--follow prints one job's output: give one command (or --wait)")
    cwd = opts.pop("cwd") or paths.current_folder()
    check_outputs(opts, cwd)
    refuse_follow_unkept(follow, opts["output"], cwd)
    client = Client()
    base = {
        "cwd": cwd,
        "env": None,  # the batch's, sent once
        "env_overrides": dict(env_pairs),
        **resolved(client, {kind: opts.pop(kind) for kind in KINDS}),
        "only_gpus": opts.pop("only_gpus") or [],
        "kill_on_no_output": opts.pop("on_no_output") == "kill",
        **opts,
    }
    jobs = [{**options_sent(base), "command": c} for c in commands]
    sent_at = time.time()
    with said_if_interrupted(lambda: submission(len(jobs), sent_at)):
        answer = client.post("/jobs", {"jobs": jobs, "env": paths.submitter_env()})
    note_queued(ids := answer["ids"])  # (said if the output fails: output_failed.py)
    warn_submitted(commands, base, lambda: gpus_had(client))
    if answer.get("draining"):  # (a stop of any kind: which one is said)
        from gpuherd.cli.stopping_note import stopping_warning  # (a stopping daemon's alone)

        click.echo(stopping_warning(client, len(ids)), err=True)
    # Stored, then cancelled at once, as a job they wait for already ended badly: exit 0 all
    # the same (the ids are printed and are jobs), as when it ends so a moment later.
    for warning in answer.get("warnings", ()):
        click.echo(prefixed("warning", warning), err=True)
    waiting = wait_end or follow
    said: str | None
    if as_json:  # the daemon's answer (README "HTTP API"), a job cancelled at once in it
        told = {"ids": ids, "cancelled": [], "draining": False, "warnings": []}  # (older daemons)
        said = json.dumps({**told, **answer})
    elif quiet:  # waiting, -q prints nothing: the exit status tells
        said = None if waiting else "\n".join(str(i) for i in ids)
    else:
        said = (
            f"submitted job {format_ids(ids)}"
            if len(ids) == 1
            else f"submitted {len(ids):,} jobs: {format_ids(ids)}"
        )
    if not waiting:
        click.echo(said)
        return
    from gpuherd.cli.submit_wait import wait_and_exit  # deferred: only a waiting submit

    begin = opts["begin"] if opts["begin"] is not None and opts["begin"] > time.time() else None
    held = (bool(opts["hold"]) or begin is not None) and not quiet  # (-q: no note, as wait -q)
    wait_and_exit(client, ids, follow, said, None if quiet else say_daemon_gone, held, begin)


@click.command(name="ls")
@click.option("-a", "--all", "all_jobs", is_flag=True, help="Every job, finished ones too.")
@states_option(
    [state.value for state in JobState],
    "Only jobs in this state (repeatable, or comma-separated: failed,cancelled): queued, "
    "running, failed, ...",
)
@filter_options()
@window_options()
@click.option(
    "--limit",
    type=WholeRange(1),
    default=None,
    metavar="N",
    help="Show at most N jobs, those nearest now: the running ones (always), the newest"
    " finished and the next waiting to start; without --all, --state or --since, N waiting"
    " jobs. Default 100 in the table (none with --all or --since), all with --json, --csv"
    " or -q.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only the ids, one per line (without --all or --state: the unfinished jobs).",
)
@json_option()
@view_options()
def list_jobs(
    all_jobs: bool,
    states: tuple[str, ...],
    project: str | None,
    sweep: str | None,
    name_glob: str | None,
    limit: int | None,
    quiet: bool,
    as_json: bool,
    since: float | None,
    until: float | None,
    columns: tuple[str, ...] | None,
    as_csv: bool,
    watch: bool,
) -> None:
    """List running and queued jobs and the most recent finished ones."""
    from gpuherd.cli import ls_table, plain, watching  # (deferred: `submit` needs none)

    checks.one_output(quiet, as_json)
    check_ls_options(quiet, as_json, as_csv, watch, columns, since, until)
    client = Client()
    match = {"project": project, "sweep": sweep, "name": name_glob, "since": since, "until": until}
    all_jobs = all_jobs or since is not None or until is not None  # a window: every job in it
    if quiet and limit is None:
        # A --sweep no sweep has is refused by the daemon (`no sweep named 'x': ...`, exit 1):
        # `gpuherd kill $(gpuherd ls -q --sweep TYPO)` stopped nothing, unsaid.
        ids = listed_ids(client, states, match, all_jobs)
        click.echo("\n".join(map(str, ids)), nl=bool(ids))
        return
    if limit is None and not (as_json or quiet or as_csv or all_jobs):
        limit = ls_table.DEFAULT_LS_LIMIT

    unread: set[int] = set()  # (jobs whose rows cannot be read: said, and the exit status 1)

    def listing() -> dict[str, Any]:
        query = {"state": list(states), **match, "all": all_jobs or None, "limit": limit}
        answer = filtered(client.get("/jobs", **query), match)
        unread.update(job["id"] for job in answer.get("unreadable") or ())
        return answer

    def table(term: plain.Terminal) -> list[str]:
        jobs, more = (answer := listing())["jobs"], answer.get("more", 0)
        narrowed = bool(states) or any(value is not None for value in match.values())
        hint = "" if jobs else prefix_hint(client, states, match, all_jobs)
        shown = columns or ls_table.DEFAULT_COLUMNS
        # The limit counts every job listed with --state or --all (else the waiting ones).
        counted = limit if states or all_jobs else None
        earlier = answer.get("more_earlier")
        lines = ls_table.job_lines(
            jobs, more, narrowed, term, hint, all_jobs, shown, earlier, counted
        )
        return ls_table.warned(lines, answer, watch)

    if watch:
        watching.watch(table)
    elif as_json or as_csv:
        shown = None if as_json else columns or ls_table.DEFAULT_COLUMNS
        ls_table.job_document(listing(), shown, None if states or all_jobs else limit)
    elif quiet:  # (with --limit: what could not be read is said as by `ls`)
        jobs = unless_finished(ls_table.warned_jobs(listing()), states, all_jobs)
        click.echo("\n".join(str(job["id"]) for job in jobs))
    else:
        term = plain.Terminal()
        term.write(table(term))
    if unread:  # the others are listed; a script is told that some job was not
        sys.exit(1)


@click.command(cls=TakesJobIds)
@click.argument("job_id", type=JOB_ID, required=False)
@json_option()
def show(job_id: int | str | None, as_json: bool) -> None:
    """Everything about one job: command, GPUs, attempts, outcome, and its stderr tail.

    Without JOB_ID, of the job submitted last (as `gpuherd log`, and task-spooler's `tsp -i`).
    """
    from gpuherd.cli import render  # deferred: the tables' code, which `submit` does not need

    client = Client()
    detail = client.get(f"/jobs/{one_job(client, job_id)}")
    if as_json:
        click.echo(json.dumps(detail, indent=1))
    else:
        render.job_detail(detail)


@click.command(cls=TakesJobIds)
@click.argument("job_id", type=JOB_ID, required=False)
@click.option("-f", "--follow", is_flag=True, help="Keep printing new output until the job ends.")
@click.option("--stderr", is_flag=True, help="Show stderr instead of stdout.")
@click.option("--attempt", type=ATTEMPT, help="An earlier attempt (default: the last).")
@click.option(
    "-n",
    "--lines",
    type=WholeRange(0),
    help="Only the last N lines (of a progress bar redrawn with \\r, its drawings of the last"
    " 64 KiB; with -f: then follow; -f -n 0: only new output, as tail -f -n 0).",
)
def log(
    job_id: int | str | None, follow: bool, stderr: bool, attempt: int | None, lines: int | None
) -> None:
    """Print a job's output (stdout, or --stderr); without JOB_ID, the job submitted last.

    With -f, a job that has not started is waited for, and a retry's output follows.
    """
    client = Client()
    job_id = one_job(client, job_id)  # `gpuherd submit ...` then `gpuherd log -f`
    stream = "stderr" if stderr else "stdout"
    check_attempt(client, job_id, attempt)
    if not follow:
        out = sys.stdout.buffer  # the bytes as the job wrote them, a piece at a time
        wrote = False
        for piece in client.download(
            f"/jobs/{job_id}/log", stream=stream, attempt=attempt, lines=lines
        ):
            out.write(piece)
            wrote = wrote or bool(piece)
        out.flush()
        if not wrote and not stderr and lines != 0:  # (-n 0 asked for nothing)
            point_at_stderr(client, job_id, attempt, "")
        return
    now = client.get(f"/jobs/{job_id}")
    if attempt is None and (note := not_started_note(now)):
        click.echo(note, err=True)  # (held, say: the follow would look hung)
    elif not stderr and not ends_pointing(now, attempt) and not has_text_at(client, now, attempt):
        point_at_stderr(client, job_id, attempt, " -f")
    printer = print_follow(client, job_id, stream, attempt, lines)
    try:  # ended: did it ever run (it was cancelled, say)?
        job = client.get(f"/jobs/{job_id}")
    except (NotFound, DaemonError):  # removed once ended, or the daemon stopped (a drain)
        return  # nothing more to say (removed before it ran: said by the follow)
    if not job["attempt"] and job["state"] in FINISHED:
        raise HerdError(f"job {job_id} never ran ({job['state']}): it has no log")
    if attempt is None and job["state"] in FINISHED - {"succeeded"}:
        # A crash looked like a quiet end: the log stopped, and the traceback is in stderr.
        printer.note(ended_badly(client, job, stream))


COMMANDS = [submit, list_jobs, show, log]
