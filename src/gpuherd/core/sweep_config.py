"""GPU Task Scheduler's config dicts (scheduler_config, global_config, test_config) read into
a SweepSpec, and the error both they and sweep files raise.

Pure: no I/O. sweepfile.py re-exports both names (sweep files are read there).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpuherd.core.sweep_names import SweepError
from gpuherd.core.sweep_spec import SweepSpec


class SweepFileError(ValueError):
    """A sweep file or config that cannot be used; the message is one line naming the place."""


def from_config(
    config: Mapping[str, Any], *, name: str = "sweep", command: str | None = None
) -> SweepSpec:
    """A SweepSpec from GPU Task Scheduler's config dict.

    `global_config` becomes `fixed`, `test_config` the grids (values may be any iterable, such
    as `range(10)`); from `scheduler_config`, `result_root_folder` and the folder-name
    separators are used, `gpu`, `force_rerun` and the file names are ignored (pass GPUs and
    force to the submission instead).
    """
    unknown = set(config) - {"scheduler_config", "global_config", "test_config", "theano_config"}
    if unknown:
        raise SweepFileError(
            f"config: unknown key {sorted(unknown)[0]!r}; "
            "known keys: scheduler_config, global_config, test_config"
        )
    scheduler = _mapping(config.get("scheduler_config") or {}, "scheduler_config")
    gpu = scheduler.get("gpu")
    if gpu is not None and not isinstance(gpu, list | tuple):  # (a text's letters are no list)
        raise SweepFileError(
            f"config: scheduler_config.gpu must be a list, an entry per worker (['0', '1'], "
            f"or [['0', '1'], ['2', '3']] for 2 GPUs each), got {type(gpu).__name__} {gpu!r}"
        )
    # Not made text: `test_config_string_separator: 1` was refused as the character '1'.
    # (gpuherd.sweep_from_config refuses one as a WrongType first, tasks_gts.py)
    seps = {key: scheduler.get(key, default) for key, default in _GTS_SEPS.items()}
    for key, sep in seps.items():
        if not isinstance(sep, str):
            raise SweepFileError(
                f"config: scheduler_config.{key} is one punctuation character as text"
                f" ({_GTS_SEPS[key]!r}),"
                f" got {sep!r} ({type(sep).__name__})"
            )
    fixed = _mapping(config.get("global_config") or {}, "global_config")
    tests = config.get("test_config") or [{}]
    if isinstance(tests, Mapping):
        tests = [tests]
    grids = [_gts_grid(_mapping(t, f"test_config[{i}]"), i) for i, t in enumerate(tests)]
    # GTS gives each point global_config updated by its test_config: a key every test_config
    # gives never reaches a point from global_config, and is dropped as GTS drops it (a sweep
    # spec's fixed key every grid varies is refused: sweep_fixed.overridden_fixed).
    kept = {k: v for k, v in fixed.items() if not (any(grids) and all(k in g for g in grids))}
    try:
        return SweepSpec(
            name=name,
            command=command,
            results_dir=str(scheduler.get("result_root_folder", "results")),
            fixed=kept,
            grids=tuple(grids) if any(grids) else (),
            item_sep=seps["test_config_string_separator"],
            kv_sep=seps["test_config_string_indicator"],
        )
    except SweepError as exc:
        raise SweepFileError(f"config: {exc}") from None


_GTS_SEPS = {"test_config_string_separator": ",", "test_config_string_indicator": "-"}
"""The folder-name separators a GTS config names, with GTS's defaults: its result folders read
key-value,key-value, and a switching user's finished points are found (and skipped) under
those names."""

_PLACES = {
    "log_file": "each point's console output is in its folder's attempt-1/stdout.log and "
    "stderr.log (attempt-N for a retry; gpuherd log ID prints it)",
    "scheduler_log_file_path": "each point's GPU, start and end are in its folder's job.json, "
    "and gpuherd sweep status NAME lists them",
    "config_string_value_maxlen": "folder names keep whole values (a name over 100 bytes is "
    "cut and ends in ~ and a hash)",
}
"""scheduler_config keys GPU Task Scheduler used that gpuherd does not: where their things are
here, so a switching user's scripts that read worker.log or scheduler.log are not left
looking at files that never come."""


def unused_scheduler_keys(config: Mapping[str, Any]) -> list[str]:
    """One line per such key the config gives: `scheduler_config.log_file is not used here:
    ...`, for the caller to warn with."""
    scheduler = config.get("scheduler_config")
    if not isinstance(scheduler, Mapping):
        return []
    return [
        f"scheduler_config.{key} is not used here: {place}"
        for key, place in _PLACES.items()
        if key in scheduler
    ]


def gts_gpu_ids(entries: Iterable[Any]) -> list[int]:
    """The GPU indices a `scheduler_config.gpu` list names (`["0", "1"]`, `[["0", "1"], "2"]`)."""
    ids: set[int] = set()
    for entry in entries:
        for gpu in entry if isinstance(entry, list | tuple) else [entry]:
            text = str(gpu).strip()
            if not (text.isascii() and text.isdigit()):  # ('²' is a digit int() refuses)
                raise SweepFileError(
                    f"scheduler_config.gpu: {gpu!r} is not a GPU index (as gpuherd gpus lists "
                    "them): give indices such as ['0', '1'], or only_gpus=[0, 1] to "
                    "sweep_from_config"
                )
            ids.add(int(gpu))
    return sorted(ids)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SweepFileError(f"config: {where} must be a dict, got {type(value).__name__}")
    return value


def _gts_grid(test: Mapping[str, Any], i: int) -> dict[str, tuple[Any, ...]]:
    grid: dict[str, tuple[Any, ...]] = {}
    for key, values in test.items():
        if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
            raise SweepFileError(
                f"config: test_config[{i}].{key} must be a list of values, got {values!r}"
            )
        grid[key] = tuple(values)
    return grid


_WANDB_KEYS = ("program", "method", "parameters", "metric", "early_terminate", "run_cap")


def wandb_config(data: Mapping[Any, Any]) -> tuple[str, str] | None:
    """A W&B sweep config given as a sweep file (its `parameters`, with `program` or
    `method`): its first such key and what to write instead, with the file's own program and
    first parameter; else None. Refused key by key, it said `unknown key 'program'; known
    keys: ...` and nothing of where its parameters go here."""
    if "parameters" not in data or not {"program", "method"} & set(data):
        return None
    first = next(str(key) for key in data if key in _WANDB_KEYS)
    params = data["parameters"]
    name = next(iter(params), "lr") if isinstance(params, Mapping) else "lr"
    name = name if isinstance(name, str) and name.isidentifier() else "lr"
    program = data.get("program")
    program = program if isinstance(program, str) and program.strip() else "train.py"
    return first, (
        "this is a W&B sweep config (program, method, parameters); a sweep file here names"
        f" the command, a placeholder per parameter (command: python {program}"
        f" --{name}={{{name}}}), and the values: grid: {{{name}: [0.1, 0.01]}} for method:"
        f" grid, or random: {{{name}: {{loguniform: [1.0e-5, 0.1]}}}} and samples: 20 for"
        " method: random (docs/sweeps.md, Sweep files)"
    )
