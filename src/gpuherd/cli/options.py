"""What the commands share: parameter types (durations, sizes, id lists, NAME=VALUE pairs)
and the options `submit`, `run` and `sweep` all take, declared once.

An option's help names what it applies to (`the job`, `each job`, `each point`): the
factories below take that phrase; type, default and meaning are the same everywhere.
`sweep` hides the defaults of options a sweep file may set (gpus, priority, retries): there
the file's value is the default.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from gpuherd.core.idspec import parse_gpu_indices, parse_ids
from gpuherd.core.units import parse_duration, parse_size
from gpuherd.core.when import parse_begin

F = TypeVar("F", bound=Callable[..., Any])


class _Parsed(click.ParamType):  # type: ignore[type-arg]
    """A click type that delegates to one of the core's parsers (ValueError = bad value)."""

    def __init__(self, name: str, parse: Any) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or not key.replace("_", "a").isalnum() or key[0].isdigit():
        raise ValueError(f"invalid --env '{text}': use NAME=VALUE, e.g. --env SEED=1")
    return key, value


DURATION = _Parsed("duration", parse_duration)
SIZE = _Parsed("size", parse_size)
IDS = _Parsed("ids", parse_ids)


def _after_ids(text: str) -> list[int | str]:
    """Job ids, or `last`: the job submitted last (resolved by the command, which asks the
    daemon)."""
    if text.strip() == "last":
        return ["last"]
    try:
        return list(parse_ids(text))
    except ValueError as exc:
        raise ValueError(f"{exc}, or last (the job submitted last)") from None


AFTER_IDS = _Parsed("ids", _after_ids)
GPU_INDICES = _Parsed("GPUs", parse_gpu_indices)
ENV_PAIR = _Parsed("NAME=VALUE", _env_pair)
BEGIN = _Parsed("time", lambda text: parse_begin(text, time.time()))


class _OneJob(click.ParamType):  # type: ignore[type-arg]
    """One job id (`show`, `log`, `priority`, `move --before`), refused in gpuherd's words:
    click's were "'1-2' is not a valid integer range", with no word of what to do."""

    name = "job_id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        text = value.strip()
        path = ctx.command_path if ctx else "gpuherd"
        # An option names itself (--before); an argument is the command's one job.
        option = param.opts[-1] if isinstance(param, click.Option) else None
        number = text.isascii() and text.isdigit()
        ids = [] if number else _ids_or_none(text)  # several: "1-2", "3,5"
        if number and int(text) >= 1:
            return int(text)
        if number:
            said = f"invalid job id {text!r}: ids start at 1; {_EVERY_JOB}"
        elif len(ids) > 1 and option:
            said = f"{option} takes one job id, not {text!r}: give one, e.g. {option} {ids[0]}"
        elif len(ids) > 1:
            # `priority ID N`: the example shows that more follows the id.
            rest = " ..." if ctx and len([p for p in ctx.command.params if p.required]) > 1 else ""
            said = (
                f"{path.split()[-1]} takes one job id, not {text!r}: one job at a time "
                f"({path} {ids[0]}{rest}, then {path} {ids[1]}{rest}); {_EVERY_JOB}"
            )
        else:
            example = f"{option} 3" if option else f"{path} 3"
            said = f"invalid job id {text!r}: give a number, e.g. {example}; {_EVERY_JOB}"
        raise click.UsageError(said, ctx)


def _ids_or_none(text: str) -> list[int]:
    try:
        return parse_ids(text)
    except ValueError:
        return []


_EVERY_JOB = "gpuherd ls --all lists every job"
JOB_ID = _OneJob()


def ids_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument("ids", nargs=-1, required=required)


def expand_ids(tokens: tuple[str, ...]) -> list[int]:
    """Job ids from argv tokens such as `3-7,9` or `1 2 3`."""
    try:
        return parse_ids(list(tokens))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="IDS") from None


def _all_of(*options: Callable[[F], F]) -> Callable[[F], F]:
    """Several options as one decorator; --help lists them in this order."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def memory_options(what: str = "the job") -> Callable[[F], F]:
    """--mem, --ram and --oom-retry, as submit, run and sweep all take them."""
    return _all_of(
        click.option(
            "--mem",
            type=SIZE,
            help=f"GPU memory {what} needs on each GPU, e.g. 10GiB: jobs with --mem "
            "share GPUs up to their memory.",
        ),
        click.option("--ram", type=SIZE, help=f"Host memory {what} needs, e.g. 16GiB."),
        click.option(
            "--oom-retry",
            is_flag=True,
            help="Retry a CUDA out-of-memory failure with a larger --mem.",
        ),
    )


def _refuse_empty(hint: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A callback for a text filter (`ls --name`): '' is a mistake (`--name "$RUN"` with RUN
    unset), refused; matched, it would have listed no job, or (`kill $(ls -q ...)`) many."""

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value == "":
            raise click.UsageError(f"{param.opts[-1]} is empty: {hint}", ctx)
        return value

    return check


def filter_options() -> Callable[[F], F]:
    """`ls --project/--sweep/--name`: the filters that take text, none of them empty."""
    return _all_of(
        click.option(
            "--project",
            callback=_refuse_empty("give a project, or leave --project out"),
            help="Only jobs of this project.",
        ),
        click.option(
            "--sweep",
            callback=_refuse_empty("give a sweep's name (gpuherd sweep ls lists them)"),
            help="Only the jobs of this sweep (its points, every submission).",
        ),
        click.option(
            "--name",
            "name_glob",
            metavar="PATTERN",
            callback=_refuse_empty("give a name or a pattern like 'resnet-*', or leave --name out"),
            help="Only jobs whose name matches: a name, or a pattern like 'resnet-*'.",
        ),
    )


def _flags(long: str, short: str | None) -> list[str]:
    """An option's names: its long one, and a short one where the command gives it
    (`submit -g 2`; not `sweep`, where `-p` is a parameter)."""
    return [short, long] if short else [long]


def gpus_option(
    what: str = "the job",
    flag: str = "--gpus",
    show_default: bool = True,
    short: str | None = None,
) -> Callable[[F], F]:
    return click.option(
        *_flags(flag, short),
        type=click.IntRange(0, 64),
        default=1,
        show_default=show_default,
        help=f"GPUs {what} needs (0 = CPU-only).",
    )


def only_gpus_option(what: str = "the job") -> Callable[[F], F]:
    return click.option(
        "--only-gpus",
        type=GPU_INDICES,
        help=f"Place {what} only on these GPUs (indices as `gpuherd gpus` shows: 2, 0-3, 0,2).",
    )


def no_output_options(what: str = "the job") -> Callable[[F], F]:
    """--no-output-timeout and --on-no-output, as submit and sweep take them."""

    def apply(command: F) -> F:
        command = click.option(
            "--on-no-output",
            type=click.Choice(["flag", "kill"]),
            default="flag",
            show_default=True,
            help=f"kill: stop {what} when stalled (outcome stalled; --retries apply).",
        )(command)
        return click.option(
            "--no-output-timeout",
            type=DURATION,
            help=f"Flag {what} as stalled when it prints nothing for this long (10m).",
        )(command)

    return apply


def priority_option(show_default: bool = True, short: str | None = None) -> Callable[[F], F]:
    return click.option(
        *_flags("--priority", short),
        type=int,
        default=0,
        show_default=show_default,
        help="Higher runs first.",
    )


def after_option(short: str | None = None, any_end: bool = False) -> Callable[[F], F]:
    """--after (these jobs must succeed), or with `any_end` --after-any (must end, however)."""
    return click.option(
        *_flags("--after-any" if any_end else "--after", short),
        type=AFTER_IDS,
        multiple=True,
        # Given twice, both count (click keeps only the last of a plain option: the job
        # could start before the first dependency ended).
        callback=lambda _ctx, _param, lists: [i for ids in lists for i in ids],
        help=(
            "Start only once these jobs ended, however they ended (e.g. 3,5-7, or last: the "
            "job submitted last; repeatable)."
            if any_end
            else "Start only after these jobs succeeded (e.g. 3,5-7, or last: the job "
            "submitted last; repeatable)."
        ),
    )


def retries_option(
    what: str = "job", daemon: bool = True, default: str = "gpuherd config get retries"
) -> Callable[[F], F]:
    """--retries; where a daemon takes the job, left out it is the daemon's `config retries`."""
    more = f" [default: {default}]" if daemon else ""
    return click.option(
        "--retries",
        type=click.IntRange(0),
        default=None if daemon else 0,
        show_default=not daemon,
        help=f"Run a failed {what} again up to N times.{more}",
    )


def retry_delay_option(what: str = "a failed job") -> Callable[[F], F]:
    return click.option(
        "--retry-delay",
        type=DURATION,
        help=f"Wait this long before {what} runs again (30s, 5m; with --retries).",
    )


def timeout_option(what: str = "an attempt") -> Callable[[F], F]:
    return click.option("--timeout", type=DURATION, help=f"Stop {what} after this long (90s, 2h).")


def grace_option(what: str = "the job") -> Callable[[F], F]:
    return click.option(
        "--grace",
        type=DURATION,
        default="10s",
        show_default=True,
        help=f"Time between SIGTERM and SIGKILL when {what} is stopped.",
    )


def hold_option(what: str = "it", it: str = "it") -> Callable[[F], F]:
    return click.option(
        "--hold", is_flag=True, help=f"Queue {what} held; `gpuherd release` lets {it} run."
    )


def begin_option(what: str = "the job") -> Callable[[F], F]:
    return click.option(
        "--begin",
        metavar="WHEN",
        type=BEGIN,
        help=f"Hold {what} until then: +30m, +2h, 23:30 (next), 2026-11-26T02:00 (local time).",
    )


def project_option() -> Callable[[F], F]:
    return click.option("--project", help="Group jobs by project (ls --project).")


def max_parallel_option(what: str = "jobs") -> Callable[[F], F]:
    return click.option("--max-parallel", type=click.IntRange(1), help=f"At most N {what} at once.")


def order_option(what: str) -> Callable[[F], F]:
    return click.option(
        "--order",
        type=click.Choice(["given", "longest-first"]),
        default="given",
        show_default=True,
        help=f"longest-first: {what} that ran longest before start first (packs the GPUs tighter).",
    )


def cwd_option() -> Callable[[F], F]:
    return click.option(
        "--cwd",
        type=click.Path(exists=True, file_okay=False, resolve_path=True),
        help="Working directory (default: the current one).",
    )


def env_option(what: str = "the job") -> Callable[[F], F]:
    return click.option(
        "--env",
        "env_pairs",
        type=ENV_PAIR,
        multiple=True,
        help=f"Set NAME=VALUE for {what} (repeatable).",
    )


def quiet_option() -> Callable[[F], F]:
    return click.option("-q", "--quiet", is_flag=True, help="Print only the job ids.")


def one_output(quiet: bool, as_json: bool) -> None:
    """-q and --json each say what to print: both at once is a mistake, not a choice."""
    if quiet and as_json:
        raise click.UsageError("give -q (the ids only) or --json, not both")


def json_option() -> Callable[[F], F]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
