"""The `gpuherd` (and `herd`) console script: a click group; one module per verb group.

A command's module is imported only when that command runs (`gpuherd ls` never loads the
sweep, daemon or dashboard code), so `--help` lists the commands from the table below;
tests/unit/test_cli_commands.py checks that the table matches the real commands.

Every error reaches the user as one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import codecs
import importlib
import io
import os
import sys
from collections.abc import Iterable
from typing import Any, TextIO

import click

from gpuherd import __version__
from gpuherd.cli.flag_pairs import refuse_both_ways
from gpuherd.cli.separator import refuse_separator_values
from gpuherd.errors import HerdError, NotRunning
from gpuherd.typed_name import as_typed
from gpuherd.typed_name import prefixed as prefixed  # the CLI's commands import it from here
from gpuherd.typed_name import typed_name as _typed_name

NO_DAEMON = 3
"""The exit status of a command that needs a daemon and finds none running (errors.NotRunning)."""

COMMAND_TABLE: dict[str, tuple[str, str]] = {
    # name: (module in gpuherd.cli, its short help as `--help` lists it)
    "completion": (
        "completion_cmd",
        "Tab completion in bash, zsh or fish: print the script that makes SHELL complete "
        "commands, options, job ids, sweep names, choices and paths.",
    ),
    "config": (
        "config_cmds",
        "Daemon settings: list them, `get NAME`, `set NAME VALUE` (kept across restarts), or "
        "`unset NAME` (back to its default).",
    ),
    "daemon": ("daemon_cmds", "Start, stop or inspect the per-user daemon that holds the queue."),
    "edit": (
        "queue_cmds",
        "Change what queued or held jobs ask for, where they run, what they wait for and "
        "when they may begin; they keep their place in the queue.",
    ),
    "gpus": (
        "gpu_cmds",
        "List the GPUs: slots, state, memory, utilisation, jobs and foreign processes.",
    ),
    "hold": ("queue_cmds", "Keep queued jobs from starting until `gpuherd release`."),
    "kill": (
        "queue_cmds",
        "Stop jobs: queued ones are cancelled, running ones get SIGTERM, then SIGKILL after "
        "their grace period.",
    ),
    "log": (
        "job_cmds",
        "Print a job's output (stdout, or --stderr); without JOB_ID, the job submitted last.",
    ),
    "ls": ("job_cmds", "List running and queued jobs and the most recent finished ones."),
    "move": ("queue_cmds", "Move a queued job: --first, --before ID, or --swap ID."),
    "pause": (
        "queue_cmds",
        "Pause running jobs (SIGSTOP to the whole process group), or without IDS pause the "
        "queue's dispatch (running jobs are not touched).",
    ),
    "priority": ("queue_cmds", "Set jobs' priority (higher runs first)."),
    "ray-local": (
        "ray_cmds",
        "Start a local Ray cluster: a head without GPUs and NODES nodes with fake GPUs.",
    ),
    "release": ("queue_cmds", "Let held jobs run again."),
    "resume": (
        "queue_cmds",
        "Resume running jobs (SIGCONT to the whole process group), or without IDS resume the "
        "queue's dispatch (running jobs are not touched).",
    ),
    "retry": (
        "queue_cmds",
        "Run finished jobs again as a new attempt; a running job is stopped gracefully and "
        "queued again (for jobs that resume from a checkpoint).",
    ),
    "rm": ("queue_cmds", "Remove jobs: cancel queued ones, forget finished ones and their logs."),
    "clean": (
        "queue_cmds",
        "Remove finished jobs and their logs (pueue's clean, tsp -C): `gpuherd clean --state "
        "succeeded` keeps the failures to look at.",
    ),
    "run": ("run_cmd", "Run commands on the GPUs now and exit when all are done (no daemon)."),
    "show": (
        "job_cmds",
        "Everything about one job: command, GPUs, attempts, outcome, and its stderr tail.",
    ),
    "submit": ("job_cmds", "Queue a command: `gpuherd submit -- python train.py --lr 0.1`."),
    "sweep": (
        "sweep_cmds",
        "Run a command over a parameter grid or random search, one results folder per point.",
    ),
    "ui": (
        "ui_cmd",
        "The web dashboard: prints its URL (with the token), starting the listener if needed.",
    ),
    "wait": (
        "wait_cmd",
        "Wait until jobs finish (default: every job queued, running or paused now; not the "
        "held ones, which would wait for a release).",
    ),
}


def load_command(name: str) -> click.Command | None:
    """The real command `name`, importing only its module (None: no such command)."""
    if name not in COMMAND_TABLE:
        return None
    from gpuherd.gc_pause import importing  # (not on `--help`'s path: it needs threading)

    with importing():
        module = importlib.import_module(f"gpuherd.cli.{COMMAND_TABLE[name][0]}")
    found: list[click.Command] = [c for c in module.COMMANDS if c.name == name]
    return found[0] if found else None


class TypedHelpFormatter(click.HelpFormatter):
    """Help in the name typed: under `herd`, the help's examples and prose say `herd submit
    -- python train.py`, as its usage line does. The words go through as_typed() before click
    wraps them, so a `gpuherd config get retries` broken across two lines is caught, and the
    lines wrap as `herd` makes them; under `gpuherd` the help is as written."""

    def write_text(self, text: str) -> None:
        super().write_text(as_typed(text))

    def write_dl(
        self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        typed = [(as_typed(term), as_typed(value)) for term, value in rows]
        super().write_dl(typed, col_max, col_spacing)


class ReaderLeft(Exception):
    """Whoever read our output closed the pipe (`| head`)."""


class LazyGroup(click.Group):
    """A group whose commands are imported on first use; `--help` reads COMMAND_TABLE."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMAND_TABLE, *self.commands})

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # click would make this exit 1; main() makes it a quiet 0
            raise ReaderLeft from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            command = load_command(cmd_name)
            if command is None:
                return None
            self.add_command(command)
        return self.commands[cmd_name]

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand:  # suggest from every name, loaded or not
            raise click.exceptions.NoSuchCommand(
                args[0], possibilities=self.list_commands(ctx), ctx=ctx
            ) from None

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        """The command names from COMMAND_TABLE (`gpuherd s<Tab>` imports no command's
        module), each with its short help; and the group's own options."""
        from click.shell_completion import CompletionItem

        commands = [
            CompletionItem(name, help=click.Command(name, help=text).get_short_help_str())
            for name, (_, text) in sorted(COMMAND_TABLE.items())
            if name.startswith(incomplete)
        ]
        return commands + click.Command.shell_complete(self, ctx, incomplete)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(len(name) for name in COMMAND_TABLE)
        rows = [
            (name, click.Command(name, help=text).get_short_help_str(limit))
            for name, (_, text) in sorted(COMMAND_TABLE.items())
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _print_version(ctx: click.Context, _: click.Parameter, given: bool) -> None:
    """`herd, version 0.2.0`: the name typed, as the usage line gives it (click's own
    version_option keeps the first name it prints for every later call in the process)."""
    if given and not ctx.resilient_parsing:
        click.echo(f"{ctx.find_root().info_name}, version {__version__}")
        ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """gpuherd: a GPU job queue for machine-learning experiments.

    Start a daemon once (`gpuherd daemon start`), then submit commands; each runs on free
    GPUs with CUDA_VISIBLE_DEVICES set. Set GPUHERD_HOME to keep separate queues.
    """


def main(argv: list[str] | None = None) -> None:
    _fill_closed_descriptors()
    _replace_unencodable()
    if os.environ.get(complete_var(_typed_name())):  # the shell asks what may come, on Tab
        from gpuherd.cli.completion_cmd import answer_shell

        sys.exit(answer_shell(cli, _typed_name()))
    if sys.stdout is None:  # every command prints what it did or found: refuse before acting
        _error(
            prefixed("error", "standard output is closed: point it at a file, or at /dev/null")
            + " (> /dev/null) to drop what gpuherd prints"
        )
        sys.exit(1)
    # On the class: every command's context makes its help with it, those of the commands
    # in the other modules and of their groups too (click has no setting a parent passes on).
    click.Context.formatter_class = TypedHelpFormatter
    refuse_separator_values(LazyGroup)  # `submit -n -- true`: a name forgotten (separator.py)
    refuse_both_ways(LazyGroup)  # `submit --no-hold --hold`: which one? (flag_pairs.py)
    try:
        cli.main(args=argv, prog_name=_typed_name(), standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _error(prefixed("interrupted"))
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as exc:  # `gpuherd`, `gpuherd daemon`: the help
        _error(exc.ctx.get_help())
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        ctx: Any = getattr(exc, "ctx", None)
        said = _other_tools_word(exc, ctx, sys.argv[1:] if argv is None else argv)
        said = said or exc.format_message()
        if missing := _missing_value(exc):
            said, ctx = missing, ctx or _parsed_context(exc)
        hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        _error(prefixed("error", f"{said}{hint}"))
        sys.exit(exc.exit_code)
    except HerdError as exc:
        _error(prefixed("error", str(exc)))
        # No daemon: 3 from every command, as from `wait` and `daemon status`, so a script
        # tells it from a refusal or an unknown id (1) without reading the line.
        sys.exit(NO_DAEMON if isinstance(exc, NotRunning) else 1)
    except KeyboardInterrupt:
        _error(prefixed("interrupted"))
        sys.exit(130)
    except ReaderLeft:
        # `gpuherd log 5 | head`: the reader has what it wanted. Nothing to report.
        drop_output(sys.stdout)
        sys.exit(0)
    except OSError as exc:  # mostly our output failing: `> /dev/full`, a full disk
        from gpuherd.cli.output_failed import failed_output  # (the error path's alone)

        drop_output(sys.stdout)
        _error(prefixed("error", failed_output(exc)))  # (with the jobs queued before it)
        sys.exit(1)


def complete_var(prog_name: str) -> str:
    """The variable click's completion script sets to ask for candidates: _GPUHERD_COMPLETE
    (or _HERD_COMPLETE), as click names it."""
    return f"_{prog_name.upper()}_COMPLETE"


def _missing_value(exc: click.ClickException) -> str | None:
    """An option given last without its value, option first as every bad value is said
    (`--timeout: no value given`): click's "Option '--timeout' requires an argument.").
    An argument left out, with the command's usage (`no JOB_ID given: gpuherd move [OPTIONS]
    JOB_ID`): click's "Missing argument 'JOB_ID'."."""
    name = getattr(exc, "option_name", None)
    if isinstance(exc, click.BadOptionUsage) and name and "requires an argument" in exc.message:
        return f"{name}: no value given"
    if isinstance(exc, click.MissingParameter) and isinstance(exc.param, click.Argument):
        said, ctx = f"no {exc.param.human_readable_name.rstrip('.')} given", exc.ctx
        if ctx is None:
            return said
        usage = f"{said}: {ctx.command_path} {' '.join(ctx.command.collect_usage_pieces(ctx))}"
        if ctx.parent and ctx.parent.info_name == "sweep" and exc.param.name in ("name", "names"):
            usage += f"; {ctx.find_root().info_name} sweep ls lists the sweeps"  # (status, rm)
        return usage
    return None


def _parsed_context(exc: click.ClickException) -> click.Context | None:
    """The context of the command whose arguments click was parsing when it raised `exc`:
    its parser raises a missing value without one, which every other usage error has (and
    with it its `(see gpuherd submit --help)`). It is the innermost `ctx` of the frames the
    error passed through (Command.parse_args(self, ctx, args)), named as typed (`herd ...`)."""
    import traceback  # deferred: ~1.6 ms of every CLI call's imports, for this error alone

    found = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        ctx = frame.f_locals.get("ctx")
        if isinstance(ctx, click.Context):
            found = ctx
    return found


def _other_tools_word(exc: click.ClickException, ctx: Any, argv: list[str]) -> str | None:
    """For a command or option of pueue or task-spooler typed from habit (`status`, `submit
    --label`, `gpus rm`), or a word too many (`ls 3`), what to type here; None for any other
    error. `ctx` is that of the group or command it was typed to; `argv` the words typed, for
    a command typed as task-spooler queues one (`gpuherd python train.py`)."""
    extra = exc.message.startswith("Got unexpected extra argument")
    if ctx is None or not (extra or isinstance(exc, click.NoSuchCommand | click.NoSuchOption)):
        return None
    from gpuherd.cli import other_tools as theirs

    if extra:
        return theirs.extra_argument(ctx, exc.message)
    where = ctx.info_name if ctx.parent else theirs.TOP
    if ctx.command.hidden and ctx.parent and ctx.parent.info_name == theirs.SWEEP:
        where = theirs.SWEEP  # `sweep TEMPLATE ...` runs its hidden `submit`: a sweep's options
    if isinstance(exc, click.NoSuchCommand):
        name = exc.command_name
        typed = argv[argv.index(name) :] if name in argv else [name]
        said = theirs.command_hint(where, name, typed[1:])
        return said or (theirs.program_hint(typed) if where == theirs.TOP else None)
    named = exc.option_name if isinstance(exc, click.NoSuchOption) else None
    after = argv[argv.index(named) + 1 :] if named in argv else []  # (pueue's `-d 2h`)
    return named and (theirs.option_hint(where, named, after) or theirs.own_option_hint(ctx, named))


def drop_output(stream: TextIO) -> None:
    """Point `stream` at /dev/null: its reader has gone (or it cannot be written), and what
    is still buffered there must not fail again when it is flushed at exit."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, stream.fileno())
    os.close(null)


def _error(text: str) -> None:
    """An error's line on stderr; on stdout when stderr is closed (`2>&-`); else nowhere."""
    click.echo(text, err=sys.stderr is not None)


def _fill_closed_descriptors() -> None:
    """Put /dev/null on a standard descriptor the caller closed (`<&-`, `>&-`, `2>&-`).

    Python leaves its stream None (and so do we: a command that needs it refuses); but the
    next file opened (the database, a log, a socket) would take the free number, and the
    daemon or a job started from here would take that file for its standard stream."""
    for fd, stream in enumerate((sys.stdin, sys.stdout, sys.stderr)):
        if stream is None:
            null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: `fd`, usually
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _replace_unencodable() -> None:
    """Print `?` for a character the terminal's encoding lacks: under a Latin-1 locale
    (`LANG=en_US.ISO-8859-1`, still found on older clusters) `show`'s own dash or a job
    named with a snowman ended the command in a UnicodeEncodeError traceback, exit 1. So
    did an ASCII C locale's surrogateescape stream (Python's UTF-8 coercion off, or no
    C.UTF-8 locale installed): it keeps writing back the bytes it read undecoded, and prints
    `?` for the rest. Stderr's backslashreplace stays."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors in _UNENCODABLE:
            stream.reconfigure(errors=_UNENCODABLE[stream.errors])


def _escape_or_replace(error: UnicodeError) -> tuple[str | bytes, int]:
    try:
        return codecs.lookup_error("surrogateescape")(error)
    except UnicodeError:  # not a byte read undecoded: a character the encoding lacks
        return codecs.replace_errors(error)


codecs.register_error("gpuherd.escape_or_replace", _escape_or_replace)
_UNENCODABLE = {"strict": "replace", "surrogateescape": "gpuherd.escape_or_replace"}


if __name__ == "__main__":
    main()
