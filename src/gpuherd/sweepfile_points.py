"""What a sweep file's points would be refused for, found before they are expanded, so that the
refusal names the file's key and line (`sweep.yaml:5: samples: 5 asked, but the grid has only
2 points`) as the file's other errors do. The daemon, which expands a sweep, knows no file,
and `--dry-run` expands it without one: both said `invalid sweep: samples: ...`, naming
nothing to open.

Only what is cheap to find: expanding a sweep of 100,000 points takes seconds (each folder's
name and command made), which the daemon spends once already. So `samples` is checked where
the grid surely has too few points (expand() refuses it before making any), and the
command's format specs (`{lr:.1e}`) are tried on every value of every parameter once, not on
every point. What this lets through (a grid too few points only once duplicates or `exclude`
are counted) is refused as before, by the daemon or the dry run."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import replace
from random import Random
from typing import Any

from gpuherd.core.sweep import MAX_POINTS, SweepError, SweepSpec, expand, render
from gpuherd.core.sweep_config import SweepFileError
from gpuherd.core.sweep_expr import keeper
from gpuherd.sweepfile import SweepFile


def check_points(loaded: SweepFile, spec: SweepSpec, overridden: Collection[str]) -> None:
    """SweepFileError, `file:line: key: ...`, for what the points of `spec` (the file's, with
    the command line's `overridden` keys over it: `--samples`) would be refused for, a key
    of the file's being at fault; a key of the command line's is left to the refusal that
    names it as the flag."""
    try:
        _check_samples(spec)
        _check_formats(spec)
    except SweepError as exc:
        key = str(exc.loc[0]) if exc.loc else ""
        if key in overridden:
            return
        raise SweepFileError(f"{loaded.where(key) if key else loaded.path}: {exc}") from None


def _grid_size(spec: SweepSpec) -> int:
    """The grid's points counted before duplicates and exclude: at least as many as it has."""
    return sum(math.prod(len(v) for v in grid.values()) for grid in spec.grids) or 1


def _check_samples(spec: SweepSpec) -> None:
    """expand()'s refusal of more `samples` than the grid (or the grid and the random keys'
    choices) holds, where the count before duplicates is too small already: expand() then
    refuses before it makes any point (the seed does not matter: 0 is as good as any)."""
    if spec.samples is None or _grid_size(spec) > MAX_POINTS:
        return  # (sampled without listing: the daemon's to refuse)
    sizes = [distribution.size() for distribution in spec.random.values()]
    if None in sizes:
        return  # a float range: as many points as one likes
    if spec.samples > _grid_size(spec) * math.prod(size or 0 for size in sizes):
        expand(replace(spec, seed=0))


def _check_formats(spec: SweepSpec) -> None:
    """render()'s refusal of a value the command's format spec cannot format (`{lr:.1e}` of
    the text '1e-3'), tried on every value of every parameter: each grid's points taken
    along its diagonal (the i-th point takes each key's i-th value, round again for shorter
    lists), which hold every value at least once. A point `exclude` removes is not run, so
    not refused; its value may still be refused where it is run, by the daemon."""
    formatted = set(_FORMATTED.findall(spec.command or ""))
    if spec.command is None or not formatted:
        return  # (a placeholder without a format spec formats any value)
    keep = keeper(spec.exclude, spec.exclude_expr, [*spec.fixed, *spec.varying])
    for params in _diagonal(spec, formatted):
        if keep(params):
            render(spec.command, params, spec.results_path, spec.name, 0)


_FORMATTED = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)(?:![rsa])?:[^{}]*\}")
"""A placeholder with a format spec (`{lr:.1e}`), the one kind that fails on some values;
its name."""


def _diagonal(spec: SweepSpec, formatted: Collection[str]) -> Iterator[dict[str, Any]]:
    """The diagonal's points, as long as the longest list of a `formatted` key's values (a
    grid's key of 100,000 seeds, not formatted, takes no 100,000 commands to check)."""
    rng = Random(0)
    for grid in spec.grids or ({},):
        listed: Mapping[str, tuple[Any, ...]] = {
            **grid,
            **{k: d.values for k, d in spec.random.items() if d.kind == "choice"},
        }
        drawn = {k: d for k, d in spec.random.items() if d.kind != "choice"}
        lengths = [len(values) for key, values in listed.items() if key in formatted]
        for i in range(max(lengths, default=1)):
            values = {key: values[i % len(values)] for key, values in listed.items()}
            yield {**spec.fixed, **values, **{k: d.sample(rng) for k, d in drawn.items()}}
