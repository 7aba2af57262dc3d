"""What `gpuherd sweep --dry-run` leaves out. Its lines are the points' commands alone, made to
be piped into `gpuherd run`; the job options the sweep would give its points (`--gpus 2`,
`--timeout 1h`, `-o FILE`, a sweep file's `gpus: 2`) do not travel with them, so a user
piping lost them without a word. The dry run says which in one line on stderr (its stdout
stays the commands), with what `gpuherd run` takes instead where it has it.
"""

from __future__ import annotations

import os
from typing import Any

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
    "retry_delay": ("--retry-delay", None),
    "no_output_timeout": ("--no-output-timeout", None),
    "kill_on_no_output": ("--on-no-output", None),
    "output": ("--output", None),
    "error": ("--error", None),
    "grace": ("--grace", None),
    "env_overrides": ("--env", None),
    "priority": ("--priority", None),
    **{kind: (option(kind), None) for kind in KINDS},
    "hold": ("--hold", None),
    "begin": ("--begin", None),
    "project": ("--project", None),
}
"""A SweepOptions field -> (the sweep's option, `gpuherd run`'s for it, None where it has
none), in the order `sweep --help` lists them."""
RUN_DEFAULTS: dict[str, Any] = {"retries": 0, "grace": DEFAULT_GRACE, "max_log_size": 0}
"""Values that lose nothing though they are no SweepOptions default: `--retries 0`, `--grace
10s` and `--max-log-size none` (0) are what `gpuherd run` does anyway (a sweep's None is the
daemon's `config retries`, `config grace` and `config max-log-size`)."""


def left_out(options: SweepOptions, cwd: str) -> str | None:
    """The line saying which of `options` (and a `--cwd` other than the current folder) the
    printed commands leave out; None when they leave out nothing."""
    plain = SweepOptions()
    lost: list[tuple[str, str | None]] = []
    for field, flags in RUN_TAKES.items():
        value, default = getattr(options, field), getattr(plain, field)
        if value not in (default, RUN_DEFAULTS.get(field, default)):
            lost.append(flags)
    if os.path.realpath(cwd) != os.path.realpath(os.getcwd()):
        lost.append(("--cwd", None))  # `gpuherd run` runs them where it is started
    if not lost:
        return None
    said = f"the commands printed leave out {', '.join(sweep for sweep, _ in lost)}"
    takes = [run if run == sweep else f"{run} (for {sweep})" for sweep, run in lost if run]
    lacks = [sweep for sweep, run in lost if run is None]
    if takes:
        said += f": give gpuherd run {', '.join(takes)}"
        return said + (f"; it has no {', '.join(lacks)}" if lacks else "")
    return said + f": gpuherd run has no {', '.join(lacks)}"
