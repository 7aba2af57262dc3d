"""A task's parameters checked at submit for what JSON would change or cannot carry.

Parameters travel as JSON (the job's command line, params.json), whose keys are text:
`{1: "a", "1": "b"}` reached the function as `{'1': 'b'}`, an int key turned to text and a
value dropped where two collided, without a word. A key that is not a str is refused, naming
the parameter and the key. So is a value nested deeper than MAX_DEPTH: numpy's conversion and
json.dumps recurse, and a value nested 100,000 deep raised a bare RecursionError traceback.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from gpuherd.core.text import ascii_digits
from gpuherd.errors import HerdError
from gpuherd.pyapi_types import WrongType, WrongValue
from gpuherd.pyapi_values import plain

if TYPE_CHECKING:  # (the type alone: pyapi.py calls check_sweep)
    from gpuherd.core.sweep import SweepSpec

MAX_DEPTH = 100
"""Levels of lists and dicts inside each other a parameter may have: a fixed bound, where
Python's recursion limit gave way at a depth that depends on the caller's stack."""
_JSON_KEYS = (int, float, bool, type(None))
"""Keys json.dumps writes as text (a str key stays as it is)."""
_NESTED = (dict, list, tuple)


def checked(params: Mapping[str, Any], function: str) -> dict[str, Any]:
    """`params` with numpy's values as Python's (pyapi_values.plain), each checked: WrongValue
    for one nested too deep, WrongType for a dict key (at any depth) that is not a str."""
    values = {}
    for name, value in params.items():
        try:
            values[name] = plain(value)
        except RecursionError:  # (deeper than the stack holds: MAX_DEPTH would refuse it)
            raise _too_deep(str(name)) from None
        _check(values[name], str(name), function)
    return values


def check_sweep(spec: SweepSpec, task: bool) -> SweepSpec:
    """`spec`, its fixed values and each grid's values checked so, for a task's sweep
    (`task`) and a command's alike: a command's values travel as JSON to the daemon too,
    which wrote `{1: "a"}` in the command and params.json as {"1": "a"}, and kept one
    value of `{1: "a", "1": "b"}`, without a word (a sweep file's are checked as read:
    core/sweep_values.check_values)."""
    function = "the task" if task else "the command"
    for name, value in spec.fixed.items():
        _check(value, f"fixed[{name!r}]", function)
    for grid in spec.grids:
        for name, values in grid.items():
            _check(list(values), name, function)
    return spec


def _check(value: Any, name: str, function: str) -> None:
    """Walk `value`'s lists and dicts with a stack, not recursion (a value nested 100,000
    deep is what it must survive); the path to a key refused is made only then."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 1, ())]
    while stack:
        item, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(name)
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    where = name + "".join(f"[{_shown(k)}]" for k in path)
                    raise _key_refusal(where, key, function)
            steps: Iterable[tuple[Any, Any]] = item.items()
        elif isinstance(item, list | tuple):
            if not any(issubclass(kind, _NESTED) for kind in set(map(type, item))):
                continue  # (a long list of numbers: its types, looked at in C, say enough)
            steps = enumerate(item)
        else:
            continue
        stack += [(v, depth + 1, (*path, k)) for k, v in steps if isinstance(v, _NESTED)]


def _key_refusal(where: str, key: Any, function: str) -> WrongType:
    kind = type(key).__name__
    try:  # (the text json.dumps makes of it: 'true' of True, 'null' of None)
        text = json.dumps({key: 0})[1:].rpartition(": 0")[0] if isinstance(key, _JSON_KEYS) else ""
        fate = f"would reach {function} as {json.loads(text)!r}"
    except ValueError:  # an int too long to write, or a key JSON does not take at all
        fate = f"cannot reach {function}"
    return WrongType(
        f"{where}: key {_shown(key)} ({kind}) {fate} (parameters travel as JSON, whose keys "
        "are text): use str keys"
    )


def _too_deep(name: str) -> WrongValue:
    return WrongValue(
        f"{name}: nested more than {MAX_DEPTH} levels deep (lists and dicts inside each "
        "other, or one inside itself), more than a task's parameter may be (parameters "
        "travel as JSON): pass a flatter value, or write it to a file and pass its path"
    )


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int of more digits than Python writes
        return f"<an {type(value).__name__} too long to show>"
    return text if len(text) <= 40 else text[:37] + "..."


# ---- values JSON cannot carry, or the job cannot read ------------------------------------------

_ADVICE = (
    (os.PathLike, "pass it as text: str(path)"),
    ((set, frozenset), "pass a list: sorted(...) or list(...)"),
    ((bytes, bytearray), "pass text (.decode()), or write it to a file and pass its path"),
)


def params_text(params: Mapping[str, Any], function: str) -> str:
    """`params` (checked) as JSON; WrongType naming the parameter (and where in it) of a value
    JSON cannot carry, and what to give (it was `HerdError: task parameters must be JSON
    values: Object of type PosixPath is not JSON serializable`); WrongValue for an int of
    more digits than the job reads from text (json.dumps's refusal said to call
    sys.set_int_max_str_digits(), after which the submit passed and the job failed)."""
    limit = _job_digits()
    try:
        text = json.dumps(params)
    except (TypeError, ValueError) as exc:
        _refuse(params, function, limit)
        raise HerdError(f"task parameters must be JSON values: {exc}") from None
    # (a run of digits that long may be text's: the values are looked at only then; a run
    # is looked at from its start alone, so that runs just short of it cost no more)
    if limit and len(text) > limit and re.search(rf"(?<!\d)\d{{{limit + 1}}}", text):
        _refuse(params, function, limit)
    return text


def _job_digits() -> int:
    """The most digits of an int the job's Python reads (0: no limit): its default, unless
    PYTHONINTMAXSTRDIGITS (which the job's environment has as this one's) says otherwise."""
    given = os.environ.get("PYTHONINTMAXSTRDIGITS", "")
    return int(given) if ascii_digits(given) else sys.int_info.default_max_str_digits


def _refuse(params: Mapping[str, Any], function: str, limit: int) -> None:
    """Raise for the first value of `params` JSON cannot carry, or too long an int, if any."""
    stack: list[tuple[Any, str]] = [(v, str(k)) for k, v in reversed(list(params.items()))]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack += [(v, f"{where}[{_shown(k)}]") for k, v in reversed(list(value.items()))]
        elif isinstance(value, list | tuple):
            stack += [(v, f"{where}[{i}]") for i, v in reversed(list(enumerate(value)))]
        elif isinstance(value, int) and limit and _digits_over(value, limit):
            raise WrongValue(
                f"{where}: an int of more than {limit} digits cannot reach {function} (the job "
                f"reads its parameters as JSON, and Python reads no int of more than {limit} "
                "digits from text): pass it as hex text, hex(n), and read it with int(text, 16)"
            )
        elif not isinstance(value, str | int | float | type(None)):
            advice = next((a for kind, a in _ADVICE if isinstance(value, kind)), None)
            raise WrongType(
                f"{where}: {_shown(value)} ({type(value).__name__}) cannot reach {function} "
                "(parameters travel as JSON: numbers, text, True, False, None, and lists and "
                "dicts of them): "
                + (advice or "pass one of those, or write it to a file and pass its path")
            )


def _digits_over(value: int, limit: int) -> bool:
    return bool(abs(value) >= 10**limit)  # (more than `limit` digits; not written out to count)


__all__ = ["MAX_DEPTH", "check_sweep", "checked", "params_text"]
