"""Sweep files (YAML, TOML or JSON) read into a SweepSpec (GPU Task Scheduler config dicts:
core/sweep_config.py, re-exported here).

Every error is one line: `file:line: what is wrong` (the line where YAML can tell it; TOML
gives the key path only, but for its syntax errors). A file is at most MAX_FILE_BYTES, and its
values are checked as it is read (core/sweep_values.py: JSON's types, nesting, and size with
aliases expanded).
`results_dir` is kept as written (relative paths are the caller's to resolve, against the
working directory the jobs run in); it defaults to `results/{sweep}` (SweepSpec.results_path:
the sweep's name, also when --name renames it), and `name` to the file's stem. YAML reads
numbers as YAML 1.2 does (`1e-5` a number, `22:00` text), and keeps a whole number written
otherwise than in plain decimal digits as the text written (`007`, `0x1F`, `+5`:
sweepfile_text.py).
The jobs' options (gpus, ram, hold, cwd, ...) are sweepfile_options.py's."""

from __future__ import annotations

import codecs
import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from gpuherd.core.int64 import beyond, holds
from gpuherd.core.near_names import did_you_mean
from gpuherd.core.sweep import DistKind, Distribution, SweepError, SweepSpec, check_exclude
from gpuherd.core.sweep_config import SweepFileError as SweepFileError
from gpuherd.core.sweep_config import from_config as from_config
from gpuherd.core.sweep_config import wandb_config
from gpuherd.core.sweep_fixed import unused_fixed
from gpuherd.core.sweep_spec import EMPTY_NAME, SWEEP_FIELD
from gpuherd.core.sweep_values import check_values
from gpuherd.not_utf8 import not_utf8
from gpuherd.sweepfile_options import COMMAND_LINE_ONLY, FileOptions, Switch, as_written
from gpuherd.sweepfile_options import SubmitOptions as SubmitOptions
from gpuherd.sweepfile_places import dotted, place, real_loc
from gpuherd.sweepfile_text import MAX_FILE_BYTES as MAX_FILE_BYTES
from gpuherd.sweepfile_text import parse_text, too_large


@dataclass(frozen=True)
class SweepFile:
    path: str
    spec: SweepSpec
    options: SubmitOptions
    text: str = ""
    """As read: where() finds a key's line in it."""

    def where(self, key: str) -> str:
        """`path:line` of the file's `key` (`path` where the format tells no line), as the
        file's own errors name it: for a value checked later (its output's folder)."""
        return place(self.path, self.text, (key,))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Separators(_Strict):
    item: StrictStr = ","
    kv: StrictStr = "="


class _Random(_Strict):
    choice: list[Any] | None = None
    uniform: list[float] | None = None
    loguniform: list[float] | None = None
    int_: list[StrictInt] | None = Field(None, alias="int")

    @model_validator(mode="before")
    @classmethod
    def _a_mapping(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return value
        given = "a list" if isinstance(value, list) else repr(value)
        raise ValueError(
            f"{given} is not a distribution: give choice: [values] (drawn from them), or"
            " uniform, loguniform or int: [low, high]"
        )

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        self.distribution()
        return self

    def distribution(self) -> Distribution:
        kinds: tuple[DistKind, ...] = ("choice", "uniform", "loguniform", "int")
        values = (self.choice, self.uniform, self.loguniform, self.int_)
        given = [(k, list(v)) for k, v in zip(kinds, values, strict=True) if v is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of choice, uniform, loguniform, int")
        kind, value = given[0]
        if kind == "choice":
            return Distribution("choice", values=tuple(value))
        if len(value) != 2:
            raise ValueError(f"{kind}: give [low, high], got {value!r}")
        return Distribution(kind, low=float(value[0]), high=float(value[1]))


class _File(FileOptions):
    """A sweep file: the sweep's keys, and the options of its jobs (FileOptions)."""

    name: StrictStr | None = None
    command: StrictStr | None = None
    results_dir: StrictStr | None = None
    fixed: dict[StrictStr, Any] = Field(default_factory=dict)
    grid: list[dict[StrictStr, list[Any]]] | None = None
    random: dict[StrictStr, _Random] = Field(default_factory=dict)
    samples: StrictInt | None = Field(None, ge=1)
    seed: StrictInt | None = None
    shuffle: Switch = False
    exclude: Any = None
    separators: _Separators = _Separators()

    @field_validator("grid", mode="before")
    @classmethod
    def _grid_list(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return [value]
        if isinstance(value, list) and not value:
            raise ValueError("empty list: give a mapping of parameter lists, or a list of them")
        return value

    @field_validator("seed")
    @classmethod
    def _seed(cls, value: int | None) -> int | None:
        """One of the daemon's 64-bit numbers, as --seed and Python's seed= take it: one
        past them was submitted and recorded, where herd.sweep() refused it."""
        if value is not None and not holds(value):
            raise ValueError(f"{value} {beyond(value)}")
        return value

    @field_validator("exclude")
    @classmethod
    def _exclude(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(p, Mapping) and p for p in value):
            return value
        raise ValueError("give a list of partial points (mappings) or an expression string")


_SWEEP_KEYS = [key for key in _File.model_fields if key not in FileOptions.model_fields]
_KEYS = {(): [*_SWEEP_KEYS, *FileOptions.model_fields], ("separators",): ["item", "kv"]}


def load_sweep(path: str | Path) -> SweepFile:
    """Read and check a sweep file (`.yaml`, `.yml`, `.toml` or `.json`)."""
    where = str(path)
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
        # Its bytes counted: only the text's characters were, and a larger file with a byte
        # order mark or non-ASCII text was cut at the limit, its first part read as the file.
        if len(raw) > MAX_FILE_BYTES:
            raise too_large(where)
        # A byte order mark (Windows editors, PowerShell's Out-File -Encoding utf8) is not
        # text: YAML skipped it, but JSON and TOML refused the file for it.
        text = raw.removeprefix(codecs.BOM_UTF8).decode("utf-8")
    except OSError as exc:
        # strerror alone: the OSError's own text repeats the path as Python spells it
        why = exc.strerror or str(exc)
        raise SweepFileError(f"{where}: cannot read the sweep file: {why}") from None
    except UnicodeDecodeError as exc:  # (the BOM taken off: `at` counts from after it)
        at = exc.start + (len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0)
        raise SweepFileError(not_utf8(where, raw, at, "a sweep file")) from None
    loaded = parse_sweep(text, where)
    # A file without one expanded to empty commands (a dry run printed blank lines); a
    # SweepSpec may lack one only where a Python task gives it (sweep_from_config).
    if loaded.spec.command is None:
        raise SweepFileError(
            f"{where}: no command: give the command each point runs, with placeholders for"
            " the parameters (command: python train.py --lr {lr})"
        )
    # Here, where the file's line is known (the daemon checks a spec from Python too, which
    # may add fixed values of its own): not in parse_sweep, whose specs a task may run.
    if unused := unused_fixed(loaded.spec):
        raise SweepFileError(f"{place(where, loaded.text, unused.loc)}: {unused}")
    return loaded


def parse_sweep(text: str, path: str) -> SweepFile:
    """Check sweep file text; `path` names it in messages and picks the format by suffix."""
    data = parse_text(text, path)
    if not isinstance(data, dict):
        raise SweepFileError(f"{path}: a sweep file must be a mapping of keys (name, grid, ...)")
    for key in data:
        if why := COMMAND_LINE_ONLY.get(str(key).replace("-", "_")):
            raise SweepFileError(f"{place(path, text, (key,))}: {key}: {why}")
    if foreign := wandb_config(data):
        raise SweepFileError(f"{place(path, text, (foreign[0],))}: {foreign[1]}")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        check_values(data)
        model = _File.model_validate(data, context={"folder": folder})
        spec = _to_spec(model, Path(path).stem)
        check_exclude(spec)  # here, where the file's line is known, not when the daemon expands
    except ValidationError as exc:
        raise SweepFileError(_pydantic_problem(path, text, data, exc)) from None
    except SweepError as exc:
        raise SweepFileError(f"{place(path, text, exc.loc)}: {exc}") from None
    return SweepFile(path=path, spec=spec, options=model.submit_options(), text=text)


def _to_spec(model: _File, stem: str) -> SweepSpec:
    if model.name == "":  # refused, not taken for the stem: the file's default named
        raise SweepError(f"{EMPTY_NAME} (the file's name without its suffix, {stem})", ("name",))
    name = stem if model.name is None else model.name
    exclude = model.exclude
    return SweepSpec(
        name=name,
        command=model.command,
        # `results_dir: ""` is given, not left out: refused (SweepSpec), naming the line.
        results_dir=f"results/{SWEEP_FIELD}" if model.results_dir is None else model.results_dir,
        fixed=dict(model.fixed),
        grids=tuple({k: tuple(v) for k, v in grid.items()} for grid in model.grid or ()),
        random={k: r.distribution() for k, r in model.random.items()},
        samples=model.samples,
        seed=model.seed,
        shuffle=model.shuffle,
        exclude=tuple(exclude) if isinstance(exclude, list) else (),
        exclude_expr=exclude if isinstance(exclude, str) else None,
        item_sep=model.separators.item,
        kv_sep=model.separators.kv,
    )


# ---- error messages -------------------------------------------------------------------------


def _pydantic_problem(path: str, text: str, data: Any, exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = real_loc(first["loc"], data)
    shown_loc = loc
    if first["type"] == "extra_forbidden":
        parent = loc[:-1]
        known = _KEYS.get(tuple(str(p) for p in parent))
        if parent and parent[0] == "random":
            known = ["choice", "uniform", "loguniform", "int"]
        spelt = str(loc[-1]).replace("-", "_")  # `retry-delay`, as the flag is written
        if known and spelt != loc[-1] and spelt in known:
            message = f"unknown key {loc[-1]!r}: write {spelt} (a flag's name, _ for -)"
        else:
            # `gpu` for `gpus`; closer than difflib's 0.6: other tools' keys are near short
            # ones of ours at 0.6-0.7 (W&B's `parameters` to separators, `program` to ram).
            guess = did_you_mean(spelt, known, cutoff=0.75) if known else ""
            message = f"unknown key {loc[-1]!r}{guess}" + (
                f"; known keys: {', '.join(known)}" if known else ""
            )
        shown_loc = parent
    elif first["type"] == "value_error":
        error = first.get("ctx", {}).get("error", first["msg"])
        message = str(error)
        if isinstance(error, SweepError) and error.loc:  # (an entry's own key: env.SEED)
            loc = shown_loc = (*loc, *error.loc)
    elif first["type"] == "list_type" and (option := _option_in_grid(loc)):
        message = _option_in_grid_words(option, path)
    elif first["type"] in _NUMBER_ERRORS and _reads_as_number(first["input"]):
        message = (  # `gpus: 01`, `seed: 0x1F`, `priority: +5`: YAML keeps them as text
            f"{first['input']!r} is text, not a number: write it in decimal digits, unquoted,"
            " without a leading zero or a plus sign (a sweep file keeps 007, +5, 0x1F and"
            " 1_000 as written)"
        )
    else:
        message = _in_flag_words(first, loc)
    more = f" ({len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    more = more if len(errors) > 1 else ""
    shown = f"{dotted(shown_loc, data)}: " if shown_loc else ""
    return f"{place(path, text, loc)}: {shown}{' '.join(message.split())}{more}"


def _in_flag_words(error: Any, loc: Sequence[str | int]) -> str:
    """pydantic's `Input should be a valid integer`, said as the flags' own checks say it:
    what the key takes and what was given (`retries: -1 is out of range: use a whole number
    from 0 up`, as --retries -1 is refused)."""
    kind, given = error["type"], error.get("input")
    shown = as_written(given)
    if kind in ("int_type", "int_parsing"):
        return f"give a whole number, not {shown}"
    if kind in ("greater_than_equal", "less_than_equal"):
        # Both ends, where the key has both (the error names only the one crossed).
        field = _File.model_fields.get(str(loc[0])) if len(loc) == 1 else None
        bounds = field.metadata if field else ()
        low = next((m.ge for m in bounds if hasattr(m, "ge")), error["ctx"].get("ge"))
        high = next((m.le for m in bounds if hasattr(m, "le")), error["ctx"].get("le"))
        span = f"from {low} " + (f"to {high}" if high is not None else "up")
        return f"{shown} is out of range: use a whole number " + (
            span if low is not None else f"up to {high}"
        )
    if kind == "literal_error":  # (on_no_output, order)
        return f"{shown} is not a choice: use {error['ctx']['expected']}"
    if kind == "dict_type":
        return f"give a mapping (one `name: value` a line, or {{name: value}}), not {shown}"
    if kind == "list_type":  # (one value as the file would write it: ["1h"], not [1h])
        one = "" if isinstance(given, Mapping) else f" ([{_as_json(given)}] for one value)"
        return f"give a list{one}, not {shown}"
    if kind == "string_type":
        quoted = (
            ""
            if isinstance(given, Mapping | list)
            else f" (quoted, '{given}', if it reads as something else)"
        )
        return f"give text{quoted}, not {shown}"
    return str(error["msg"])


def _option_in_grid(loc: Sequence[str | int]) -> str | None:
    """The file's key (a job option, `timeout`, or the sweep's, `seed`) that a grid's key not
    given a list is named after, if it is one: surely one written below `[grid]` in TOML,
    whose keys all belong to the grid that far (or indented under `grid:` in YAML). It was
    told to give a list ([1h] for one value), which made it a parameter of the points, not
    their option, without a word."""
    key = loc[-1] if len(loc) > 1 and loc[0] == "grid" else None
    return key if isinstance(key, str) and key in _KEYS[()] else None


def _option_in_grid_words(key: str, path: str) -> str:
    kind = "a job option" if key in FileOptions.model_fields else "a key of the sweep"
    if Path(path).suffix.lower() == ".toml":
        where = "above [grid] (every key below [grid] is the grid's)"
    elif Path(path).suffix.lower() == ".json":
        where = 'outside "grid", beside "command"'
    else:
        where = "at the top level, as command is, not indented under grid"
    return f"{key} is {kind}, not a parameter: put it {where}"


def _as_json(value: Any) -> str:
    """A value as the three formats all write it (`"1h"`, `2`, `true`)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # (a date of YAML's or TOML's: no JSON for it)
        return str(value)


_NUMBER_ERRORS = ("int_type", "int_parsing", "float_type", "float_parsing")
"""pydantic's errors for a value that is not the number a key takes."""


def _reads_as_number(value: Any) -> bool:
    """Whether `value` is text that Python reads as a number (`'007'`, `'0x1F'`, `'1_000'`):
    a whole number a sweep file wrote as YAML keeps as the text written (sweepfile_text)."""
    if not isinstance(value, str):
        return False
    for read in (int, functools.partial(int, base=0), float):
        try:
            read(value)
        except ValueError:
            continue
        return True
    return False
