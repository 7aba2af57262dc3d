"""`gpuherd daemon start|stop|status` (and `backup`, `log` and `restart`, from their modules)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from gpuherd import paths
from gpuherd.cli.daemon_asks import already_running, own_status, status_or_none, status_within
from gpuherd.cli.daemon_backup import backup
from gpuherd.cli.daemon_log import log_cmd
from gpuherd.cli.daemon_restart import restart
from gpuherd.cli.daemon_status_text import start_notes, status_lines
from gpuherd.cli.options import fake_gpus_option, gpu_choice, json_option
from gpuherd.cli.param_types import LISTEN, Choosing, WholeRange
from gpuherd.cli.stop_grace import GRACE_OPTION, refuse_grace_without_kill
from gpuherd.cli.ui_cmd import show_dashboard
from gpuherd.client import Client
from gpuherd.client_http import replacing
from gpuherd.core.gpu_slots import MAX_SLOTS
from gpuherd.daemon_failure import silent_exit
from gpuherd.daemon_presence import (
    ALREADY_RUNNING,
    lock_holder,
)
from gpuherd.env_token import env_token
from gpuherd.errors import (
    DaemonError,
    HerdError,
    LostConnection,
    NoAnswer,
    NotRunning,
    StoppedMeanwhile,
)
from gpuherd.typed_name import prefixed, typed_name

if TYPE_CHECKING:
    import subprocess

START_TIMEOUT = 30.0


@click.group()
def daemon() -> None:
    """Start, stop or inspect the per-user daemon that holds the queue."""


def _refuse_clashing_executor(executor: str | None, address: str | None, local: bool) -> None:
    """The options that clash over the executor (`--executor local --address X`, `--address X
    --gpus 0`, an empty --address), refused here as the mistakes of the command line they are
    (exit 2; the daemon's refusal was exit 1), in the daemon's words. Given as saved is an
    executor with an address: whether a start without one has an address to go back to, only
    the daemon knows (herd.db), and says."""
    if executor is None and address is None:  # (nothing to clash: no import of the store)
        return
    from gpuherd.daemon_executor import choose_executor  # (deferred: imports the store)
    from gpuherd.saved_settings import SavedExecutor

    try:
        choose_executor(SavedExecutor("ray", "saved"), executor, address, local)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@daemon.command()
@click.option("--gpus", help="GPU indices to use: 0,1,2,3 or 0-3; a repeat is another slot.")
@fake_gpus_option()
@click.option("--slots", type=WholeRange(1, MAX_SLOTS), help="Jobs that may share each GPU.")
@click.option("--foreground", is_flag=True, help="Run in this terminal (logs to stderr).")
@click.option(
    "--listen",
    type=LISTEN,
    metavar="HOST:PORT",
    help="Also serve the dashboard and API over TCP (token required), e.g. 127.0.0.1:8888.",
)
@click.option(
    "--executor",
    type=Choosing(["local", "ray"]),
    help="Where jobs run: this machine (default) or a Ray cluster; remembered across starts.",
)
@click.option(
    "--address",
    metavar="ADDR|auto",
    shell_complete=lambda ctx, param, typed: [w for w in ("auto",) if w.startswith(typed)],
    help="The Ray cluster to run jobs on (implies --executor ray), e.g. 10.0.0.5:6379.",
)
@click.option(
    "--abandon-running",
    is_flag=True,
    help="With another executor (or Ray cluster) than the last start's: count the jobs still "
    "running on that one lost (refused otherwise; their processes may go on there).",
)
def start(
    gpus: str | None,
    fake_gpus: str | None,
    slots: int | None,
    foreground: bool,
    listen: str | None,
    executor: str | None,
    address: str | None,
    abandon_running: bool,
    listen_as_before: bool = False,
) -> None:
    """Start the daemon; returns once it answers. Without --gpus it finds the GPUs (NVML)."""
    # (`listen_as_before`, no option: `daemon restart` with none running has it listen where
    # the last daemon did.)
    # --gpus, --fake-gpus or GPUHERD_FAKE_GPUS is checked here, before any daemon starts; the
    # daemon, which inherits this environment and folder, chooses again: it must know where
    # its GPUs came from, and remembers a state file by its absolute path (gpus/choice.py).
    gpu_choice(gpus, fake_gpus, ray=executor == "ray" or address is not None)
    _refuse_clashing_executor(executor, address, (gpus, fake_gpus, slots) != (None,) * 3)
    env_token()  # a GPUHERD_TOKEN that is no token, refused before any daemon starts
    client = Client()
    try:
        running: dict[str, Any] | None = status_within(client)
    except DaemonError:  # none runs (or none can be reached there): the new one will say
        running = None
    if running is not None:
        raise already_running(client, running)
    # -P: the folder `daemon start` is run in is not on the daemon's import path (a project's
    # secrets.py or uuid.py, imported instead of the standard module, made it exit at start).
    args = [sys.executable, "-P", "-m", "gpuherd.daemon", "--home", str(client.home)]
    options = [("--gpus", gpus), ("--fake-gpus", fake_gpus), ("--slots", slots)]
    options += [("--executor", executor), ("--address", address)]
    for flag, value in [*options, ("--listen", listen)]:
        if value is not None:
            args += [flag, str(value)]
    args += ["--abandon-running"] if abandon_running else []
    args += ["--listen-as-before"] if listen_as_before else []
    # Before daemon.log is opened in it: another user's home may hold it as a link to a
    # file of yours, appended to (the daemon refuses that home too, but after this open).
    from gpuherd.daemon_home import refuse_another_users_home  # (deferred: imports the store)

    refuse_another_users_home(client.home)
    paths.make_home(client.home)
    log_path = paths.daemon_log(client.home)
    if foreground:  # stderr (a service manager's journal), and daemon.log for `daemon log`
        os.execv(sys.executable, [*args, "--log-file", str(log_path)])
    try:
        log = log_path.open("ab")
    except OSError as exc:  # a home on a disk that is read-only, full, or not the user's
        raise HerdError(
            f"cannot write the daemon's log {log_path} ({exc.strerror or exc}): the daemon "
            f"needs its home {client.home} writable, with room: remount its disk read-write, "
            "free some space, or point GPUHERD_HOME elsewhere"
        ) from None
    import subprocess  # deferred: `daemon status` and `stop` start nothing (~2 ms)

    with log, open(os.devnull, "rb") as devnull:
        logged = log.tell()
        proc = subprocess.Popen(args, stdin=devnull, stdout=log, stderr=log, start_new_session=True)
    # Polled on this start's own clock (START_TIMEOUT): a client that waits for the socket
    # of a daemon holding the lock (ours, still starting) made one poll take 7 s more.
    try:
        status = _wait_until_up(Client(client.home, waits_for_socket=False), proc, logged)
    except KeyboardInterrupt:  # (the daemon, in a session of its own, had no Ctrl-C)
        sys.exit(_interrupted_start(proc))
    click.echo(
        f"daemon started (pid {status['pid']}, {status['probe']}); socket {status['socket']}"
    )
    for note in start_notes(status):  # drains kept, GPUs removed kept out or used again
        click.echo(note)
    if listen or listen_as_before:
        listening = client.get("/daemon/listen")
        if listening["listening"]:
            show_dashboard(listening)


def _wait_until_up(client: Client, proc: subprocess.Popen[bytes], logged: int) -> dict[str, Any]:
    """The status of the daemon started, once it answers. Several starts at once (in one
    home) race for its lock: the others' daemons exit, and they say which one runs."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        code = proc.poll()
        if code is not None:
            reason = client.last_word(logged)
            if reason and reason.startswith(ALREADY_RUNNING):  # another start won the lock
                winner = status_or_none(client, deadline)
                if winner is not None:
                    raise already_running(client, winner)
            # No last word (it died first: an import error, say): its traceback is in the log.
            raise DaemonError(reason or silent_exit(paths.daemon_log(client.home), logged, code))
        if time.monotonic() >= deadline:
            raise DaemonError(_still_starting(client, proc.pid))
        # A daemon that listens but does not serve yet holds a poll until it is answered:
        # the client's own timeout (60 s) took `daemon start` that far past its own.
        client.answer_by(deadline)
        status = status_or_none(client)
        if status is not None and status["pid"] == proc.pid:
            return status
        time.sleep(0.02)  # not up yet, or another start's daemon answers: ours will exit


def _interrupted_start(proc: subprocess.Popen[bytes]) -> int:
    """Say that a start interrupted (Ctrl-C) left its daemon starting, and what to do: a
    bare "interrupted" reads as a start called off. (One that has exited meanwhile, having
    lost the home to another start's, or failed: said so.) The exit status of an interruption."""
    name = typed_name()
    if proc.poll() is not None:
        said = f"the daemon (pid {proc.pid}) has exited: `{name} daemon log` says why"
    else:
        said = (
            f"the daemon (pid {proc.pid}) goes on starting: `{name} daemon status` says once "
            f"it is up; `{name} daemon stop` stops it"
        )
    click.echo(prefixed("interrupted", said), err=True)
    return 130


def _still_starting(client: Client, pid: int) -> str:
    """The one line for a daemon alive but silent at START_TIMEOUT. It is left running: it
    may be slow (re-attaching many jobs), and killing it there would lose that work."""
    name = typed_name()
    return (
        f"the daemon (pid {pid}) did not answer within {START_TIMEOUT:g}s: still starting, or "
        f"stuck; its log is {paths.daemon_log(client.home)}. `{name} daemon status` looks "
        f"again; `{name} daemon stop` stops it once it answers (`kill {pid}` if it never does)"
    )


@daemon.command()
@click.option("--drain", is_flag=True, help="Wait for running jobs to finish.")
@click.option("--kill", is_flag=True, help="Kill running jobs first.")
@GRACE_OPTION
def stop(drain: bool, kill: bool, grace: float | None) -> None:
    """Stop the daemon. Running jobs keep running and the next daemon re-attaches to them."""
    if drain and kill:
        raise click.UsageError("give --drain (let running jobs finish) or --kill, not both")
    refuse_grace_without_kill(grace, kill)
    client = Client()
    mode = "drain" if drain else "kill" if kill else "leave"
    with replacing():  # (of a daemon an upgrade left running: "restart it" is not the news)
        try:
            pid = int(own_status(client)["pid"])
        except NotRunning as exc:
            if drain or kill:  # asked of running jobs, which only a daemon can do
                raise
            if isinstance(exc, StoppedMeanwhile):  # (its lock let go as we waited for it)
                click.echo("daemon stopped by another call at the same time")
                return
            # What was asked holds (as `kill` of a job that ended): a teardown script's
            # `gpuherd daemon stop` under `set -e` must not fail for a daemon already gone.
            click.echo(f"no gpuherd daemon is running for {client.home}: nothing to stop")
            return
        except DaemonError as exc:
            # Its status lost on the daemon's way out: another stop (or a restart) got there
            # first, as when the stop request itself is lost (it said ConnectionResetError).
            # Any other failure is said as it is, at once.
            if not isinstance(exc, LostConnection):
                raise
            left = stop_daemon(client, lock_holder(client.home), mode, grace, lost=exc)
        else:
            left = stop_daemon(client, pid, mode, grace)
    if left is not None:  # jobs a --kill could not reach
        raise HerdError(left)


def stop_daemon(
    client: Client,
    pid: int | None,
    mode: str,
    grace: float | None = None,
    lost: DaemonError | None = None,
) -> str | None:
    """Ask the daemon (`pid`) to stop (leave, drain or kill its running jobs: with `grace`,
    each SIGKILLed that long after its SIGTERM), say its answer, and return once it has
    stopped: with its last word, if it has one (jobs a --kill could not reach). One that ends
    before it has stopped (killed, crashed) is a HerdError. `lost`: the connection to it was
    lost before it was asked (pid None: it no longer holds the home), and it is not asked."""
    log = paths.daemon_log(client.home)
    logged = log.stat().st_size if log.exists() else 0  # the daemon's last word comes after
    chosen = {} if grace is None else {"grace": grace}
    try:
        if lost is not None:
            raise lost
        click.echo(client.post("/daemon/stop", {"mode": mode, **chosen})["message"])
    except DaemonError as exc:
        # Another stop (or restart) got there first: its daemon closed this connection as it
        # stopped. What a plain stop asks holds; this one's --kill or --drain was not taken.
        if isinstance(exc, NoAnswer) or not wait_for_exit(pid, STOPPED_WITHIN):
            raise
        if mode != "leave":
            raise StoppedByAnother(_stopped_by_another(pid, mode)) from None
        click.echo("stopping (another stop was stopping it already)")
    wait_for_exit(pid)
    # A daemon that stops (not one that dies) removes its socket, and logs that it stopped:
    # one whose home was renamed meanwhile removed none, its path the home's old one.
    if client.socket_path.exists() and not _logged_stopped(client, logged, pid):
        raise HerdError(
            f"{_the_daemon(pid)} ended before it had stopped (killed or crashed): what it "
            f"had begun is carried out by the next `{typed_name()} daemon start`; see "
            f"`{typed_name()} daemon log`"
        )
    click.echo("daemon stopped")
    return client.last_word(logged)


def _logged_stopped(client: Client, since: int, pid: int | None) -> bool:
    """Whether daemon `pid` logged, after byte `since` of its log, that it stopped; its
    socket, which it could not remove, then goes."""
    try:
        with paths.daemon_log(client.home).open("rb") as log:
            log.seek(since)
            said = f"daemon {pid} stopped".encode() in log.read()
    except OSError:
        return False
    if said:
        client.socket_path.unlink(missing_ok=True)
    return said


STOPPED_WITHIN = 10.0
"""Seconds a stop whose connection the daemon closed waits for it to exit (its own shutdown
takes ~2 s); one still running then closed it for another reason."""


class StoppedByAnother(HerdError):
    """A stop's --kill or --drain not carried out: another call was stopping the daemon."""


def _stopped_by_another(pid: int | None, mode: str) -> str:
    name = typed_name()
    return (
        f"{_the_daemon(pid)} was stopping already, as another `{name} daemon stop` asked, "
        f"and stopped without this one's --{mode}: running jobs may go on (`{name} ls`); "
        f"`{name} daemon start`, then `{name} daemon stop --{mode}`"
    )


def _the_daemon(pid: int | None) -> str:
    return "the daemon" if pid is None else f"the daemon (pid {pid})"


def wait_for_exit(pid: int | None, within: float | None = None) -> bool:
    """Return once the daemon has exited: gone, or a zombie its parent has not reaped yet
    (psutil's wait() would wait for the reaping, which an init-less container never does).
    False if it still runs after `within` seconds. None: one gone before its pid was read."""
    import psutil

    if pid is None:
        return True
    deadline = None if within is None else time.monotonic() + within
    try:
        process = psutil.Process(pid)
        while process.status() != psutil.STATUS_ZOMBIE:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
    except psutil.NoSuchProcess:
        pass
    return True


@daemon.command()
@json_option()
def status(as_json: bool) -> None:
    """Is a daemon running? Its pid, socket, GPUs, version and uptime."""
    client = Client()
    try:
        answer = status_within(client)
    except DaemonError as exc:
        if as_json:
            click.echo(json.dumps({"running": False, "home": str(client.home)}))
        else:
            click.echo(str(exc))
        sys.exit(3)
    answer["running"] = True
    if as_json:
        click.echo(json.dumps(answer, indent=1))
    else:
        click.echo("\n".join(status_lines(answer)))


daemon.add_command(backup)
daemon.add_command(log_cmd)
daemon.add_command(restart)
COMMANDS = [daemon]
