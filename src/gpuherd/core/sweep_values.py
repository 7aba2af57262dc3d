"""What a sweep file's values may be, and how much of them: checked as the file is read,
before anything is expanded, sent to the daemon or written to params.json.

Values are JSON's: strings, numbers, booleans, null, and lists or mappings of them, a
mapping's keys text (a date or a set cannot be sent; nor NaN or an infinity, which standard
JSON cannot hold: written as text, "nan" and "inf" reach the command just the same; nor a
key `1`, which JSON would turn to "1" without a word). A file nests at most MAX_DEPTH
levels of lists and mappings and holds at most MAX_VALUES values, an alias counting each
time it is used: nine nested YAML anchors fit in 500 bytes and expand to 387 million strings.

Also here: check_finite (the daemon's check of any spec), json_safe (non-finite numbers read
from a job's files, as text) and alike_values (values that read the same: one point).

Pure: no I/O. Part of the sweep core (core/sweep.py).
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpuherd.core.sweep_expr import unmatched_exclusions
from gpuherd.core.sweep_names import SweepError, value_text
from gpuherd.core.units import and_list

if TYPE_CHECKING:  # sweep_spec checks its values here
    from gpuherd.core.sweep_spec import SweepSpec

MAX_DEPTH = 32
"""Levels of lists and mappings, the file's top-level mapping included."""
MAX_VALUES = 200_000
"""Values (and lists and mappings) in a file, each alias counted as what it stands for."""
ALLOWED = "values must be strings, numbers, booleans, or lists or mappings of them"
TOO_DEEP = f"nested too deeply: a sweep file holds at most {MAX_DEPTH} levels of lists and mappings"
TOO_MANY = (
    f"more than {MAX_VALUES:,} values (an alias counts each time it is used): "
    "a sweep file lists parameters and their values; narrow it, or split it into sweeps"
)

_SCALARS = (str, int, float, bool, type(None))


def check_values(data: Any) -> None:
    """SweepError (message and `loc` naming the key path) for the first value that JSON
    cannot carry (or a key it would change: one not text), or where the data nests too
    deeply, holds itself or grows too large."""
    _check(data, (), set(), [MAX_VALUES])


def _check(value: Any, loc: tuple[str | int, ...], above: set[int], left: list[int]) -> None:
    left[0] -= 1
    if left[0] < 0:
        raise SweepError(TOO_MANY)
    if isinstance(value, _SCALARS):
        _check_finite(value, loc)
        return
    if not isinstance(value, list | tuple | dict):
        raise SweepError(
            f"{_where(loc)}{_shown(value)} is {_kind(value)}: {ALLOWED}{_hint(value)}", loc
        )
    if id(value) in above:
        raise SweepError(
            f"{_where(loc)}holds itself (an alias inside its own anchor): {ALLOWED}", loc
        )
    if len(loc) >= MAX_DEPTH:
        raise SweepError(f"{_where(loc)}{TOO_DEEP}", loc)
    above.add(id(value))
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _key_refusal(loc, key)
            _check(item, (*loc, key), above, left)
    else:
        for i, item in enumerate(value):
            _check(item, (*loc, i), above, left)
    above.discard(id(value))


_KEY_KINDS = {
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null (YAML reads an unquoted null, ~ or empty key so)",
}
"""What a key that is no text is, said (a `true:` key the YAML loader refuses itself)."""


def _key_refusal(loc: tuple[str | int, ...], key: Any) -> SweepError:
    """A mapping's key that is not text, named with the path of its mapping (its own line:
    `loc` ends with the key as YAML wrote it, when it wrote it so): JSON sent an int or a
    boolean key on as text (`{1: a}` reached the command and params.json as {"1": "a"},
    `{1: a, "1": b}` as one of them) without a word, and cannot carry a date or a list."""
    kind = _KEY_KINDS.get(type(key)) or _kind(key)
    # A parameter's name (grid's, random's, fixed's own keys) of digits alone is refused
    # quoted too (sweep_names.check_key: `{0}` is a position): one step, not two.
    named = isinstance(key, int) and not isinstance(key, bool) and _names_parameters(loc)
    fix = f"name the parameter, e.g. p{key}" if named else "quote it to keep it as text"
    return SweepError(
        f"{_where(loc)}key {_shown(key)} is {kind}, not text: a mapping's keys must be text; {fix}",
        (*loc, str(key)),
    )


def _names_parameters(loc: tuple[str | int, ...]) -> bool:
    """Whether the mapping at `loc` is one whose keys are parameters' names."""
    return loc[:1] in (("grid",), ("random",), ("fixed",)) and all(
        isinstance(step, int) for step in loc[1:]
    )


def _where(loc: tuple[str | int, ...]) -> str:
    text = ""
    for step in loc:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return f"{text}: " if text else ""


def _kind(value: Any) -> str:
    if isinstance(value, datetime.datetime):
        return "a date and time"
    if isinstance(value, datetime.date):
        return "a date"
    if isinstance(value, datetime.time):
        return "a time"
    if isinstance(value, bytes | bytearray):
        return "binary data"
    return f"a {type(value).__name__}"


def _shown(value: Any) -> str:
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _hint(value: Any) -> str:
    if isinstance(value, datetime.date | datetime.time):
        return " (quote it to keep it as text)"
    return ""


# ---- non-finite numbers ---------------------------------------------------------------------


def _check_finite(value: Any, loc: tuple[str | int, ...]) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise SweepError(
            f"{_where(loc)}{value!r} is not a finite number (JSON has no NaN or Infinity):"
            f" quote it ('{value!r}') to pass it as text",
            loc,
        )


def check_finite(data: Any, loc: tuple[str | int, ...] = ()) -> None:
    """SweepError naming the key path of the first NaN or infinity in `data` (a spec as
    JSON: a sweep's values are written to params.json and the database, standard JSON), `loc`
    being the path of `data` itself."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, loc)]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, Mapping):
            stack += [(v, (*loc, str(k))) for k, v in reversed(list(value.items()))]
        elif isinstance(value, list | tuple):
            stack += [(v, (*loc, i)) for i, v in reversed(list(enumerate(value)))]
        else:
            _check_finite(value, loc)


def _plain(value: Any) -> bool:
    """Whether JSON takes `value` as it is: text, a whole number, a finite float, a boolean
    or None (json_safe's quick way through a point's parameters and metrics)."""
    kind = type(value)
    return kind in _AS_THEY_ARE or (kind is float and math.isfinite(value))


_AS_THEY_ARE = frozenset({str, int, bool, type(None)})


def json_safe(value: Any) -> Any:
    """`value` with NaN and the infinities as the text "nan", "inf" and "-inf": what a job
    wrote (metrics.json) or an older gpuherd recorded, made standard JSON. A copy, even with
    nothing to change: what it was given may be kept (a file's parsed value)."""
    if type(value) is dict and all(map(_plain, value.values())):  # a point's own: all of them
        return dict(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, Mapping):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def metric_text(value: Any) -> str:
    """A metric that is not a number as a table cell shows it: text as it is, other JSON
    values as JSON (true, [0.5, 0.9]), none as nothing."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


# ---- values that read alike -----------------------------------------------------------------


def alike_values(spec: SweepSpec) -> list[str]:
    """A warning for each parameter of a grid with a value given more than once, and for each
    parameter with distinct values that read the same in commands and folder names (1 and
    "1", true and "True"): either is one point, the first one's. (A random choice's repeated
    values are its weights.) Also each `exclude` entry that matches no point: every caller
    of this (a submission, a dry run, the CLI's and Python's) says it too."""
    grids = [
        ("grid" if len(spec.grids) == 1 else f"grid[{i}]", key, values)
        for i, grid in enumerate(spec.grids)
        for key, values in grid.items()
    ]
    warnings = [
        f"{where}.{key}: {', '.join(parts)}: a value given more than once is one point"
        for where, key, values in grids
        if (parts := _repeated(values))
    ]
    lists = [*grids, *(("random", key, d.values) for key, d in spec.random.items())]
    for where, key, values in lists:
        groups: dict[str, dict[str, None]] = {}
        for value in values:
            groups.setdefault(value_text(value), {})[_as_json(value)] = None
        alike = [(text, list(shown)) for text, shown in groups.items() if len(shown) > 1]
        if alike:
            parts = [
                f"{and_list(shown)} {'both' if len(shown) == 2 else 'all'} read {text}"
                for text, shown in alike
            ]
            warnings.append(
                f"{where}.{key}: {'; '.join(parts)}: values that read the same are one point"
                " (the first one runs)"
            )
    return [*warnings, *unmatched_exclusions(spec.exclude, spec.grids, spec.fixed, spec.random)]


def _repeated(values: tuple[Any, ...]) -> list[str]:
    """`value 1 is given twice` for each value given more than once, as JSON spells it."""
    times: dict[str, int] = {}
    for value in values:
        shown = _as_json(value)
        times[shown] = times.get(shown, 0) + 1
    return [
        f"value {shown} is given {'twice' if n == 2 else f'{n:,} times'}"
        for shown, n in times.items()
        if n > 1
    ]


def _as_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
