"""Sweeps as plain data: a spec expands into points, each with its folder name and command.

Pure: no I/O, no clock; randomness only from `random.Random(spec.seed)`. Rules:

- `fixed` holds defaults shared by every point; a grid key may also be in `fixed` and then
  wins for the points that vary it (as GPU Task Scheduler's test_config overrides its
  global_config). A fixed key every point varies (in every grid, or random) would reach no
  point: refused at submission (sweep_fixed.overridden_fixed).
- A point's varying keys are the keys its grid declares plus the random keys, in declaration
  order, even a key with one value: adding a value later renames no finished point's folder.
- A point is its parameters as text (`value_text`): 1 and "1" are one point (they give the same
  command), as are True and "True"; 1 and 1.0 are two. (sweep_values.alike_values warns.)
- Shuffling or sampling needs `seed`: the caller picks one and records it.
- Placeholders may carry a format spec or conversion (`{lr:.2e}`, `{x!r}`), applied to the raw
  value before quoting.

The spec itself (its checks and JSON form) lives in sweep_spec.py, folder names and command
rendering in sweep_names.py, exclude expressions in sweep_expr.py; this module re-exports
their public names.
"""

from __future__ import annotations

import itertools
import math
import posixpath
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from random import Random
from typing import Any

from gpuherd.core.sweep_expr import compile_expr as compile_expr
from gpuherd.core.sweep_expr import evaluate as evaluate
from gpuherd.core.sweep_expr import keeper
from gpuherd.core.sweep_names import MAX_FOLDER_BYTES as MAX_FOLDER_BYTES
from gpuherd.core.sweep_names import RESERVED as RESERVED
from gpuherd.core.sweep_names import SweepError as SweepError
from gpuherd.core.sweep_names import SweepTypeError as SweepTypeError
from gpuherd.core.sweep_names import check_template as check_template
from gpuherd.core.sweep_names import folder_name as folder_name
from gpuherd.core.sweep_names import is_bare_command as is_bare_command
from gpuherd.core.sweep_names import render as render
from gpuherd.core.sweep_names import sweep_option as sweep_option
from gpuherd.core.sweep_names import template_fields as template_fields
from gpuherd.core.sweep_names import value_text as value_text
from gpuherd.core.sweep_spec import FILE_SUFFIXES as FILE_SUFFIXES
from gpuherd.core.sweep_spec import DistKind as DistKind
from gpuherd.core.sweep_spec import Distribution as Distribution
from gpuherd.core.sweep_spec import SweepSpec as SweepSpec
from gpuherd.core.sweep_spec import is_sweep_name as is_sweep_name
from gpuherd.core.sweep_spec import no_such_sweep as no_such_sweep
from gpuherd.core.sweep_spec import spec_from_dict as spec_from_dict
from gpuherd.core.sweep_spec import spec_to_dict as spec_to_dict

MAX_POINTS = 1_000_000
"""expand() lists no bigger grid (it draws `samples` of one by index, without listing it);
check count() first to tell the user."""
CONFIRM_POINTS = 10_000
"""Bigger sweeps are listed or submitted only with --yes."""


def size_refusal(name: str, total: int, *, yes: bool, action: str, samples: str) -> str | None:
    """Why a sweep of `total` points (count()) cannot go on, or None: more than MAX_POINTS
    whatever `yes`, more than CONFIRM_POINTS without it. Each caller spells its own way out:
    `action` how to confirm ("pass --yes to submit them all"), `samples` how to draw fewer
    points ("--samples N")."""
    if total > MAX_POINTS:
        return (
            f"sweep {name!r} has {total:,} points, more than {MAX_POINTS:,} (the most a sweep"
            f" may have): narrow it, or draw some of them ({samples})"
        )
    if total <= CONFIRM_POINTS or yes:
        return None
    return (
        f"sweep {name!r} has {total:,} points, more than {CONFIRM_POINTS:,}: "
        f"{action}, or narrow it ({samples})"
    )


@dataclass(frozen=True)
class Point:
    index: int
    params: Mapping[str, Any]
    """`fixed` merged with this point's varying values."""
    varying: tuple[str, ...]
    folder: str
    run_dir: str
    """`results_dir/folder`, as written in the spec (relative if it is; `{sweep}` in it
    replaced by the sweep's name)."""
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
            f"{len(self.to_run):,} to run: {len(self.new):,} new, {len(self.rerun_failed):,}"
            f" failed to rerun, {len(self.skipped_done):,} done (skipped)"
        )
        forced = f", {len(self.rerun_done):,} done forced to rerun"
        return text + (forced if self.rerun_done else "")


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
    rng = Random(spec.seed)
    keep = keeper(spec.exclude, spec.exclude_expr, [*spec.fixed, *spec.varying])
    if size > MAX_POINTS and spec.samples is not None and not spec.random:
        chosen = _sample_unexpanded(spec, rng, keep)  # too many to list: drawn by index
    elif size > MAX_POINTS:
        raise SweepError(f"grid: {size:,} points, more than {MAX_POINTS:,}; narrow it", ("grid",))
    elif spec.random:
        chosen = _draw(spec, rng, keep)
    else:
        chosen = _kept_grid(spec, keep)
        if spec.samples is not None:
            if spec.samples > len(chosen):
                raise SweepError(
                    f"samples: {spec.samples:,} asked, but the grid has only {len(chosen):,}"
                    f" point{'s' if len(chosen) > 1 else ''}",
                    ("samples",),
                )
            # The same draws as rng.sample(range(len(chosen)), ...), which _sample_unexpanded
            # cannot make (it does not know how many points exclude and duplicates leave).
            chosen = rng.sample(chosen, spec.samples)
        elif spec.shuffle:
            rng.shuffle(chosen)
    return [_point(spec, i, params, varying) for i, (params, varying) in enumerate(chosen)]


def check_exclude(spec: SweepSpec) -> None:
    """Raise the SweepError that expand() would for the grid's `exclude` (every point removed,
    or the expression failing on one), without numbering points: a sweep file is checked as
    it is read, to name its line (the daemon, which expands, knows no file). Random draws
    (which depend on the seed) and a grid too big to list (sampled) stay expand()'s to check."""
    if (spec.exclude or spec.exclude_expr) and not spec.random and _grid_size(spec) <= MAX_POINTS:
        _kept_grid(spec, keeper(spec.exclude, spec.exclude_expr, [*spec.fixed, *spec.varying]))


def _kept_grid(spec: SweepSpec, keep: Callable[[Mapping[str, Any]], bool]) -> list[_Combo]:
    grid = _grid(spec)
    chosen = [(p, v) for p, v in grid if keep(p)]
    if grid and not chosen:
        raise SweepError(_excludes_all(spec, len(grid)), ("exclude",))
    return chosen


def _excludes_all(spec: SweepSpec, total: int) -> str:
    what = "it"  # both a list and an expression
    if not spec.exclude or not spec.exclude_expr:
        what = f"expression {spec.exclude_expr!r}" if spec.exclude_expr else "the list"
    every = f"{total:,} of {total:,}"
    return f"exclude: {what} removes every point of the grid ({every}); loosen it so some remain"


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


def _sample_unexpanded(
    spec: SweepSpec, rng: Random, keep: Callable[[Mapping[str, Any]], bool]
) -> list[_Combo]:
    """`samples` distinct points of a grid too large to list: indices drawn from the grids'
    product and decoded, each point through its first occurrence (as _grid keeps it), so its
    folder name is the one the listed grid would give it."""
    wanted = spec.samples or 0
    sizes = [math.prod(len(v) for v in grid.values()) for grid in spec.grids]
    total = sum(sizes)
    texts = [{k: {value_text(v) for v in values} for k, values in g.items()} for g in spec.grids]
    seen: set[frozenset[tuple[str, str]]] = set()
    out: list[_Combo] = []
    draws = 0
    while len(out) < wanted:
        # Enough draws for `samples` near the grid's size (a coupon collector's), with few
        # excluded; not a set of the indices drawn: up to millions of them, for nothing.
        if draws >= 10 * wanted + 10_000:
            raise SweepError(
                f"samples: found only {len(out):,} distinct points of {wanted:,} in"
                f" {draws:,} draws; loosen exclude, or ask for fewer",
                ("samples",),
            )
        draws += 1
        index = rng.randrange(total)
        which = 0
        while index >= sizes[which]:
            index, which = index - sizes[which], which + 1
        grid = spec.grids[which]
        values: dict[str, Any] = {}
        for key in reversed(list(grid)):  # itertools.product's order: the last key fastest
            index, digit = divmod(index, len(grid[key]))
            values[key] = grid[key][digit]
        params = {**spec.fixed, **{k: values[k] for k in grid}}
        ident = _identity(params)
        earlier = any(_holds(spec, g, texts[g], params) for g in range(which))
        if ident not in seen and not earlier and keep(params):
            seen.add(ident)
            out.append((params, tuple(k for k in spec.varying if k in grid)))
    return out


def _holds(
    spec: SweepSpec, which: int, texts: Mapping[str, set[str]], params: Mapping[str, Any]
) -> bool:
    """Whether grid `which` (its values' texts given) has a point with these parameters."""
    grid = spec.grids[which]
    if set(params) != {*spec.fixed, *grid}:
        return False
    return all(
        value_text(value) in texts[key]
        if key in grid
        else value_text(value) == value_text(spec.fixed[key])
        for key, value in params.items()
    )


def _draw(spec: SweepSpec, rng: Random, keep: Callable[[Mapping[str, Any]], bool]) -> list[_Combo]:
    """`samples` distinct points: grid points in shuffled rounds, each with random draws."""
    wanted = spec.samples or 0
    bases = _grid(spec)
    sizes = [d.size() for d in spec.random.values()]
    space = None if None in sizes else len(bases) * math.prod(s or 0 for s in sizes)
    if space is not None and wanted > space:
        raise SweepError(
            f"samples: {wanted:,} asked, but only {space:,} distinct points exist", ("samples",)
        )
    seen: set[frozenset[tuple[str, str]]] = set()
    out: list[_Combo] = []
    order: list[int] = []
    tries = 0
    while len(out) < wanted:
        if tries >= 100 * wanted + 1000:
            raise SweepError(
                f"samples: drew only {len(out):,} distinct points of {wanted:,} in {tries:,} tries;"
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
    run_dir = posixpath.join(spec.results_path, folder)
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
