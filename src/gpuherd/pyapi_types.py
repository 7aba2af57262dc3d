"""The kind of value each of the Python API's job options is (`submit`, `sweep`, `edit`,
`jobs`' filters), checked before anything is sent: the daemon checks them strictly too, but
answers in pydantic's words ("invalid request: jobs.0.name: Input should be a valid
string"), naming neither the keyword as it was given nor what to give. And their text read
(`read_value`: "2h", "10GiB"), refused naming the keyword, in the CLI's words."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gpuherd.core.int64 import beyond, holds
from gpuherd.core.units import MissingUnit
from gpuherd.errors import DaemonError, HerdError, InvalidValue


class WrongType(HerdError, TypeError):
    """An option of the wrong kind: a TypeError, as Python's own for a wrong argument, and a
    HerdError (one line). Options checked where they are read (output=, cwd=, env=) raise it
    too, so that one `except` catches every option of the wrong kind."""


class WrongValue(InvalidValue, ValueError):
    """An option's text the API reads that is not one it takes (`timeout="2 hours"`,
    `mem=10`): an InvalidValue (one line naming the keyword, in the CLI's words), and a
    ValueError, as Python's own for a wrong value (and as these raised before: the parsers'
    bare ValueError, which named no keyword)."""


class GpusRefused(WrongValue, DaemonError):
    """connect()'s `gpus` or `fake_gpus` (or GPUHERD_FAKE_GPUS) that no daemon start takes
    (`fake_gpus=0`, `-1`, `100000`), refused before any daemon is started, in `gpuherd daemon
    start`'s words (gpus/choice.py, which both use): an InvalidValue, as the API's other bad
    values are; still a DaemonError, as it was raised before (code catching that works on)."""


class WrongKindOfNumber(WrongType, InvalidValue):
    """A count of the wrong kind (`herd.jobs(limit="5")`, `job.logs(lines="5")`): a WrongType
    (a TypeError), as every other option of the wrong kind is, and still an InvalidValue, as
    it was raised before (code that catches that goes on working)."""


_WANTED = {
    "text": "text (a str)",
    "whole": "a whole number (an int)",
    "size": "a size: bytes (an int) or text ('10GiB')",
    "seconds": "seconds (an int or a float), text ('2h') or a timedelta",
    "flag": "True or False",
}
_SWEEP_FLAGS = ("shuffle", "force", "yes", "dry_run", "task")  # (Herd.sweep's own)
_KINDS = {
    "text": ("name", "project", "command", "sweep"),
    "whole": ("gpus", "priority", "retries", "max_parallel", "samples", "seed"),
    "size": ("mem", "ram", "max_log_size"),
    "seconds": ("timeout", "grace", "retry_delay", "no_output_timeout"),
    "flag": ("hold", "exclusive", "oom_retry", "kill_on_no_output", *_SWEEP_FLAGS),
}
KIND_OF = {key: kind for kind, keys in _KINDS.items() for key in keys}
"""The options whose kind is checked here, each with its kind; the others are checked where
they are read (after=, env=, begin=, only_gpus=, output=...)."""


def check_types(options: Mapping[str, Any]) -> None:
    """WrongType for the first option of KIND_OF (None: not given) not of its kind, sizes and
    durations as the API sends them (text and timedeltas made numbers already)."""
    for key, value in options.items():
        if key == "env" and isinstance(value, Mapping):  # (its kinds: pyapi_values.env_overrides)
            refuse_nul(value)
        kind = KIND_OF.get(key)
        if value is None or kind is None:
            continue
        if not _is(kind, value):
            raise WrongType(f"{key} is {_WANTED[kind]}, got {as_given(value)}")
        if kind == "whole" and not holds(value):  # (the daemon's words named `jobs.0.priority`)
            raise WrongValue(f"{key} {value} {beyond(value)}")


def refuse_nul(env: Mapping[Any, Any]) -> None:
    """WrongValue for an `env=` value holding a NUL byte, naming `env` as given (the daemon's
    refusal named its HTTP field, env_overrides)."""
    for name, value in env.items():
        if isinstance(value, str) and "\0" in value:
            raise WrongValue(
                f"env: a NUL byte in {name}'s value: remove it (no program can receive it)"
            )


def as_given(value: Any) -> str:
    """A value as a WrongType names what was given: `['A=1'] (list)`."""
    return f"{value!r} ({type(value).__name__})"


def _is(kind: str, value: Any) -> bool:
    if kind == "text":
        return isinstance(value, str)
    if kind == "flag":
        return isinstance(value, bool)
    if isinstance(value, bool):  # (an int to Python, never a number to the daemon)
        return False
    return isinstance(value, int) or (kind == "seconds" and isinstance(value, float))


def read_value(key: str, parse: Callable[[Any], Any], value: Any) -> Any:
    """`parse(value)`, or WrongValue naming `key` in the CLI's words (`timeout: invalid
    duration '2 hours': use ...`, as `--timeout: invalid duration ...`): the parser's bare
    ValueError named no keyword, and was no HerdError as the API's other refusals are."""
    try:
        return parse(value)
    except MissingUnit as exc:  # as `--mem 10 is 10 bytes: give a unit, e.g. --mem 10GiB (...)`
        raise WrongValue(
            f"{key}={value!r} is {exc.number} bytes: give a unit, e.g. {key}='{exc.example}' "
            "(a number without one is bytes, taken from 1 MiB up)"
        ) from None
    except ValueError as exc:
        raise WrongValue(f"{key}: {exc}") from None
