"""`wait`: wait until jobs finish, and say how those that did not succeed ended."""

from __future__ import annotations

import functools
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from gpuherd.cli.job_refs import given_ids, listed_ids
from gpuherd.cli.log_output import say_daemon_gone
from gpuherd.cli.main import prefixed
from gpuherd.cli.options import filter_options, ids_argument
from gpuherd.cli.param_types import DURATION, TakesJobIds
from gpuherd.cli.stuck_notes import stuck_notes
from gpuherd.cli.submit_wait import held_note
from gpuherd.cli.sweep_path import known_sweep, sweep_path
from gpuherd.cli.wait_verdict import jobs_verdict, points_verdict
from gpuherd.client import Client
from gpuherd.client_wait import Waited
from gpuherd.core.idspec import format_ids
from gpuherd.core.states import FINISHED_STATES, JobState
from gpuherd.core.sweep_verdict import WAITED_FOR, asked
from gpuherd.errors import DaemonError, NotFound, NotRunning, Suspended
from gpuherd.sweep_wait import waited_despite_removals
from gpuherd.typed_name import typed_name
from gpuherd.wait_removed import WAIT_OVER

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")
_Found = tuple[list[int], list[int], list[dict[str, Any]]]
"""What `wait` reads before waiting (_jobs)."""


def waiting_options(command: _F) -> _F:
    """--timeout and -q, of `wait` and of `sweep wait NAME`, which is `wait --sweep NAME`."""
    command = click.option(
        "-q",
        "--quiet",
        is_flag=True,
        help="Print only how the jobs that did not succeed ended (stderr); the exit status tells.",
    )(command)
    return click.option("--timeout", type=DURATION, help="Give up after this long (exit 2).")(
        command
    )


@click.command(cls=TakesJobIds)
@ids_argument(required=False)
@filter_options()
@waiting_options
def wait(
    ids: tuple[str, ...],
    project: str | None,
    sweep: str | None,
    name_glob: str | None,
    timeout: float | None,
    quiet: bool,
) -> None:
    """Wait until jobs finish (default: every job queued, running or paused now; not the
    held ones, which would wait for a release).

    --project and --name wait for those of them that match (pueue's `wait --group`): never
    for every job, as `gpuherd wait $(gpuherd ls -q --project P)` does once none of P is
    left. --sweep alone judges every point of the sweep by its latest job, ended already or
    not (a held point is not waited for, and has not succeeded).

    A job removed meanwhile (`gpuherd rm`, `clean`) ends its wait, and has not succeeded:
    `job 7: removed (gpuherd rm or clean)` (--sweep alone judges its point by its folder).

    Exit 0 when all succeeded, 1 when any did not (or --sweep names no sweep), 2 on
    --timeout, 3 when no daemon runs, or it went away and none came back within a minute.
    """
    match = {"project": project, "sweep": sweep, "name": name_glob}
    narrowed = _filter_words(match)
    if ids and narrowed:
        raise click.UsageError(f"give job ids or {narrowed}, not both")
    # A sweep alone is a closed set, its points: each is judged by its latest job, however
    # long ago it ended. --project and --name (--sweep among them too) name open-ended sets.
    whole = sweep if project is None and name_glob is None else None
    client = Client()
    deadline = None if timeout is None else time.monotonic() + timeout
    try:  # no daemon, or gone and none came back: no verdict on the jobs (exit 3)
        read = functools.partial(_jobs, client, ids, match, quiet, whole)
        wanted, held, points = _asked_again(client, deadline, read)
        if held and not ids:
            click.echo(prefixed(_not_waited_for(held)), err=True)
        elif ids and (named := sorted(set(held) & set(wanted))):
            click.echo("\n".join(_held_notes(client, named)), err=True)
        if not quiet and (stuck := stuck_notes(client, [i for i in wanted if i not in held])):
            click.echo("\n".join(stuck), err=True)
        if not wanted and sweep is not None and whole is None:  # misspelt: `&& analyse` ran
            known_sweep(client, sweep)  # (a whole sweep's points were read: it is known)
        if not wanted and not points:
            if not quiet:
                of = f" of {_filter_words(match, typed=False)}" if narrowed else ""
                last = "" if narrowed or ids else _last_ended(client)
                click.echo(f"nothing to wait for: no job{of} is queued or running{last}")
            return
        say_gone = None if quiet else say_daemon_gone
        if whole is None:
            # (Listed by a daemon: one not running at the first ask went meanwhile.)
            waited = client.wait_for(wanted, deadline, say_gone, answered=client.answered)
        else:
            waited, points = _sweep_waited(client, whole, wanted, deadline, say_gone, read)
    except DaemonError as exc:
        click.echo(prefixed("error", str(exc)), err=True)
        sys.exit(3)
    if not waited.done:
        if not quiet:
            states = waited.states
            waiting = format_ids(i for i, s in sorted(states.items()) if s not in WAIT_OVER)
            click.echo(f"gave up waiting; still unfinished: {waiting}", err=True)
        sys.exit(2)
    sys.exit(
        jobs_verdict(waited, quiet) if whole is None else points_verdict(points, waited, quiet)
    )


def _jobs(
    client: Client,
    ids: tuple[str, ...],
    match: dict[str, str | None],
    quiet: bool,
    sweep: str | None,
) -> _Found:
    """The jobs to wait for, the held ones among those `match` names (unless `quiet`), and
    the points of `sweep` (a whole sweep's wait: its `sweep status` rows; else none).
    Held jobs wait for a release (or their --begin time): waited for only when named, which
    `submit --begin +1h ...; gpuherd wait` did not tell. A note, so on stderr, whether or not
    something else is waited for; and when named, that the wait is theirs, as `submit --hold
    --wait` says it: else `gpuherd wait 7`, as the note without ids advises, waited in
    silence, as though hung."""
    points = _points(client, sweep) if sweep is not None else []
    wanted = given_ids(client, ids) if ids else listed_ids(client, WAITED_FOR, match)
    # The points ended already are asked about too: the daemon answers at once how.
    wanted = list(dict.fromkeys([*wanted, *asked(points)]))
    return wanted, [] if quiet else listed_ids(client, ("held",), match), points


def _sweep_waited(
    client: Client,
    sweep: str,
    wanted: list[int],
    deadline: float | None,
    say_gone: Callable[[], None] | None,
    read: Callable[[], _Found],
) -> tuple[Waited, list[dict[str, Any]]]:
    """The wait for a whole sweep's jobs (`read()` read them first: `wanted`), and its points
    once they have ended. A job removed meanwhile (`gpuherd rm`) failed the wait, `no job 7`:
    the jobs are read again, and its point is judged, as one with no job left, by its folder.
    The points are read again once the wait is over for that too: a queued job removed while
    waited for ended `cancelled` (then went), and was said so."""
    waited = waited_despite_removals(
        client,
        wanted,
        lambda: _asked_again(client, deadline, read)[0],
        deadline,
        say_gone,
        client.answered,
    )
    if not waited.done:
        return waited, []
    return waited, _asked_again(client, deadline, functools.partial(_points, client, sweep))


def _points(client: Client, sweep: str) -> list[dict[str, Any]]:
    """The sweep's points, its `sweep status` rows."""
    return list(client.get(sweep_path(sweep))["rows"])


def _asked_again(client: Client, deadline: float | None, read: Callable[[], _T]) -> _T:
    """`read()`, asked again of the next daemon if the one asked went away meanwhile, as the
    wait's own asks are (Client.wait_for): a wait suspended (Ctrl-Z, a loaded machine) while
    it read its jobs, over a daemon's restart, failed with "lost the connection"."""
    try:
        return read()
    except DaemonError as exc:
        # None running: none ran, unless one answered a first ask (a restart's, meanwhile).
        none_ran = isinstance(exc, NotRunning) and not client.answered
        if none_ran or isinstance(exc, Suspended) or not client.comes_back(deadline, None):
            raise
    return read()


def _last_ended(client: Client) -> str:
    """Of a bare `wait` with nothing left to wait for, the job submitted last, ended badly:
    `submit -- false; wait` said only "nothing to wait for", exit 0, or, a moment sooner,
    `0 of 1 job succeeded`, exit 1 (the ended job's verdict is `wait ID`'s)."""
    last = client.get("/daemon").get("last_job")
    try:
        job = client.get(f"/jobs/{last}") if last else None
    except NotFound:  # (removed since: `rm`, `clean`)
        return ""
    if job is None or job.get("state") not in _ENDED_BADLY:  # (a held one is said apart)
        return ""
    return (
        f" (job {last}, submitted last, ended: {job['state']}; {typed_name()} wait {last} "
        "exits with its verdict)"
    )


_ENDED_BADLY = {state.value for state in FINISHED_STATES} - {JobState.SUCCEEDED.value}


def _filter_words(match: dict[str, str | None], typed: bool = True) -> str:
    """The filters given, as typed (`--project g --name 'a*'`), else as words (`project g,
    name 'a*'`: `sweep wait NAME` typed no --sweep); '' when none is."""
    given = [(k, v) for k, v in match.items() if v is not None]
    if typed:
        return " ".join(f"--{k} {shlex.quote(v)}" for k, v in given)
    return ", ".join(
        f"{k} {v}" if v and not any(c.isspace() for c in v) else f"{k} '{v}'" for k, v in given
    )


def _held_notes(client: Client, named: list[int]) -> list[str]:
    """What the wait for these held jobs waits for: a release, or their --begin time (said as
    `submit --begin ... --wait` says it: a job that starts by itself was said to wait for a
    release, as if it never would without one), or, for a job held for a run that a restored
    herd.db did not know (docs/reliability.md, section 24), that run's end, which decides the
    job. A release of such a job runs it again beside its run: the note of a plain hold
    advised one."""
    listed = client.get("/jobs", state=["held"])["jobs"]
    # `held: attempt 1 runs unwatched (pid 4242), ...` (service_reasons._held_reason)
    runs = {
        j["id"]: j["reason"] for j in listed if str(j.get("reason")).startswith("held: attempt")
    }
    begins = {j["id"]: j.get("begin") for j in listed}
    by_begin: dict[float | None, list[int]] = {}  # (jobs of one `submit --file`: one note)
    for job_id in (i for i in named if i not in runs):
        by_begin.setdefault(begins.get(job_id), []).append(job_id)
    notes = [held_note(ids, begin) for begin, ids in by_begin.items()]
    for job_id in (i for i in named if i in runs):
        notes.append(
            prefixed(
                f"job {job_id} is {runs[job_id]}: waiting for that run to end, which decides "
                f"the job ({typed_name()} release {job_id} would run it again beside it)"
            )
        )
    return notes


def _not_waited_for(held: list[int]) -> str:
    """Says that `wait` without ids leaves out these held jobs, and how to wait for them."""
    one = len(held) == 1
    them = f"job {held[0]} is" if one else f"jobs {format_ids(held)} are"
    return (
        f"{them} held (until released, or {'its' if one else 'their'} --begin time), not "
        f"waited for: {typed_name()} wait {format_ids(held)} waits for {'it' if one else 'them'}"
    )


COMMANDS = [wait]
