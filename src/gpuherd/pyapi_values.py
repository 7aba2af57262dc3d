"""What the Python API makes of the values and options it is given (pyapi.py, tasks.py).

- `plain`: numpy scalars and arrays as Python numbers and lists, for JSON (numpy is never
  imported here: a value is converted only when its type comes from numpy);
- `submit_options`, `in_units`: `submit` keyword options as the daemon's API takes them;
- `make_spec`: a sweep spec from a command template and parameter lists;
- `non_finite`: NaN and the infinities back as floats in a sweep's metrics;
- `is_sweep_file`: whether `Herd.sweep`'s first argument names a sweep file (the CLI's rule).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from gpuherd.core.idspec import parse_gpu_indices
from gpuherd.core.sweep import SweepError, SweepSpec
from gpuherd.core.sweep_spec import FILE_SUFFIXES
from gpuherd.core.units import parse_duration, parse_size
from gpuherd.core.when import parse_begin
from gpuherd.errors import HerdError

SUBMIT_OPTIONS = frozenset(
    {"gpus", "mem", "ram", "oom_retry", "priority", "after", "after_any", "retries", "timeout"}
    | {"grace"}
    | {"no_output_timeout", "kill_on_no_output", "project", "env", "hold", "max_parallel"}
    | {"begin", "only_gpus", "retry_delay"}
)


def plain(value: Any) -> Any:
    """`value` with numpy scalars as Python ones (`.item()`) and numpy arrays as lists
    (`.tolist()`), in dicts, lists and tuples too; anything else as it is."""
    module = type(value).__module__
    if module == "numpy" or module.startswith("numpy."):
        convert = getattr(value, "tolist", None)  # ndarray.tolist(), numpy scalar's too
        if callable(convert):
            return plain(convert())
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if type(value) is tuple:
        return tuple(plain(item) for item in value)
    return value


_NON_FINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def non_finite(value: Any) -> Any:
    """`value` with the text "nan", "inf" and "-inf" (how the daemon's answers carry these
    numbers, which JSON lacks) as the floats again, in dicts and lists too."""
    if isinstance(value, str):
        return _NON_FINITE.get(value, value)
    if isinstance(value, dict):
        return {key: non_finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [non_finite(item) for item in value]
    return value


def submit_options(options: Mapping[str, Any], job_type: type[Any]) -> dict[str, Any]:
    """`submit` keyword options as the API takes them (sizes and durations may be text);
    `after` and `after_any` take job ids or handles of `job_type`."""
    unknown = sorted(set(options) - SUBMIT_OPTIONS)
    if unknown:
        known = ", ".join(sorted(SUBMIT_OPTIONS))
        raise TypeError(f"unknown option {unknown[0]!r}; options: {known}")
    out = in_units({k: plain(v) for k, v in options.items() if v is not None})
    begin = out.get("begin")
    if isinstance(begin, str):
        out["begin"] = parse_begin(begin, time.time())
    elif isinstance(begin, datetime):
        out["begin"] = begin.timestamp()  # a naive datetime is local time
    for key in ("after", "after_any"):
        out[key] = [a.id if isinstance(a, job_type) else int(a) for a in out.get(key, ())]
    out["env_overrides"] = {str(k): str(v) for k, v in dict(out.pop("env", {})).items()}
    return out


def in_units(options: dict[str, Any]) -> dict[str, Any]:
    """Sizes in bytes and durations in seconds, where they were given as text ("10GiB"), and
    `only_gpus` as a list of indices."""
    if options.get("only_gpus") is not None:
        options["only_gpus"] = gpu_indices(options["only_gpus"])
    for key in ("mem", "ram"):
        if isinstance(options.get(key), str):
            options[key] = parse_size(options[key])
    for key in ("timeout", "grace", "no_output_timeout", "retry_delay"):
        if isinstance(options.get(key), str):
            options[key] = parse_duration(options[key])
    return options


def gpu_indices(value: Any) -> list[int]:
    """`only_gpus` as given: text as `--only-gpus` takes it ("0,2", "0-3"), an int, or a list
    of ints; HerdError for anything else (1.7 or True is no GPU index)."""
    if isinstance(value, str):
        try:
            return parse_gpu_indices(value)
        except ValueError as exc:
            raise HerdError(f"only_gpus: {exc}") from None
    items = [value] if isinstance(value, int) else value
    if not isinstance(items, list | tuple | set | frozenset | range) or any(
        isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in items
    ):
        raise HerdError(
            f"only_gpus: {value!r} is not GPU indices: give a list of them ([0, 2]), one (2), "
            "or text as --only-gpus takes it ('0,2', '0-3')"
        )
    return sorted(set(items))


def make_spec(
    name: str,
    command: str,
    params: Mapping[str, Iterable[Any]],
    fixed: Mapping[str, Any] | None,
) -> SweepSpec:
    """A sweep of `command` over the grid of `params` (name -> list of values)."""
    grid = {}
    for key, values in params.items():
        values = plain(values)  # a numpy array: a list
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise HerdError(f"parameter {key!r}: give a list of values, got {values!r}")
        grid[key] = tuple(plain(list(values)))
    try:
        return SweepSpec(
            name=name,
            command=command,
            results_dir=f"results/{name}",
            fixed=plain(dict(fixed or {})),
            grids=(grid,) if grid else (),
        )
    except SweepError as exc:
        raise HerdError(f"invalid sweep: {exc}") from None


def is_sweep_file(source: object, params: Mapping[str, Any] | None) -> bool:
    """Whether `Herd.sweep(source, params)` names a sweep file, by the CLI's rule (cli/
    sweep_args.is_file): a path object, or text ending in .yaml, .yml, .toml or .json with
    no space and no `{` (so `"python eval.py --lr {lr} --config base.yaml"` is a command
    template). A file with `params` too is refused, as `gpuherd sweep FILE -p ...` is."""
    if isinstance(source, os.PathLike):
        found = True
    elif isinstance(source, str):
        found = source.lower().endswith(FILE_SUFFIXES)
        found = found and not any(c.isspace() for c in source) and "{" not in source
    else:
        return False
    if found and params:
        raise HerdError(f"give the parameters in the sweep file {source}, or params, not both")
    return found


__all__ = ["in_units", "is_sweep_file", "make_spec", "plain", "submit_options"]
