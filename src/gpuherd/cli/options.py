"""The options `submit`, `run` and `sweep` all take, declared once (their parameter types
are in param_types.py, the combinations of them refused in option_checks.py).

An option's help names what it applies to (`the job`, `each job`, `each point`): the
factories below take that phrase; type, default and meaning are the same everywhere.
`sweep` hides the defaults of gpus, priority and retries, which a sweep file often sets:
there the file's value is the default (a file may set the other job options too). A switch
has its `--no-` form (`--hold/--no-hold`), which turns off a sweep file's `hold: true`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuherd.cli.option_checks import refuse_blank
from gpuherd.cli.param_types import (
    BEGIN,
    DURATION,
    ENV_PAIR,
    GPU_INDICES,
    LOG_CAP,
    PRIORITY,
    SIZE,
    Choosing,
    Place,
    WholeRange,
    completes,
)
from gpuherd.cli.state_choices import ChoosingSeveral, flattened
from gpuherd.core.choices import ON_NO_OUTPUT, ORDERS
from gpuherd.core.listing_filters import empty_filter
from gpuherd.core.text import ascii_digits
from gpuherd.typed_name import as_typed

if TYPE_CHECKING:
    from gpuherd.gpus.choice import GpuChoice

F = TypeVar("F", bound=Callable[..., Any])


def ids_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument("ids", nargs=-1, required=required, shell_complete=completes("jobs"))


def all_of(*options: Callable[[F], F]) -> Callable[[F], F]:
    """Several options as one decorator; --help lists them in this order."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def memory_options(what: str = "the job") -> Callable[[F], F]:
    """--mem, --ram, --oom-retry and --exclusive (how the job shares its GPUs), as submit,
    run and sweep all take them."""
    return all_of(
        click.option(
            "--mem",
            type=SIZE,
            help=f"GPU memory {what} needs on each GPU, e.g. 10GiB: jobs with --mem "
            "share GPUs up to their memory.",
        ),
        click.option("--ram", type=SIZE, help=f"Host memory {what} needs, e.g. 16GiB."),
        click.option(
            "--oom-retry/--no-oom-retry",
            default=False,
            help="Retry a CUDA out-of-memory failure with a larger --mem.",
        ),
        click.option(
            "--exclusive/--no-exclusive",
            default=False,
            help=f"Run {what} alone on each of its GPUs: no other job (with --mem or not) "
            "shares them.",
        ),
    )


def _refuse_empty(key: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A callback for a text filter (`ls --name`): '' or white space alone is a mistake
    (`--name "$RUN"` with RUN unset), refused in the words every client uses
    (core/listing_filters); matched, it would have listed no job, or (`kill $(ls -q ...)`)
    many."""

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        flag = param.opts[-1]
        if refusal := empty_filter(key, value, flag, f"leave {flag} out"):
            raise click.UsageError(as_typed(refusal), ctx)
        return value

    return check


def filter_options() -> Callable[[F], F]:
    """`ls --project/--sweep/--name`: the filters that take text, none of them empty."""
    return all_of(
        click.option(
            "--project",
            callback=_refuse_empty("project"),
            help="Only jobs of this project.",
        ),
        click.option(
            "--sweep",
            callback=_refuse_empty("sweep"),
            shell_complete=completes("sweeps"),
            help="Only the jobs of this sweep (its points, every submission).",
        ),
        click.option(
            "--name",
            "name_glob",
            metavar="PATTERN",
            callback=_refuse_empty("name"),
            help="Only jobs whose name matches: a name, or a pattern like 'resnet-*'.",
        ),
    )


def _flags(long: str, short: str | None) -> list[str]:
    """An option's names: its long one, and a short one where the command gives it
    (`submit -g 2`; not `sweep`, where `-p` is a parameter)."""
    return [short, long] if short else [long]


class _GpuCount(WholeRange):
    """--gpus: a count from 0 to 64, refused in the words of GPUs where pueue's `-g GROUP`
    may have been meant."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
            names = param.opts if isinstance(param, click.Option) else ["--gpus"]
            said = f"{names[-1]} takes a whole number of GPUs, not {value!r}: e.g. {names[0]} 2"
            if names[0] == "-g" and any(c.isalpha() for c in value):  # `-g train`, from pueue
                said += f"; a group, as pueue's -g, is --project {value} here"
            elif ctx and _names_gpus(value) and "only_gpus" in {p.name for p in ctx.command.params}:
                said += f"; to choose the GPUs it runs on: --only-gpus {value}"
            raise click.UsageError(said, ctx)
        return super().convert(value, param, ctx)


def _names_gpus(value: str) -> bool:
    """`0,1` or `2-3`: GPU indices, as `daemon start --gpus` takes them."""
    return all(ascii_digits(part) for part in value.replace("-", ",").split(","))


GPU_COUNT = _GpuCount(0, 64)


class _Priority(click.ParamType):  # type: ignore[type-arg]
    """--priority: a whole number (PRIORITY), refused in the words of a partition where
    Slurm's `-p gpu` may have been meant (submit's -p is --priority)."""

    name = PRIORITY.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return PRIORITY.convert(value, param, ctx)
        except click.UsageError as exc:
            names = param.opts if isinstance(param, click.Option) else []
            if names[:1] != ["-p"] or not any(c.isalpha() for c in str(value)):
                raise
            raise click.UsageError(
                f"{exc.message}; -p is --priority here, not Slurm's partition: a daemon has "
                "one queue, of this machine's GPUs (--only-gpus 0,1 keeps a job on some of "
                f"them; --project {shlex.quote(value)} groups jobs)",
                ctx,
            ) from None


PRIORITY_OR_PARTITION = _Priority()


def gpus_option(
    what: str = "the job",
    flag: str = "--gpus",
    show_default: bool = True,
    short: str | None = None,
) -> Callable[[F], F]:
    return click.option(
        *_flags(flag, short),
        type=GPU_COUNT,
        default=1,
        show_default=show_default,
        help=f"GPUs {what} needs (0 = CPU-only).",
    )


def fake_gpus_option() -> Callable[[F], F]:
    """`run`'s and `daemon start`'s --fake-gpus: with neither it nor --gpus, GPUHERD_FAKE_GPUS."""
    return click.option(
        "--fake-gpus",
        shell_complete=completes("files"),  # (its state file's path; a count is typed)
        help="Pretend: 4, 2x24GiB,1x80GiB, or a JSON state file "
        "(default: $GPUHERD_FAKE_GPUS, when no --gpus).",
    )


def gpu_choice(gpus: str | None, fake_gpus: str | None, ray: bool = False) -> GpuChoice:
    """--gpus or --fake-gpus, else GPUHERD_FAKE_GPUS (gpus/choice.py), checked before any
    daemon starts or job runs: a bad value is a usage error (exit 2) on one line naming it; a
    bad variable without the `--help` hint, since no option is wrong."""
    from gpuherd.gpus.choice import choose_gpus  # (the GPU probes: not for `ls` or `submit`)

    try:
        return choose_gpus(gpus, fake_gpus, ray=ray)
    except ValueError as exc:
        if gpus is not None or fake_gpus is not None:
            raise click.UsageError(str(exc)) from None
        raise _BadGpuVariable(str(exc)) from None


class _BadGpuVariable(click.ClickException):
    """A bad GPUHERD_FAKE_GPUS: a usage error's exit status (2), without a usage error's
    `--help` hint, as no option given is wrong. (Newer clicks type exit_code a class variable.)"""

    exit_code = 2


def only_gpus_option(what: str = "the job") -> Callable[[F], F]:
    return click.option(
        "--only-gpus",
        type=GPU_INDICES,
        shell_complete=completes("gpus"),  # the configured GPUs; after a comma, the rest
        help=f"Place {what} only on these GPUs (indices as `gpuherd gpus` shows: 2, 0-3, 0,2).",
    )


def no_output_options(what: str = "the job") -> Callable[[F], F]:
    """--no-output-timeout and --on-no-output, as submit and sweep take them."""

    def apply(command: F) -> F:
        command = click.option(
            "--on-no-output",
            type=Choosing(ON_NO_OUTPUT),
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
        type=PRIORITY_OR_PARTITION,
        default=0,
        show_default=show_default,
        help="Higher runs first.",
    )


def retries_option(
    what: str = "job", daemon: bool = True, default: str = "gpuherd config get retries"
) -> Callable[[F], F]:
    """--retries; where a daemon takes the job, left out it is the daemon's `config retries`."""
    more = f" [default: {default}]" if daemon else ""
    return click.option(
        "--retries",
        type=WholeRange(0),
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


def max_log_size_option(
    what: str = "the job", default: str | None = "gpuherd config get max-log-size"
) -> Callable[[F], F]:
    """--max-log-size; left out, it is the daemon's `config max-log-size` (as --retries).
    `default` None: an edit's, where left out is unchanged."""
    return click.option(
        "--max-log-size",
        type=LOG_CAP,
        metavar="SIZE",
        help=f"Stop {what} once its stdout or stderr log grows past SIZE (10GiB, 500MiB; "
        f"none: no cap)." + (f" [default: {default}]" if default else ""),
    )


def grace_option(
    what: str = "the job", default: str = "the daemon's `grace` setting, 10s unless changed"
) -> Callable[[F], F]:
    """--grace; left out, it is the daemon's `config grace` (as --retries: retries_option)."""
    return click.option(
        "--grace",
        type=DURATION,
        default=None,  # sent so: the daemon gives it its `config grace`
        help=f"Time between SIGTERM and SIGKILL when {what} is stopped. [default: {default}]",
    )


def hold_option(what: str = "it", it: str = "it") -> Callable[[F], F]:
    return click.option(
        "--hold/--no-hold",
        default=False,
        help=f"Queue {what} held; `gpuherd release` lets {it} run.",
    )


def begin_option(what: str = "the job") -> Callable[[F], F]:
    return click.option(
        "--begin",
        metavar="WHEN",
        type=BEGIN,
        help=f"Hold {what} until then: +30m, +2h, 23:30 (next), 2026-11-26T02:00 (local time).",
    )


def project_option() -> Callable[[F], F]:
    return click.option(
        "--project", callback=refuse_blank, help="Group jobs by project (ls --project)."
    )


def max_parallel_option(what: str = "jobs") -> Callable[[F], F]:
    return click.option("--max-parallel", type=WholeRange(1), help=f"At most N {what} at once.")


def order_option(what: str) -> Callable[[F], F]:
    return click.option(
        "--order",
        type=Choosing(ORDERS),
        default="given",
        show_default=True,
        help=f"longest-first: {what} that ran longest before start first (packs the GPUs tighter).",
    )


def cwd_option(
    default: str = "the current one", what: str = "Working directory"
) -> Callable[[F], F]:
    return click.option(
        "--cwd",
        type=Place(exists=True, file_okay=False, resolve_path=True),
        help=f"{what} (default: {default})." if default else f"{what}.",
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


def states_option(choices: Sequence[str], help_text: str) -> Callable[[F], F]:
    """`--state STATE` (repeatable, or comma-separated), of `choices`: `ls`, `clean`, `sweep
    status`. Tab offers the choices (click's Choice), and another word is refused by its
    option. The command gets one tuple of words, each once."""
    return click.option(
        "--state", "states", multiple=True, type=ChoosingSeveral(choices), metavar="STATE",
        callback=flattened, help=help_text,
    )  # fmt: skip


def json_option() -> Callable[[F], F]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
