"""What `gpuherd sweep --dry-run` leaves out. Its lines are the points' commands alone, made to
be piped into `gpuherd run`; the job options the sweep would give its points (`--gpus 2`,
`--timeout 1h`, `-o FILE`, a sweep file's `gpus: 2`) do not travel with them, so a user
piping lost them without a word. The dry run says which in one line on stderr (its stdout
stays the commands), with what `gpuherd run` takes instead where it has it; those a sweep
file gave, as its keys.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

import click

from gpuherd.core.deps import KINDS, option
from gpuherd.core.model import DEFAULT_GRACE
from gpuherd.wire_requests import SweepOptions

RUN_TAKES: dict[str, tuple[str, str | None]] = {
    "gpus": ("--gpus", "--gpus-per-job"),
    "only_gpus": ("--only-gpus", "--gpus"),
    "mem": ("--mem", "--mem"),
    "ram": ("--ram", "--ram"),
    "oom_retry": ("--oom-retry", "--oom-retry"),
    "exclusive": ("--exclusive", "--exclusive"),
    "retries": ("--retries", "--retries"),
    "timeout": ("--timeout", "--timeout"),
    "max_log_size": ("--max-log-size", "--max-log-size"),
    "max_parallel": ("--max-parallel", "--max-parallel"),
    "order": ("--order", "--order"),
    "retry_delay": ("--retry-delay", "--retry-delay"),
    "no_output_timeout": ("--no-output-timeout", None),
    "kill_on_no_output": ("--on-no-output", None),
    "output": ("--output", None),
    "error": ("--error", None),
    "grace": ("--grace", "--grace"),
    "env_overrides": ("--env", None),
    "priority": ("--priority", None),
    **{kind: (option(kind), None) for kind in KINDS},
    "hold": ("--hold", None),
    "begin": ("--begin", None),
    "project": ("--project", None),
}
"""A SweepOptions field -> (the sweep's option, `gpuherd run`'s for it, None where it has
none), in the order `sweep --help` lists them."""
LOGS_INSTEAD = "its --output-dir DIR keeps each job's logs in a folder of its own"
"""What `gpuherd run` has where it lacks --output and --error: a user told only that it has
none was left without a way to keep the logs."""
RUN_DEFAULTS: dict[str, Any] = {"retries": 0, "grace": DEFAULT_GRACE, "max_log_size": 0}
"""Values that lose nothing though they are no SweepOptions default: `--retries 0`, `--grace
10s` and `--max-log-size none` (0) are what `gpuherd run` does anyway (a sweep's None is the
daemon's `config retries`, `config grace` and `config max-log-size`)."""


def left_out(
    options: SweepOptions,
    cwd: str,
    file: str = "",
    typed: Collection[str] = (),
    file_env: bool = False,
) -> str | None:
    """The line saying which of `options` (and a `--cwd` other than the current folder) the
    printed commands leave out; None when they leave out nothing. Those a sweep `file` gave
    (every option not `typed` on the command line, named as the file's key: typed_keys; and
    its `env` entries, where some stand, `file_env`) are named as the file's keys (`hold`),
    not as flags the user never typed (`--hold`)."""
    plain = SweepOptions()
    lost: list[tuple[str, str, str | None]] = []  # (as named, the sweep's flag, run's)
    for field, (flag, run) in RUN_TAKES.items():
        value, default = getattr(options, field), getattr(plain, field)
        if value not in (default, RUN_DEFAULTS.get(field, default)):
            lost += [(name, flag, run) for name in _given_as(flag, file, typed, file_env)]
    if os.path.realpath(cwd) != os.path.realpath(os.getcwd()):
        # `gpuherd run` runs them where it is started
        lost += [(name, "--cwd", None) for name in _given_as("--cwd", file, typed, file_env)]
    if not lost:
        return None
    flags = [name for name, flag, _ in lost if name == flag]
    keys = [name for name, flag, _ in lost if name != flag]
    named = ", ".join(flags) + (" and " if flags and keys else "")
    named += f"{file}'s {', '.join(keys)}" if keys else ""
    said = f"the commands printed leave out {named}"
    takes = [run if run == flag else f"{run} (for {name})" for name, flag, run in lost if run]
    lacks = list(dict.fromkeys(flag for _, flag, run in lost if run is None))
    instead = f"; {LOGS_INSTEAD}" if {"--output", "--error"} & set(lacks) else ""
    if takes:
        said += f": give gpuherd run {', '.join(takes)}"
        return said + (f"; it has no {', '.join(lacks)}{instead}" if lacks else "")
    return said + f": gpuherd run has no {', '.join(lacks)}{instead}"


def _given_as(flag: str, file: str, typed: Collection[str], file_env: bool) -> list[str]:
    """How a left-out option was given: as its `flag`, or as the sweep `file`'s key (`--hold`:
    `hold`); `--env` as both, where the file's `env` entries stand beside the flag's."""
    key = flag.removeprefix("--").replace("-", "_")
    if not file or key in KINDS:  # (job ids are the command line's only)
        return [flag]
    if key != "env":
        return [flag] if key in typed else [key]
    both = [flag] * (key in typed) + [key] * file_env
    return both or [flag]


def typed_keys(ctx: click.Context) -> set[str]:
    """The options typed on `gpuherd sweep`'s command line, as a sweep file's keys (`env` for
    `--env`): a flag typed wins over the file's key of its name."""
    typed = {
        name
        for name in ctx.params
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    }
    return {"env" if name == "env_pairs" else name for name in typed}
