"""How a sweep point still waiting to run differs in its job options from what a new
submission of the sweep asks for, and the `gpuherd edit` options that would give it the new
ones (pure).

A submission skips a point whose job is queued or held: that job keeps the options it was
submitted with, whatever the new submission says (`--gpus 2`, `--timeout 1h`). The daemon
cannot tell an option given from its default, so it compares what each waiting job has with
what the submission asks for, but for the options whose default is the daemon's own setting
(`--retries`, `--grace`, `--max-log-size`: compared only when given) and the ones the daemon
grows itself (`--mem`: a sweep learns it from its finished points, `--oom-retry` raises it
and may make a job `--exclusive`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from gpuherd.core.deps import KINDS
from gpuherd.core.edit import change
from gpuherd.core.idspec import format_ids
from gpuherd.core.units import format_given

if TYPE_CHECKING:
    from gpuherd.core.model import JobSpec

COMPARED = (
    "gpus",
    "only_gpus",
    "mem",
    "ram",
    "exclusive",
    "oom_retry",
    "retries",
    "retry_delay",
    "timeout",
    "max_log_size",
    "no_output_timeout",
    "kill_on_no_output",
    "grace",
    "project",
    "env_overrides",
    "cwd",
    *KINDS,
    "output",
    "error",
)
"""The JobSpec fields a sweep's submission gives every point (its job options); with
PRIORITY, which is the job's."""
PRIORITY = "priority"
CONFIG_DEFAULTS = ("retries", "grace", "max_log_size")
"""Options that, not given, are the daemon's setting: compared only when given."""
GROWN = ("mem", "exclusive")
"""Options `--oom-retry` changes between attempts: not compared for a job that has it."""
_NOT_EDITABLE = (PRIORITY, "oom_retry", "no_output_timeout", "kill_on_no_output")
"""Options `gpuherd edit` does not change: points waiting with other ones are submitted anew."""


def differences(
    waiting: JobSpec,
    waiting_priority: int,
    wanted: JobSpec,
    wanted_priority: int,
    not_given: Iterable[str] = (),
) -> dict[str, str]:
    """What differs, each as `--gpus 1 -> 2` (the waiting job's, then the submission's), by
    field, named by its option as the submission gave it (`--oom-retry no -> yes`, not the
    field's `oom_retry`); `not_given`: the fields of CONFIG_DEFAULTS, and `mem`, the
    submission left out."""
    skipped = {*not_given, *(GROWN if waiting.oom_retry else ())}
    fields = [f for f in COMPARED if f not in skipped and getattr(waiting, f) != getattr(wanted, f)]
    found = {}
    for name in fields:
        if name == "env_overrides":  # names only, as an edit says them (values may be secrets)
            said = ",".join(_env_changed(waiting.env_overrides, wanted.env_overrides))
        else:
            said = change(name, waiting, wanted)
        found[name] = f"{option_name(name)} {said}"
    if waiting_priority != wanted_priority:
        found[PRIORITY] = f"{option_name(PRIORITY)} {waiting_priority} -> {wanted_priority}"
    return found


_OPTIONS = {"env_overrides": "--env", "kill_on_no_output": "--on-no-output"}
"""The options whose name is not their field's, dashed."""


def option_name(field: str) -> str:
    """The option of `submit` and `sweep` that gives a JobSpec field: `--only-gpus`."""
    return _OPTIONS.get(field, "--" + field.replace("_", "-"))


def edit_words(
    wanted: JobSpec, fields: Iterable[str], waiting_env: Iterable[str]
) -> list[str] | None:
    """The options of `gpuherd edit` that give a waiting job `wanted`'s value of each of
    `fields` (as differences() names them); None when one of them cannot be edited, or its
    `--env` drops a variable one waiting job has (`waiting_env`: their names) but keeps
    others (an edit either clears them all or sets some)."""
    words: list[str] = []
    for name in fields:
        if name in _NOT_EDITABLE:
            return None
        value = getattr(wanted, name)
        option = option_name(name)
        if name == "env_overrides":
            if not set(waiting_env) <= set(value) and value:
                return None
            pairs = [word for key, text in value.items() for word in ("--env", f"{key}={text}")]
            words += pairs or ["--clear", "env"]
        elif value is None or value == ():
            words += ["--clear", name]
        elif isinstance(value, bool):
            words.append(option if value else f"--no-{name}")
        elif name in ("mem", "ram", "max_log_size"):
            words += [option, _size(value)]
        elif name in ("retry_delay", "timeout", "grace"):
            words += [option, format_given(value)]
        elif name in KINDS:
            words += [option, format_ids(value)]
        elif name == "only_gpus":
            words += [option, ",".join(map(str, value))]
        else:
            words += [option, str(value)]
    return words


def _env_changed(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The names of the variables set, changed or dropped from `before` to `after`."""
    return sorted(k for k in {*before, *after} if before.get(k) != after.get(k))


def _size(n: int) -> str:
    """Bytes as one types them, exactly: `10GiB`, `512MiB`, else the number of bytes."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % factor == 0:
            return f"{n // factor}{unit}"
    return str(n)
