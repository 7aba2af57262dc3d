"""The options of `gpuherd sweep` a sweep file may set (sweepfile.py reads its other keys).

Each key is its flag's name with `_` for `-` (`--retry-delay` is `retry_delay`), as Python's
`Herd.sweep()` spells it too, and takes the flag's value forms, checked by the parsers the
flags use: sizes (`ram: 16GiB`), durations (`grace: 30s`), GPU indices (`only_gpus: 0,2` or
`[0, 2]`), --begin times (`begin: 22:00`), variables as `--env` takes them. What the
daemon checks of the options together (`exclusive` with `gpus: 0`, `on_no_output: kill`
without `no_output_timeout`) is checked once the command line's flags have overridden the
file's (by the CLI too: cli/sweep_args.py). But `hold: true` with a `begin` (one choice,
which the daemon refuses together) is a file's own mistake: refused as the file is read, at
its line.

A relative `cwd` is the sweep file's folder's: the file runs the same from wherever it is
submitted. Job ids (`--after`) and what one submission does (`--force`, `--yes`,
`--dry-run`) are the command line's only: COMMAND_LINE_ONLY says why, for the file's error.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
)

from gpuherd.core.choices import OnNoOutput, Order
from gpuherd.core.deps import KINDS, option
from gpuherd.core.env_vars import check_variable
from gpuherd.core.idspec import gpu_index_list
from gpuherd.core.log_caps import sent_log_cap
from gpuherd.core.output_files import template_problem
from gpuherd.core.sweep_names import SweepError
from gpuherd.core.units import memory_amount, parse_duration
from gpuherd.core.when import parse_begin
from gpuherd.errors import InvalidValue
from gpuherd.submission_text import field as named_field
from gpuherd.submission_text import reject_reserved_names


@dataclass(frozen=True)
class SubmitOptions:
    """What a sweep file sets of the options applied to every job of the sweep, in units
    (bytes, seconds, epoch seconds); what it leaves out is the flag's default."""

    gpus: int = 1
    only_gpus: tuple[int, ...] = ()
    mem: int | None = None
    """Bytes per GPU."""
    ram: int | None = None
    oom_retry: bool = False
    exclusive: bool = False
    priority: int = 0
    retries: int | None = None
    """None: the daemon's `config retries`."""
    retry_delay: float | None = None
    timeout: float | None = None
    """Seconds per attempt."""
    max_log_size: int | None = None
    """Bytes; 0: none (no cap); None: the daemon's `config max-log-size`."""
    no_output_timeout: float | None = None
    on_no_output: OnNoOutput = "flag"
    grace: float | None = None
    """None: the daemon's `config grace`."""
    hold: bool = False
    begin: float | None = None
    """Epoch seconds, from the file's time as it was read (`+2h`: two hours from then)."""
    project: str | None = None
    max_parallel: int | None = None
    order: Order = "given"
    cwd: str | None = None
    """Absolute; None: the submitter's working directory."""
    env: Mapping[str, str] = field(default_factory=dict)
    output: str | None = None
    """As --output gives it: the daemon takes it from the jobs' working directory."""
    error: str | None = None


_TIME_FORMS = "'22:00', '+2h', '2026-11-26T02:00'"


def _ids_on_the_command_line(flag: str) -> str:
    return (
        f"job ids are given on the command line ({flag} 12, or {flag} last): they name jobs"
        " of one queue at one moment, and a sweep file is submitted again later"
    )


COMMAND_LINE_ONLY = {
    **{kind: _ids_on_the_command_line(option(kind)) for kind in KINDS},
    "force": "given on the command line (--force): it runs the done points again, once",
    "yes": "given on the command line (--yes): it confirms one submission of many points",
    "dry_run": "given on the command line (--dry-run): it lists the commands, once",
}
"""Flags of `gpuherd sweep` a sweep file refuses, and why (in the file's error line)."""

_ONE_CHOICE = ({"hold", "begin"}, {"on_no_output", "kill_on_no_output"})
"""Options that are one choice: held until released, or until a time (the daemon refuses
both); whether a stalled job is killed (Python's two spellings)."""


def kept_options(options: SubmitOptions, given: Iterable[str]) -> dict[str, Any]:
    """The file's options that the ones `given` (a flag, a keyword) leave standing: one given
    replaces the file's key of its name and those of its choice (`--begin +1h` over a file's
    `hold: true` starts the points then, where both would be refused)."""
    replaced = set(given)
    for choice in _ONE_CHOICE:
        if replaced & choice:
            replaced |= choice
    return {k: v for k, v in asdict(options).items() if k not in replaced}


def _true_or_false(value: Any) -> bool:
    """A switch's value: true or false, nothing else (an unquoted `yes` is the text 'yes',
    as YAML 1.2 reads it: sweepfile_text.py)."""
    if isinstance(value, bool):
        return value
    raise ValueError(f"give true or false, not {value!r}")


Switch = Annotated[bool, BeforeValidator(_true_or_false)]
"""A sweep file's true-or-false key (`hold`, `exclusive`, `shuffle`, ...)."""


class FileOptions(BaseModel):
    """The options' keys of a sweep file (sweepfile._File adds the sweep's own). Validated
    with `context={"folder": the file's folder}`, for a relative `cwd`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpus: StrictInt = Field(1, ge=0, le=64)  # as --gpus (a file's 65 passed a dry run)
    only_gpus: Any = ()
    mem: Any = None
    ram: Any = None
    oom_retry: Switch = False
    exclusive: Switch = False
    priority: StrictInt = 0
    retries: StrictInt | None = Field(None, ge=0)
    retry_delay: Any = None
    timeout: Any = None
    max_log_size: Any = None
    no_output_timeout: Any = None
    on_no_output: OnNoOutput = "flag"
    grace: Any = None
    hold: Switch = False
    begin: Any = None
    project: StrictStr | None = None
    max_parallel: StrictInt | None = Field(None, ge=1)
    order: Order = "given"
    cwd: StrictStr | None = None
    env: dict[StrictStr, Any] = {}
    output: StrictStr | None = None
    error: StrictStr | None = None

    def submit_options(self) -> SubmitOptions:
        return SubmitOptions(**{name: getattr(self, name) for name in FileOptions.model_fields})

    @field_validator("only_gpus")
    @classmethod
    def _only_gpus(cls, value: Any) -> tuple[int, ...]:
        return tuple(gpu_index_list(value))

    @field_validator("mem", "ram")
    @classmethod
    def _size(cls, value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, int | str) and not isinstance(value, bool):
            return memory_amount(value)  # `mem: 10` is 10 bytes: refused, as --mem 10
        raise ValueError(f"invalid size {value!r}: use a value like 24GiB")

    @field_validator("max_log_size")
    @classmethod
    def _log_cap(cls, value: Any) -> int | None:
        if value is None:
            return None
        if isinstance(value, int | str) and not isinstance(value, bool):
            return sent_log_cap(str(value))
        raise ValueError(f"invalid size {value!r}: use a value like 10GiB, or none")

    @field_validator("retry_delay", "timeout", "no_output_timeout", "grace")
    @classmethod
    def _duration(cls, value: Any) -> float | None:
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return parse_duration(str(value))
        if isinstance(value, str):
            return parse_duration(value)
        raise ValueError(f"invalid duration {value!r}: use a value like 90s, 2h, 1h30m")

    @field_validator("begin")
    @classmethod
    def _begin(cls, value: Any, info: ValidationInfo) -> float | None:
        if value is None:
            return None
        if info.data.get("hold"):  # (`hold` is validated first: it is declared first)
            raise ValueError(
                "hold: true and begin are one choice, held until released (gpuherd release)"
                " or until a time (a job cannot have both): keep one of them"
            )
        if not isinstance(value, str):  # a number: JSON's 1320, YAML's 2200
            raise ValueError(f"{value!r} is not a time: give it as --begin takes it: {_TIME_FORMS}")
        return parse_begin(value, time.time(), "time")

    @field_validator("cwd")
    @classmethod
    def _cwd(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        folder = (info.context or {}).get("folder", os.getcwd())
        if not value.strip():
            raise ValueError("empty: give a folder ('.' is the sweep file's own)")
        path = os.path.realpath(os.path.join(folder, os.path.expanduser(value)))
        if not os.path.isdir(path):
            raise ValueError(
                f"{value!r} is not a folder ({path}): give the folder the jobs run in"
                " (a relative one is taken from the sweep file's folder)"
            )
        return path

    @field_validator("output", "error")
    @classmethod
    def _output(cls, value: str | None) -> str | None:
        if value is not None and (problem := template_problem(value)):
            raise ValueError(problem)  # (its folder: checked where the jobs' cwd is known)
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, Any]) -> dict[str, str]:
        """Each entry checked as the daemon checks an --env's, and refused at its own key
        (`env.GPUHERD_JOB_ID`, SweepError's loc): the daemon named `env (--env)`, never typed,
        and a --dry-run, which asks no daemon, took it."""
        for key, item in value.items():
            at = (key,) if key else ()  # (`env.: ''` named no key: the message quotes it)
            if not isinstance(item, str | int | float) or isinstance(item, bool):
                raise SweepError(f"give a string or a number, not {as_written(item)}", at)
            try:
                check_variable(key, str(item))
                reject_reserved_names("", {key: str(item)})
            except InvalidValue as exc:  # (its words name the flag: `env (--env): ...`)
                raise SweepError(str(exc).removeprefix(f"{named_field('env')}: "), at) from None
            except ValueError as exc:
                raise SweepError(str(exc), at) from None
        return {key: str(item) for key, item in value.items()}


def as_written(value: Any) -> str:
    """A value as a sweep file writes it (true, not True), or its kind if it is a container."""
    if isinstance(value, Mapping | list):
        return "a mapping" if isinstance(value, Mapping) else "a list"
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    return repr(value)
