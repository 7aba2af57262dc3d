"""`gpuherd daemon restart [--kill [--grace D]]`: `daemon stop`, then `daemon start` as the
daemon was.

The GPUs and the executor a start was given are remembered in the queue (daemon.py), and
so is where the daemon listened on TCP as it stopped, but a plain start does not listen
unless told: a stop and a plain start quietly dropped the dashboard's TCP listener. A
restart asks the running daemon where it listens before stopping it, and starts the next
one there; one that finds no daemon running (after a reboot), or that joined another call's
stop whose start never came, starts one where the last daemon listened. It takes no other
option of `start`: it brings back the daemon that ran, and a change (other GPUs, another
executor) is a `stop`, then a `start` with it. Nor --drain: a plain restart already keeps the
running jobs (the next daemon re-attaches to them), and a drain would hold the restart until
the last of them ends.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

import click

from gpuherd import __version__, paths
from gpuherd.cli import daemon_asks
from gpuherd.cli.options import gpu_choice
from gpuherd.cli.restart_interrupts import GOES_ON, interrupted, second_interrupt_stops
from gpuherd.cli.stop_grace import GRACE_OPTION, refuse_grace_without_kill
from gpuherd.client import Client
from gpuherd.client_http import replacing
from gpuherd.core.units import plural
from gpuherd.daemon_presence import AlreadyUp, lock_holder
from gpuherd.errors import (
    Conflict,
    DaemonError,
    HerdError,
    NoAnswer,
    NotRunning,
    StoppedMeanwhile,
)
from gpuherd.restart_marker import other_restart, restart_under_way
from gpuherd.typed_name import prefixed, typed_name


class _Restart(click.Command):
    """`restart`, which answers an option of `start` it does not take (`--fake-gpus 4`) with
    what to type instead: click said only "No such option: --fake-gpus"."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        typed = list(args)  # (click's parser takes the words out of `args`)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            said = _drain(exc.option_name) or _start_option(exc.option_name, typed)
            if said is None:
                raise
            raise click.UsageError(said, ctx) from None


def _drain(option: str) -> str | None:
    """What `restart --drain` is told (`stop --drain` is a stop's): the running jobs go on
    through a restart, and a stop that waits for them is how to let them end first."""
    if option != "--drain":
        return None
    name = typed_name()
    return (
        "daemon restart takes no --drain: running jobs go on through a restart (the next "
        f"daemon re-attaches to them); to let them end first, {name} daemon stop --drain, "
        f"then {name} daemon start"
    )


def _start_option(option: str, args: list[str]) -> str | None:
    """`daemon restart takes no --fake-gpus: ...; to change that, gpuherd daemon stop, then
    gpuherd daemon start --fake-gpus 4`, for any option of `start` (which `restart` lacks: it
    would be no such option), with the value typed; None for another option."""
    from gpuherd.cli import daemon_cmds  # deferred: that module registers this command

    found = [
        param
        for param in daemon_cmds.start.params
        if isinstance(param, click.Option) and option in {*param.opts, *param.secondary_opts}
    ]
    if not found:  # (restart's own, --kill, is no such option)
        return None
    option_param, value = found[0], None
    for i, word in enumerate(args):
        if word.startswith(f"{option}="):
            value = word.partition("=")[2]
        elif word == option and not option_param.is_flag and i + 1 < len(args):
            value = args[i + 1]
        elif word != option:
            continue
        break
    if value is not None:
        typed = shlex.join([option, value])
    elif option_param.is_flag:
        typed = option
    else:
        typed = f"{option} {option_param.metavar or option_param.name.upper()}"
    name = typed_name()
    return (
        f"daemon restart takes no {option}: it starts the daemon as it was; to change that, "
        f"{name} daemon stop, then {name} daemon start {typed}"
    )


@click.command(cls=_Restart)
@click.option(
    "--kill",
    is_flag=True,
    help="Kill running jobs first, as `daemon stop --kill` (else they go on, re-attached).",
)
@GRACE_OPTION
@click.pass_context
def restart(ctx: click.Context, kill: bool, grace: float | None) -> None:
    """Stop the daemon and start it again with the same GPUs, executor and --listen address.

    Running jobs go on and the new daemon re-attaches to them (--kill stops them first). With
    no daemon running, it starts one, as the last one started.
    """

    refuse_grace_without_kill(grace, kill)
    # Checked as `start` checks it, before anything stops: a bad GPUHERD_FAKE_GPUS refused
    # only once the daemon had stopped would leave none running.
    variable = gpu_choice(None, None).given  # (set, it replaces the last start's GPUs)
    client = Client()
    with restart_under_way(client.home):  # (another restart finding none running joins this)
        _stop_and_start(ctx, client, kill, grace, variable)


def _stop_and_start(
    ctx: click.Context, client: Client, kill: bool, grace: float | None, variable: bool
) -> None:
    # The daemon replaced may run another gpuherd (upgraded since it started): what the
    # client says of that, "restart it to run this version", is what this call does.
    with replacing():
        pid = None
        try:
            status = daemon_asks.own_status(client)
            _refuse_a_stopping_daemon(status)
            pid = int(status["pid"])
            listen = client.get("/daemon/listen")["address"]  # None when it does not listen
        except StoppedMeanwhile:  # its socket gone, its lock let go as we waited: stopped
            _after_another_stop(ctx, client, pid, kill)  # (by another restart, most likely)
            return
        except NotRunning:
            _none_running(ctx, client, kill)
            return
        except DaemonError as exc:  # lost on its way out: another call (a restart) stops it
            if isinstance(exc, NoAnswer):
                raise
            _after_another_stop(ctx, client, pid or lock_holder(client.home), kill)
            return
        if not variable:
            _refuse_unusable_saved_gpus(client.home, pid)
    # From the stop on, a Ctrl-C left no daemon running, and said only "interrupted": the
    # restart is carried through, and a second Ctrl-C says what it leaves.
    try:
        with second_interrupt_stops(GOES_ON):
            _restart(ctx, client, pid, kill, grace, listen, status)
    except KeyboardInterrupt:
        sys.exit(interrupted(client.home, pid, kill))


def _restart(
    ctx: click.Context,
    client: Client,
    pid: int,
    kill: bool,
    grace: float | None,
    listen: str | None,
    status: dict[str, Any],
) -> None:
    """Stop the daemon (`pid`, whose status is `status`), then start the next at `listen`."""
    from gpuherd.cli import daemon_cmds  # deferred: that module registers this command

    with replacing():
        try:
            left = daemon_cmds.stop_daemon(client, pid, "kill" if kill else "leave", grace)
        except (Conflict, daemon_cmds.StoppedByAnother):  # another call's plain stop won
            if not kill:
                raise
            _wait_for_the_next(client, pid)
            back = (
                _kill_not_done(client, _STOPPED_WITHOUT_KILL) if lock_holder(client.home) else None
            )
            if back is None:  # none came back (a plain stop's): start one, then --kill, it says
                raise
            click.echo(f"daemon restarted by another call at the same time (pid {back['pid']})")
            return
    _refuse_the_replaced(client.home, left)
    if left is not None:  # jobs a --kill could not reach: the next daemon carries out the kill
        click.echo(prefixed("warning", left), err=True)
    try:
        _start(ctx, listen, "restarted")
    except HerdError as exc:
        start = f"`{typed_name()} daemon start`"
        jobs = "" if kill else f" (running jobs go on: the next {start} re-attaches to them)"
        raise HerdError(f"the daemon stopped, but the new one did not start{jobs}: {exc}") from None
    if status.get("version") != __version__:
        ran = f"gpuherd {status['version']}" if status.get("version") else "an older gpuherd"
        click.echo(f"upgraded: the daemon ran {ran}; the new one runs {__version__}")


def _refuse_unusable_saved_gpus(home: Path, pid: int) -> None:
    """Check the GPUs the next daemon starts with, the last start's (herd.db's `probe`), as
    `daemon start` checks its options, before the daemon (`pid`) stops: a --fake-gpus state
    file made invalid while it ran (it serves on, on its last good reading) stopped it, and
    the new one did not start, leaving none. A saved --gpus is checked as written, not
    probed: the running daemon probes those GPUs now, and a probe here would load NVML in
    the client (seconds without persistence mode, a hang on a wedged driver)."""
    from gpuherd.gpus.choice import choose_gpus
    from gpuherd.saved_settings import EXECUTOR, PROBE
    from gpuherd.start_hint import remembered  # (herd.db read only: the daemon writes it)

    saved = remembered(home)  # ({} when unreadable: the start then says what is wrong)
    executor, probe = saved.get(EXECUTOR), saved.get(PROBE)
    if executor is not None and executor.kind == "ray":  # the cluster's GPUs: none saved
        return
    gpus, fake_gpus = (None, None) if probe is None else (probe["gpus"], probe["fake_gpus"])
    given = [(o, v) for o, v in (("--gpus", gpus), ("--fake-gpus", fake_gpus)) if v is not None]
    if not given:  # (the GPUs NVML finds, as the daemon does now)
        return
    option, value = given[0]
    try:
        choose_gpus(gpus, fake_gpus)
    except ValueError as exc:
        name = typed_name()
        fix = "fix the file" if option == "--fake-gpus" else "fix that"
        raise HerdError(
            f"the GPUs the daemon restarts with, the last start's {shlex.join([option, value])}"
            f", cannot be used: {str(exc).removeprefix(f'{option}: ')}; the daemon (pid {pid}) "
            f"was left running: {fix}, then `{name} daemon restart` (or, for other GPUs, "
            f"`{name} daemon stop`, then `{name} daemon start` with them)"
        ) from None


def _none_running(ctx: click.Context, client: Client, kill: bool) -> None:
    """Start one, as the last one started; or, between another restart's stop and its start
    (restart_marker.py), join that restart."""
    if other_restart(client.home) is not None:
        _after_another_stop(ctx, client, None, kill)
        return
    click.echo(f"no daemon was running for {client.home}: starting one")
    _start_as_before(ctx, client.home)
    if kill:
        _kill_not_done(client, "no daemon answered as it was asked (another call restarting it?)")


def _refuse_the_replaced(home: Path, left: str | None) -> None:
    """A daemon that ran on a herd.db replaced under it (a backup copied over it) is not
    started again: the next one would apply its herd.db-wal to the new file, undoing the
    restore (it refuses to: store_checkpoint.py). Its stop's last word says what to do."""
    from gpuherd.store_checkpoint import replaced_note, replaced_while_running

    database = paths.database(home)
    if not replaced_note(database).exists():
        return
    said = left or replaced_while_running(database, running=False)
    raise HerdError(f"the daemon stopped, but was not started again: {said}")


def _start(ctx: click.Context, listen: str | None, done: str, as_before: bool = False) -> None:
    """`daemon start` (at `listen`; `as_before`: where the last daemon listened as it
    stopped, for a daemon not asked), or, if another call (a restart at the same moment)
    started one first, a line that says so: that daemon is the one asked for."""
    from gpuherd.cli import daemon_cmds  # deferred: that module registers this command

    try:
        ctx.invoke(daemon_cmds.start, listen=listen, listen_as_before=as_before)
    except AlreadyUp as exc:
        click.echo(f"daemon {done} by another call at the same time (pid {exc.pid})")


def _start_as_before(ctx: click.Context, home: Path) -> None:
    """The start of a restart that found no daemon. In a home no daemon ran in, there is no
    start to repeat: a start that needs options (`pass --gpus 0,1 ..., or --fake-gpus 4`, on
    a machine without a driver) is told they go to `daemon start`, as `restart` takes none
    (`daemon restart --fake-gpus 4` was refused, and the user was left with nothing to run)."""
    from gpuherd.start_hint import FIRST_START, start_hint  # (the error path's: sqlite3)

    first = start_hint(home) == FIRST_START  # (before the start remembers its options)
    try:
        _start(ctx, None, "started", as_before=True)
    except HerdError as exc:
        if not first or not any(option in str(exc) for option in ("--gpus", "--fake-gpus")):
            raise
        start = f"`{typed_name()} daemon start`"
        raise HerdError(
            f"{exc} (no daemon has run in {home} yet, so `daemon restart`, which takes no "
            f"options, has no start to repeat: give them to {start})"
        ) from None


def _refuse_a_stopping_daemon(status: dict[str, Any]) -> None:
    """A daemon that drains (`stop --drain`) was asked to stop once its jobs end, which may
    be hours away: a restart would call that off without a word. One line says so. One
    stopping otherwise (another restart's or stop's, --kill too) is joined: its stop waits
    for that one (the kill's grace too), then starts the next daemon, or says that the other
    call did (of a `restart --kill` and a restart at once, the second failed)."""
    if status.get("stopping") != "drain":
        return
    pid, name = status["pid"], typed_name()
    running = int(status.get("running_jobs") or 0)
    ends = "ends" if running == 1 else "end"
    raise HerdError(
        f"the daemon (pid {pid}) is draining: it stops once its "
        f"{plural(running, 'running job')} {ends}, then `{name} daemon start` starts the "
        f"next; or `{name} daemon stop` stops it now (its jobs go on, and the next daemon "
        "re-attaches to them)"
    )


RESTARTED_WITHIN = 5.0
"""Seconds a restart that found the daemon stopping for another call waits, once it has
exited, for that call (a restart too, most likely) to start the next one."""


def _after_another_stop(ctx: click.Context, client: Client, pid: int | None, kill: bool) -> None:
    """Join a stop that another call (a restart at the same moment, or a stop) was making of
    the daemon (`pid`), which no longer answers where it listens: wait for its end, then for
    the next daemon that call starts (said so), or start one if none comes; a --kill not
    done is said. Of two restarts at once, the one that came second failed: "the daemon (pid
    N) is stopping", or said "no daemon was running" where one was (StoppedMeanwhile)."""
    from gpuherd.cli import daemon_cmds  # deferred: that module registers this command

    click.echo("stopping (another call was stopping it already)")
    if pid is not None and not daemon_cmds.wait_for_exit(pid, daemon_cmds.STOPPED_WITHIN):
        name = typed_name()
        raise HerdError(
            f"the daemon (pid {pid}) is stopping, as another call asked, and has not stopped "
            f"yet: `{name} daemon status` says whether it has, and what started since"
        )
    click.echo("daemon stopped")
    _next_one(client)
    _start(ctx, None, "restarted", as_before=True)
    if kill:
        _kill_not_done(client, _STOPPED_WITHOUT_KILL)


def _next_one(client: Client) -> None:
    """Wait up to RESTARTED_WITHIN for the next daemon that the other call starts (a
    restart) to hold the home."""
    deadline = time.monotonic() + RESTARTED_WITHIN
    while lock_holder(client.home) is None and time.monotonic() < deadline:
        time.sleep(0.05)


_STOPPED_WITHOUT_KILL = "another call was stopping the daemon already, without --kill"


def _wait_for_the_next(client: Client, pid: int) -> None:
    """Wait for the daemon (`pid`) that another call stops to exit, then for the next one
    that call starts (a restart), if one comes within RESTARTED_WITHIN."""
    from gpuherd.cli import daemon_cmds  # deferred: that module registers this command

    if daemon_cmds.wait_for_exit(pid, daemon_cmds.STOPPED_WITHIN):
        _next_one(client)


def _kill_not_done(client: Client, why: str) -> dict[str, Any] | None:
    """After a `restart --kill` whose kill no daemon carried out (another call stopped the
    daemon first, or none ran): the status of the daemon running now (None: none), or a
    HerdError when it re-attached running jobs, saying how to kill them. (The advice of a
    stop's --kill not taken, `daemon start`, was pointless once the other call restarted it.)"""
    status = daemon_asks.status_or_none(client, time.monotonic() + RESTARTED_WITHIN)
    running = int(status.get("running_jobs") or 0) if status is not None else 0
    if status is None or not running:  # nothing left to kill
        return status
    name = typed_name()
    raise HerdError(
        f"--kill not done: {why}; the daemon running now (pid {status['pid']}) re-attached "
        f"{plural(running, 'running job')}: `{name} daemon restart --kill` kills them now, or "
        f"`{name} kill $({name} ls -q --state running,paused)`"
    )
