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
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import yaml
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

from gpuherd.core.near_names import did_you_mean
from gpuherd.core.sweep import DistKind, Distribution, SweepError, SweepSpec, check_exclude
from gpuherd.core.sweep_config import SweepFileError as SweepFileError
from gpuherd.core.sweep_config import from_config as from_config
from gpuherd.core.sweep_config import wandb_config
from gpuherd.core.sweep_fixed import unused_fixed
from gpuherd.core.sweep_spec import EMPTY_NAME, SWEEP_FIELD
from gpuherd.core.sweep_values import check_values
from gpuherd.sweepfile_options import COMMAND_LINE_ONLY, FileOptions, Switch
from gpuherd.sweepfile_options import SubmitOptions as SubmitOptions
from gpuherd.sweepfile_text import MAX_FILE_BYTES as MAX_FILE_BYTES
from gpuherd.sweepfile_text import Loader, parse_text, too_large


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
        return _place(self.path, self.text, (key,))


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
    except (OSError, UnicodeDecodeError) as exc:
        # strerror alone: the OSError's own text repeats the path as Python spells it
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SweepFileError(f"{where}: cannot read the sweep file: {why}") from None
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
        raise SweepFileError(f"{_place(where, loaded.text, unused.loc)}: {unused}")
    return loaded


def parse_sweep(text: str, path: str) -> SweepFile:
    """Check sweep file text; `path` names it in messages and picks the format by suffix."""
    data = parse_text(text, path)
    if not isinstance(data, dict):
        raise SweepFileError(f"{path}: a sweep file must be a mapping of keys (name, grid, ...)")
    for key in data:
        if why := COMMAND_LINE_ONLY.get(str(key).replace("-", "_")):
            raise SweepFileError(f"{_place(path, text, (key,))}: {key}: {why}")
    if foreign := wandb_config(data):
        raise SweepFileError(f"{_place(path, text, (foreign[0],))}: {foreign[1]}")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        check_values(data)
        model = _File.model_validate(data, context={"folder": folder})
        spec = _to_spec(model, Path(path).stem)
        check_exclude(spec)  # here, where the file's line is known, not when the daemon expands
    except ValidationError as exc:
        raise SweepFileError(_pydantic_problem(path, text, data, exc)) from None
    except SweepError as exc:
        raise SweepFileError(f"{_place(path, text, exc.loc)}: {exc}") from None
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
    loc = _real_loc(first["loc"], data)
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
        message = str(first.get("ctx", {}).get("error", first["msg"]))
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
    shown = f"{_dotted(shown_loc, data)}: " if shown_loc else ""
    return f"{_place(path, text, loc)}: {shown}{' '.join(message.split())}{more}"


def _in_flag_words(error: Any, loc: Sequence[str | int]) -> str:
    """pydantic's `Input should be a valid integer`, said as the flags' own checks say it:
    what the key takes and what was given (`retries: -1 is out of range: use a whole number
    from 0 up`, as --retries -1 is refused)."""
    kind, given = error["type"], error.get("input")
    shown = _as_written(given)
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
    if kind == "list_type":
        one = "" if isinstance(given, Mapping) else f" ([{given}] for one value)"
        return f"give a list{one}, not {shown}"
    if kind == "string_type":
        quoted = (
            ""
            if isinstance(given, Mapping | list)
            else f" (quoted, '{given}', if it reads as something else)"
        )
        return f"give text{quoted}, not {shown}"
    return str(error["msg"])


def _as_written(value: Any) -> str:
    """A value as a sweep file writes it (true, not True), or its kind if it is a container."""
    if isinstance(value, Mapping | list):
        return "a mapping" if isinstance(value, Mapping) else "a list"
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    return repr(value)


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


def _real_loc(loc: Sequence[str | int], data: Any) -> tuple[str | int, ...]:
    """The steps of pydantic's `loc` that exist in the data (drops "[key]" and type tags)."""
    out: list[str | int] = []
    node = data
    for step in loc:
        found = isinstance(node, Mapping) and step in node
        if found or (isinstance(node, list) and isinstance(step, int) and step < len(node)):
            node = node[step]
        elif isinstance(node, Mapping) and isinstance(step, int):
            continue  # `grid` written as one mapping, checked as a list of one
        else:
            break
        out.append(step)
    return tuple(out)


def _dotted(loc: Sequence[str | int], data: Any) -> str:
    """`grid.lr`, `grid[1].lr`, `random.lr.int`: the key path as the user wrote it."""
    text = ""
    node = data
    for step in loc:
        if isinstance(node, Mapping):
            if isinstance(step, int):
                continue
            node = node.get(step)
        else:
            ok = isinstance(node, list) and isinstance(step, int) and step < len(node)
            node = node[step] if ok else None
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def _place(path: str, text: str, loc: Sequence[str | int]) -> str:
    """`path:line` for the deepest key of `loc` that the YAML text shows; else `path`."""
    if Path(path).suffix.lower() not in (".yaml", ".yml", ".json") or not loc:
        return path
    try:
        node = yaml.compose(text, Loader=Loader)  # a SafeLoader
    except yaml.YAMLError:
        return path
    line = None
    for step in loc:
        if isinstance(node, yaml.MappingNode):
            if isinstance(step, int):
                continue
            match = [(k, v) for k, v in node.value if getattr(k, "value", None) == step]
            if not match:
                break
            line, node = match[0][0].start_mark.line + 1, match[0][1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            if step >= len(node.value):
                break
            node = node.value[step]
            line = node.start_mark.line + 1
        else:
            break
    return f"{path}:{line}" if line is not None else path
