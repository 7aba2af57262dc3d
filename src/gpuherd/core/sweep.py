"""Sweeps as plain data: a spec expands into points, each with its folder name and command.

Pure: no I/O, no clock; randomness only from `random.Random(spec.seed)`. Rules:

- `fixed` holds defaults shared by every point; a grid or random key may also be in `fixed`
  and then wins for the points that vary it (as GPU Task Scheduler's test_config overrides its
  global_config).
- A point's varying keys are the keys its grid declares plus the random keys, in declaration
  order, even a key with one value: adding a value later renames no finished point's folder.
- A point is its parameters as text (`value_text`): 1 and "1" are one point (they give the same
  command); 1 and 1.0 are two.
- Shuffling or sampling needs `seed`: the caller picks one and records it.
- Placeholders may carry a format spec or conversion (`{lr:.2e}`, `{x!r}`), applied to the raw
  value before quoting.

Folder names and command rendering live in sweep_names.py, exclude expressions in
sweep_expr.py; this module re-exports their public names.
"""

from __future__ import annotations

import itertools
import math
import posixpath
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from random import Random
from typing import Any, Literal

from gpuherd.core.sweep_expr import compile_expr as compile_expr
from gpuherd.core.sweep_expr import evaluate as evaluate
from gpuherd.core.sweep_expr import keeper
from gpuherd.core.sweep_names import MAX_FOLDER_BYTES as MAX_FOLDER_BYTES
from gpuherd.core.sweep_names import RESERVED as RESERVED
from gpuherd.core.sweep_names import SweepError as SweepError
from gpuherd.core.sweep_names import check_key, check_seps
from gpuherd.core.sweep_names import check_template as check_template
from gpuherd.core.sweep_names import folder_name as folder_name
from gpuherd.core.sweep_names import render as render
from gpuherd.core.sweep_names import template_fields as template_fields
from gpuherd.core.sweep_names import value_text as value_text

DistKind = Literal["choice", "uniform", "loguniform", "int"]
MAX_POINTS = 1_000_000
"""expand() refuses bigger grids; check count() first to tell the user."""


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
    results_dir: str = "results"
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

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def varying(self) -> tuple[str, ...]:
        """The keys any point varies, in declaration order (grids first, then random)."""
        return tuple(dict.fromkeys([*(k for g in self.grids for k in g), *self.random]))

    @property
    def needs_seed(self) -> bool:
        return self.shuffle or self.samples is not None


@dataclass(frozen=True)
class Point:
    index: int
    params: Mapping[str, Any]
    """`fixed` merged with this point's varying values."""
    varying: tuple[str, ...]
    folder: str
    run_dir: str
    """`results_dir/folder`, as written in the spec (relative if it is)."""
    command: str | None


@dataclass(frozen=True)
class ResumePlan:
    """Points in sweep order, by what a resubmission does with them."""

    to_run: tuple[Point, ...]
    skipped_done: tuple[Point, ...]
    rerun_failed: tuple[Point, ...]
    new: tuple[Point, ...]
    rerun_done: tuple[Point, ...] = ()
    """Done points run again because of `force`."""

    def summary(self) -> str:
        text = (
            f"{len(self.to_run)} to run: {len(self.new)} new, {len(self.rerun_failed)} failed"
            f" to rerun, {len(self.skipped_done)} done (skipped)"
        )
        return text + (f", {len(self.rerun_done)} done forced to rerun" if self.rerun_done else "")


# ---- validation -----------------------------------------------------------------------------


def _validate(spec: SweepSpec) -> None:
    if not spec.name:
        raise SweepError("name: must not be empty", ("name",))
    if "/" in spec.name or not spec.name.isprintable() or spec.name != spec.name.strip():
        raise SweepError(
            f"name: {spec.name!r} must not hold '/', control characters or outer spaces",
            ("name",),
        )
    check_seps(spec.item_sep, spec.kv_sep)
    for key in spec.fixed:
        check_key(key, "fixed", ("fixed", key))
    _check_grids(spec)
    if spec.samples is not None and spec.samples < 1:
        raise SweepError(f"samples: must be at least 1, got {spec.samples}", ("samples",))
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
        check_template(spec.command, known)
        _check_coverage(spec)


def _check_grids(spec: SweepSpec) -> None:
    for i, grid in enumerate(spec.grids):
        where = "grid" if len(spec.grids) == 1 else f"grid[{i}]"
        if not grid:
            raise SweepError(f"{where}: empty; give each parameter a list of values", ("grid", i))
        for key, values in grid.items():
            check_key(key, where, ("grid", i, key))
            if not values:
                raise SweepError(f"{where}.{key}: empty list of values", ("grid", i, key))
    for key in spec.random:
        check_key(key, "random", ("random", key))
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


# ---- expansion ------------------------------------------------------------------------------


def _grid_size(spec: SweepSpec) -> int:
    return sum(math.prod(len(v) for v in g.values()) for g in spec.grids) if spec.grids else 1


def count(spec: SweepSpec) -> int:
    """Points expand() gives at most (before duplicates and exclude), without expanding."""
    size = _grid_size(spec)
    if spec.samples is None:
        return size
    return spec.samples if spec.random else min(spec.samples, size)


def expand(spec: SweepSpec) -> list[Point]:
    """All points of the sweep, numbered in order; see the module doc for the rules."""
    if spec.needs_seed and spec.seed is None:
        raise SweepError("seed: shuffle and samples need a seed; pick one and record it", ("seed",))
    size = _grid_size(spec)
    if size > MAX_POINTS:
        raise SweepError(f"grid: {size} points, more than {MAX_POINTS}; narrow it", ("grid",))
    rng = Random(spec.seed)
    keep = keeper(spec.exclude, spec.exclude_expr, [*spec.fixed, *spec.varying])
    if spec.random:
        chosen = _draw(spec, rng, keep)
    else:
        chosen = [(p, v) for p, v in _grid(spec) if keep(p)]
        if spec.samples is not None:
            if spec.samples > len(chosen):
                raise SweepError(
                    f"samples: {spec.samples} asked, but the grid has only {len(chosen)} points",
                    ("samples",),
                )
            chosen = rng.sample(chosen, spec.samples)
        elif spec.shuffle:
            rng.shuffle(chosen)
    return [_point(spec, i, params, varying) for i, (params, varying) in enumerate(chosen)]


_Combo = tuple[dict[str, Any], tuple[str, ...]]


def _identity(params: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    return frozenset((k, value_text(v)) for k, v in params.items())


def _grid(spec: SweepSpec) -> list[_Combo]:
    """Each grid's product with `fixed` merged in, duplicates dropped (the first one stays)."""
    seen: set[frozenset[tuple[str, str]]] = set()
    out: list[_Combo] = []
    for grid in spec.grids or ({},):
        varying = tuple(k for k in spec.varying if k in grid or k in spec.random)
        for values in itertools.product(*grid.values()):
            params = {**spec.fixed, **dict(zip(grid, values, strict=True))}
            ident = _identity(params)
            if ident not in seen:
                seen.add(ident)
                out.append((params, varying))
    return out


def _draw(spec: SweepSpec, rng: Random, keep: Callable[[Mapping[str, Any]], bool]) -> list[_Combo]:
    """`samples` distinct points: grid points in shuffled rounds, each with random draws."""
    wanted = spec.samples or 0
    bases = _grid(spec)
    sizes = [d.size() for d in spec.random.values()]
    space = None if None in sizes else len(bases) * math.prod(s or 0 for s in sizes)
    if space is not None and wanted > space:
        raise SweepError(
            f"samples: {wanted} asked, but only {space} distinct points exist", ("samples",)
        )
    seen: set[frozenset[tuple[str, str]]] = set()
    out: list[_Combo] = []
    order: list[int] = []
    tries = 0
    while len(out) < wanted:
        if tries >= 100 * wanted + 1000:
            raise SweepError(
                f"samples: drew only {len(out)} distinct points of {wanted} in {tries} tries;"
                " widen the distributions or loosen exclude",
                ("samples",),
            )
        tries += 1
        if not order:
            order = list(range(len(bases)))
            rng.shuffle(order)
        base, varying = bases[order.pop()]
        params = {**base, **{k: d.sample(rng) for k, d in spec.random.items()}}
        ident = _identity(params)
        if ident not in seen and keep(params):
            seen.add(ident)
            out.append((params, varying))
    return out


def _point(spec: SweepSpec, index: int, params: dict[str, Any], varying: tuple[str, ...]) -> Point:
    folder = folder_name(params, varying, spec.item_sep, spec.kv_sep, index=index)
    run_dir = posixpath.join(spec.results_dir, folder)
    command = None
    if spec.command is not None:
        command = render(spec.command, params, run_dir, spec.name, index)
    return Point(index, params, varying, folder, run_dir, command)


def unused_params(template: str, spec: SweepSpec) -> list[str]:
    """Varying keys the command does not mention (worth a warning; not an error)."""
    used = set(template_fields(template))
    return [k for k in spec.varying if k not in used]


def plan_resume(
    points: Iterable[Point], done: Collection[str], failed: Collection[str], *, force: bool = False
) -> ResumePlan:
    """Sort points by their folder: in `done` skipped (rerun with `force`), in `failed` rerun,
    others new. A folder in both counts as done."""
    to_run: list[Point] = []
    buckets: dict[str, list[Point]] = {"done": [], "failed": [], "new": []}
    for point in points:
        kind = "done" if point.folder in done else "failed" if point.folder in failed else "new"
        buckets[kind].append(point)
        if force or kind != "done":
            to_run.append(point)
    done_points = tuple(buckets["done"])
    return ResumePlan(
        to_run=tuple(to_run),
        skipped_done=() if force else done_points,
        rerun_failed=tuple(buckets["failed"]),
        new=tuple(buckets["new"]),
        rerun_done=done_points if force else (),
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


_SPEC_KEYS = frozenset(spec_to_dict(SweepSpec(name="x")))


def spec_from_dict(data: Mapping[str, Any]) -> SweepSpec:
    """A SweepSpec from spec_to_dict's shape; SweepError (with the key at fault) if invalid."""
    if not isinstance(data, Mapping):
        raise SweepError("spec: must be a JSON object")
    unknown = sorted(set(data) - _SPEC_KEYS)
    if unknown:
        raise SweepError(f"spec: unknown key {unknown[0]!r}", (unknown[0],))
    try:
        grids = tuple(
            {str(k): tuple(_values(v, f"grids[{i}].{k}")) for k, v in dict(grid).items()}
            for i, grid in enumerate(data.get("grids") or ())
        )
        random = {
            str(k): Distribution(
                d["kind"],
                values=tuple(d.get("values") or ()),
                low=float(d.get("low", 0.0)),
                high=float(d.get("high", 0.0)),
            )
            for k, d in dict(data.get("random") or {}).items()
        }
        return SweepSpec(
            name=str(data.get("name") or ""),
            command=data.get("command"),
            results_dir=str(data.get("results_dir") or "results"),
            fixed=dict(data.get("fixed") or {}),
            grids=grids,
            random=random,
            samples=_int_or_none(data.get("samples"), "samples"),
            seed=_int_or_none(data.get("seed"), "seed"),
            shuffle=bool(data.get("shuffle", False)),
            exclude=tuple(dict(p) for p in data.get("exclude") or ()),
            exclude_expr=data.get("exclude_expr"),
            item_sep=str(data.get("item_sep", ",")),
            kv_sep=str(data.get("kv_sep", "=")),
        )
    except (TypeError, KeyError, AttributeError) as exc:
        raise SweepError(f"spec: malformed ({type(exc).__name__}: {exc})") from None


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
