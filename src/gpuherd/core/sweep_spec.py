"""A sweep's spec: its parameters and how they vary, checked when built, and its JSON form.

Pure: no I/O. Part of core/sweep.py (which re-exports every public name here); expanding a
spec into points is there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass, field
from random import Random
from typing import Any, Literal

from gpuherd.core.int64 import beyond, holds
from gpuherd.core.near_names import did_you_mean
from gpuherd.core.sweep_expr import compile_expr
from gpuherd.core.sweep_names import (
    RESERVED,
    SweepError,
    check_key,
    check_seps,
    check_template,
    template_fields,
    value_text,
)
from gpuherd.core.sweep_values import check_finite

DistKind = Literal["choice", "uniform", "loguniform", "int"]
SWEEP_FIELD = "{sweep}"
"""In a results_dir, the sweep's name."""
EMPTY_NAME = "name: empty; give the sweep a name, or leave it out for the default one"
"""An empty name (a script's unset variable) is refused, never taken for the default one."""


@dataclass(frozen=True)
class Distribution:
    kind: DistKind
    values: tuple[Any, ...] = ()
    """For `choice`."""
    low: float = 0.0
    high: float = 0.0
    """Bounds for `uniform`, `loguniform` and `int` (both included for `int`)."""

    def __post_init__(self) -> None:
        bounds = f"[{self.low!r}, {self.high!r}]"
        if self.kind == "choice":
            if not self.values:
                raise SweepError("choice needs at least one value")
            return
        if self.kind not in ("uniform", "loguniform", "int"):
            raise SweepError(f"unknown distribution {self.kind!r}: use choice, uniform, ...")
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low <= self.high):
            raise SweepError(f"{self.kind}: needs finite bounds low <= high, got {bounds}")
        if self.kind == "loguniform" and self.low <= 0:
            raise SweepError(f"loguniform: bounds must be greater than zero, got {bounds}")
        if self.kind == "int" and not (
            float(self.low).is_integer() and float(self.high).is_integer()
        ):
            raise SweepError(f"int: bounds must be whole numbers, got {bounds}")

    def sample(self, rng: Random) -> Any:
        if self.kind == "choice":
            return rng.choice(self.values)
        if self.kind == "int":
            return rng.randint(int(self.low), int(self.high))
        if self.kind == "uniform":
            return rng.uniform(self.low, self.high)
        drawn = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        return min(max(drawn, self.low), self.high)

    def size(self) -> int | None:
        """How many distinct values it gives; None for a float range."""
        if self.kind == "choice":
            return len({value_text(v) for v in self.values})
        if self.kind == "int" or self.low == self.high:
            return int(self.high - self.low) + 1
        return None


@dataclass(frozen=True)
class SweepSpec:
    name: str
    command: str | None = None
    """The template; None for Python-task sweeps (then points carry no command)."""
    results_dir: str = f"results/{SWEEP_FIELD}"
    """Each sweep in a folder of its own by default: in a shared one, a sweep would take
    another's finished points with the same values for its own."""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    grids: tuple[Mapping[str, tuple[Any, ...]], ...] = ()
    """Each grid's Cartesian product, joined in order; () = one point of `fixed` alone."""
    random: Mapping[str, Distribution] = field(default_factory=dict)
    samples: int | None = None
    seed: int | None = None
    shuffle: bool = False
    exclude: tuple[Mapping[str, Any], ...] = ()
    """Partial points: a point matching every key of one of them is left out."""
    exclude_expr: str | None = None
    """A Python expression over the point's keys; points where it is true are left out."""
    item_sep: str = ","
    kv_sep: str = "="
    stored: InitVar[bool] = False
    """Read back from herd.db (spec_from_dict): one taken before a rule of names it breaks
    was made (check_key's) still shows; submitted again, it is refused."""

    def __post_init__(self, stored: bool) -> None:
        _validate(self, stored)

    @property
    def results_path(self) -> str:
        """`results_dir` with `{sweep}` replaced by the sweep's name: a sweep file that names
        no folder gives `results/{sweep}`, so renaming the sweep renames its folder."""
        return self.results_dir.replace(SWEEP_FIELD, self.name)

    @property
    def varying(self) -> tuple[str, ...]:
        """The keys any point varies, in declaration order (grids first, then random)."""
        return tuple(dict.fromkeys([*(k for g in self.grids for k in g), *self.random]))

    @property
    def needs_seed(self) -> bool:
        return self.shuffle or self.samples is not None


# ---- validation -----------------------------------------------------------------------------


FILE_SUFFIXES = (".yaml", ".yml", ".toml", ".json")
"""What a sweep file's name ends with (sweepfile.py reads them; the CLI and the Python API
tell a file from a command template by it)."""


def is_sweep_name(name: str) -> bool:
    """Whether a sweep may have this name: not empty, `.` or `..`, no '/', control characters
    or outer spaces (a name is a folder's, results/NAME, and a URL path segment's)."""
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and name.isprintable()
        and name == name.strip()
    )


def no_such_sweep(name: str, known: Iterable[str] = ()) -> str:
    """What a sweep's name that names no sweep gets, in one wording wherever it is found:
    the daemon's status and rm, and the Python API's get_sweep (before asking it); with the
    `known` sweep's name closest to it, if one is (`sweep status lsss` of a sweep `lss`)."""
    # (closer than difflib's 0.6: sweep names are the user's own words, and 'nope' was
    # taken for 'opened')
    guess = did_you_mean(name, known, cutoff=0.75)
    return f"no sweep named {name!r}{guess}: `gpuherd sweep ls` lists the sweeps"


def _validate(spec: SweepSpec, stored: bool) -> None:
    _check_name_and_folder(spec)
    check_seps(spec.item_sep, spec.kv_sep)
    for key, value in spec.fixed.items():
        check_key(key, "fixed", ("fixed", key), stored=stored)
        check_finite(value, ("fixed", key))
    _check_grids(spec, stored)
    if spec.samples is not None and spec.samples < 1:
        raise SweepError(f"samples: must be at least 1, got {spec.samples}", ("samples",))
    if spec.seed is not None and not stored and not holds(spec.seed):  # (taken, over HTTP)
        raise SweepError(f"seed: {spec.seed} {beyond(spec.seed)}", ("seed",))
    if spec.random and spec.samples is None:
        raise SweepError("random: distributions need `samples` (how many points)", ("random",))
    known = [*spec.fixed, *(k for k in spec.varying if k not in spec.fixed)]
    for i, partial in enumerate(spec.exclude):
        if not partial:
            raise SweepError(f"exclude[{i}]: empty; it would exclude every point", ("exclude", i))
        unknown = [k for k in partial if k not in known]
        if unknown:
            raise SweepError(
                f"exclude[{i}]: {unknown[0]} is not a parameter; parameters: {', '.join(known)}",
                ("exclude", i),
            )
    if spec.exclude_expr is not None:
        compile_expr(spec.exclude_expr, known)
    if spec.command is not None:
        if not spec.command.strip():
            raise SweepError(
                "command: empty; give the command to run for each point, with placeholders"
                ' such as "python train.py --lr {lr}"',
                ("command",),
            )
        check_template(spec.command, known)
        _check_coverage(spec)


def _check_name_and_folder(spec: SweepSpec) -> None:
    if not spec.name:
        raise SweepError(f"{EMPTY_NAME} (made from the command, or the task's name)", ("name",))
    if not is_sweep_name(spec.name):
        raise SweepError(
            f"name: {spec.name!r} must not be . or .., nor hold '/', control characters or "
            "outer spaces: name it with '-' or '_' in their place (lr-sweep)",
            ("name",),
        )
    if not spec.results_dir:  # (`results_dir=""`, a script's unset $DIR: it was the default)
        raise SweepError(
            "results_dir: empty; give the folder of the points' folders, or leave results_dir"
            " out (results/NAME)",
            ("results_dir",),
        )


def _check_grids(spec: SweepSpec, stored: bool) -> None:
    for i, grid in enumerate(spec.grids):
        where = "grid" if len(spec.grids) == 1 else f"grid[{i}]"
        if not grid:
            raise SweepError(f"{where}: empty; give each parameter a list of values", ("grid", i))
        for key, values in grid.items():
            check_key(key, where, ("grid", i, key), stored=stored)
            if not values:
                raise SweepError(f"{where}.{key}: empty list of values", ("grid", i, key))
            # As a sweep file's check says it: `grid.x[1]`, the key path the user wrote.
            check_finite(values, ("grid", key) if len(spec.grids) == 1 else ("grid", i, key))
    for key, distribution in spec.random.items():
        check_key(key, "random", ("random", key), stored=stored)
        check_finite(distribution.values, ("random", key, "choice"))
        if any(key in grid for grid in spec.grids):
            raise SweepError(f"random.{key}: {key!r} is also in grid", ("random", key))


def _check_coverage(spec: SweepSpec) -> None:
    """Every grid must give a value to every placeholder of the command."""
    used = set(template_fields(spec.command or "")) - set(RESERVED)
    for i, grid in enumerate(spec.grids):
        missing = sorted(used - set(grid) - set(spec.fixed) - set(spec.random))
        if missing:
            raise SweepError(
                f"command: placeholder {{{missing[0]}}} has no value in grid[{i}];"
                " add it there or to fixed",
                ("grid", i),
            )


# ---- as JSON --------------------------------------------------------------------------------


def spec_to_dict(spec: SweepSpec) -> dict[str, Any]:
    """The spec as JSON-ready data (spec_from_dict reads it back)."""
    return {
        "name": spec.name,
        "command": spec.command,
        "results_dir": spec.results_dir,
        "fixed": dict(spec.fixed),
        "grids": [{k: list(v) for k, v in grid.items()} for grid in spec.grids],
        "random": {
            key: {"kind": d.kind, "values": list(d.values), "low": d.low, "high": d.high}
            for key, d in spec.random.items()
        },
        "samples": spec.samples,
        "seed": spec.seed,
        "shuffle": spec.shuffle,
        "exclude": [dict(partial) for partial in spec.exclude],
        "exclude_expr": spec.exclude_expr,
        "item_sep": spec.item_sep,
        "kv_sep": spec.kv_sep,
    }


_SPEC_KEYS = tuple(spec_to_dict(SweepSpec(name="x")))
"""A spec's keys in JSON (POST /api/v1/sweeps's `spec`), in spec_to_dict's order."""


def spec_from_dict(data: Mapping[str, Any], *, stored: bool = False) -> SweepSpec:
    """A SweepSpec from spec_to_dict's shape; SweepError (with the key at fault) if invalid.
    `stored`: a sweep's as herd.db holds it (SweepSpec.stored)."""
    if not isinstance(data, Mapping):
        raise SweepError("spec: must be a JSON object")
    unknown = sorted(set(data) - set(_SPEC_KEYS), key=str)
    if unknown:
        raise SweepError(_unknown_key(unknown[0]), (unknown[0],))
    # The shapes are checked here, by name: dict() of a string or float() of a word raised
    # ValueError (an internal error over HTTP), and bool("no") made a sweep shuffled.
    grids = tuple(
        {
            str(k): tuple(_values(v, f"grids[{i}].{k}"))
            for k, v in _mapping(grid, f"grids[{i}]").items()
        }
        for i, grid in enumerate(_list(data.get("grids"), "grids"))
    )
    random = {
        str(k): _distribution(_mapping(d, f"random.{k}"), f"random.{k}")
        for k, d in _mapping(data.get("random"), "random").items()
    }
    shuffle = data.get("shuffle", False)
    if not isinstance(shuffle, bool):
        raise SweepError(f"shuffle: must be true or false, got {_json_kind(shuffle)}", ("shuffle",))
    # (a name too: str() made `"name": 5` the sweep "5", where a job's name refuses a number)
    # (and the separators: str() made `"item_sep": 1` the character '1', refused as such)
    for key in ("name", "command", "exclude_expr", "results_dir", "item_sep", "kv_sep"):
        if not isinstance(data.get(key), str | None):
            raise SweepError(f"{key}: must be a string, got {_json_kind(data[key])}", (key,))
    try:
        return _built(data, grids, random, shuffle, stored)
    except SweepError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a shape not foreseen
        raise SweepError(f"spec: malformed ({type(exc).__name__}: {exc})") from None


def _unknown_key(key: Any) -> str:
    """The refusal of a spec's unknown key, as a sweep file's (sweepfile.py): the known one
    closest to it (`grid`, the file's key, for `grids`) and the keys there are. It named the
    key alone, and the schema says only "an object": a client could not learn the keys."""
    guess = did_you_mean(str(key), _SPEC_KEYS, cutoff=0.75)  # (sweepfile.py's, and its why)
    return f"spec: unknown key {key!r}{guess}; known keys: {', '.join(_SPEC_KEYS)}"


def _built(
    data: Mapping[str, Any],
    grids: tuple[dict[str, tuple[Any, ...]], ...],
    random: dict[str, Distribution],
    shuffle: bool,
    stored: bool,
) -> SweepSpec:
    return SweepSpec(
        name=str(data.get("name") or ""),
        command=data.get("command"),
        # Left out: the default. "" is no folder, refused (it was the default without a word).
        results_dir=SweepSpec.results_dir
        if data.get("results_dir") is None
        else data["results_dir"],
        fixed=dict(_mapping(data.get("fixed"), "fixed")),
        grids=grids,
        random=random,
        samples=_int_or_none(data.get("samples"), "samples"),
        seed=_int_or_none(data.get("seed"), "seed"),
        shuffle=shuffle,
        exclude=tuple(
            dict(_mapping(partial, f"exclude[{i}]"))
            for i, partial in enumerate(_list(data.get("exclude"), "exclude"))
        ),
        exclude_expr=data.get("exclude_expr"),
        item_sep=_given(data, "item_sep", SweepSpec.item_sep),
        kv_sep=_given(data, "kv_sep", SweepSpec.kv_sep),
        stored=stored,
    )


def _given(data: Mapping[str, Any], key: str, default: str) -> Any:
    """`data[key]`, or the default where it is left out or null (as results_dir's)."""
    value = data.get(key)
    return default if value is None else value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise SweepError(f"{where}: must be a list, got {_json_kind(value)}", (where,))
    return list(value)


def _mapping(value: Any, where: str) -> Mapping[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SweepError(
            f"{where}: must be a mapping (a JSON object), got {_json_kind(value)}", (where,)
        )
    return value


def _distribution(data: Mapping[Any, Any], where: str) -> Distribution:
    bounds = [data.get("low", 0.0), data.get("high", 0.0)]
    if any(isinstance(b, bool) or not isinstance(b, int | float) for b in bounds):
        kinds = ", ".join(_json_kind(b) for b in bounds)
        raise SweepError(f"{where}: low and high must be numbers, got {kinds}", (where,))
    if "kind" not in data:
        raise SweepError(f"{where}: give its kind (choice, uniform, loguniform, int)", (where,))
    values = _values(data.get("values") or [], f"{where}.values")
    return Distribution(data["kind"], tuple(values), float(bounds[0]), float(bounds[1]))


def _json_kind(value: Any) -> str:
    """What a wrong value is, as JSON names it (the value itself may be thousands long)."""
    for kind, name in ((bool, "a boolean"), (str, "a string"), (int | float, "a number")):
        if isinstance(value, kind):
            return name
    if isinstance(value, Mapping):
        return "an object"
    return "a list" if isinstance(value, list | tuple) else "null"


def _values(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise SweepError(f"{where}: give a list of values, got {value!r}", ("grid",))
    return list(value)


def _int_or_none(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SweepError(f"{where}: must be a whole number, got {value!r}", (where,))
    return value
