"""What the Python API makes of the values and options it is given (pyapi.py, tasks.py).

- `plain`: numpy scalars and arrays as Python numbers and lists, for JSON (numpy is never
  imported here: a value is converted only when its type comes from numpy);
- `sweep_warnings`: a sweep's warnings, at the user's line, with the CLI's option names
  as the Python API's keywords; `connect_spelling`: a daemon's start failure so too;
  `start_options`: connect()'s GPUs as the daemon's options, GPUHERD_FAKE_GPUS checked;
- `submit_options`, `in_units`: `submit` keyword options as the daemon's API takes them;
  `edit_options`: `Job.edit`'s so; `sweep_order`: `Herd.sweep`'s `order`, checked;
- `job_cwd`: the folder a job runs in, checked to be one;
- `make_spec`: a sweep spec from a command template and parameter lists;
- `non_finite`: NaN and the infinities back as floats in a sweep's metrics;
- `is_sweep_file`: whether `Herd.sweep`'s first argument names a sweep file (the CLI's rule).
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Iterable, Mapping, Set
from datetime import timedelta
from pathlib import Path
from typing import Any

from gpuherd.cli.job_refs import resolve_last
from gpuherd.cli.param_types import LAST
from gpuherd.client import Client
from gpuherd.core.choices import ON_NO_OUTPUT, ORDERS
from gpuherd.core.deps import KINDS
from gpuherd.core.env_vars import check_variable
from gpuherd.core.idspec import gpu_index_list, parse_after_refs
from gpuherd.core.log_caps import sent_log_cap
from gpuherd.core.sweep import SweepError, SweepSpec
from gpuherd.core.sweep_spec import FILE_SUFFIXES
from gpuherd.core.units import memory_amount, not_a_choice, parse_duration
from gpuherd.errors import HerdError
from gpuherd.paths import current_folder
from gpuherd.pyapi_begin import begin_seconds, refuse_hold_with_begin
from gpuherd.pyapi_checks import refuse_other_home, refuse_unknown
from gpuherd.pyapi_spelling import python_spelling
from gpuherd.pyapi_types import (
    GpusRefused,
    WrongType,
    WrongValue,
    as_given,
    check_types,
    read_value,
)
from gpuherd.task_values import from_numpy, is_numpy

SUBMIT_OPTIONS = frozenset(
    {"gpus", "mem", "ram", "oom_retry", "priority", *KINDS, "retries", "timeout"}
    | {"grace", "exclusive"}
    | {"no_output_timeout", "kill_on_no_output", "project", "env", "hold", "max_parallel"}
    | {"begin", "only_gpus", "retry_delay", "on_no_output", "output", "error"}
    | {"max_log_size"}
)


def plain(value: Any) -> Any:
    """`value` with numpy scalars as Python ones and numpy arrays as lists (float32 by its
    shortest text: np.float32(0.01) is 0.01), in dicts, lists and tuples too; anything else
    as it is."""
    if is_numpy(value) and (converted := from_numpy(value)) is not value:
        return plain(converted)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if type(value) is tuple:
        return tuple(plain(item) for item in value)
    return value


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_START_OPTION = re.compile(r"(?<![\w-])--(fake-gpus|gpus)(?: ([0-9][\w.,:/-]*))?(?![\w-])")
"""`--gpus` or `--fake-gpus`, with a value if one follows (`4`, `0,1`, `2x24GiB`)."""


def connect_spelling(text: str, variable_helps: bool) -> str:
    """Why a daemon did not start, said for `gpuherd daemon start` (`pass --fake-gpus 4`), in
    connect()'s words (`pass fake_gpus=4`): a script's daemon is started by connect(), which
    a task's submit calls too. Setting GPUHERD_FAKE_GPUS is advised only where it would be
    used (`variable_helps`): an argument given wins over it, and one set was used already."""

    def keyword(found: re.Match[str]) -> str:
        name, value = found.group(1).replace("-", "_"), found.group(2)
        if value is None:
            return name
        return f"{name}={value}" if value.isdigit() else f"{name}={value!r}"

    spelled = _START_OPTION.sub(keyword, text)
    if spelled == text:
        return text
    from gpuherd.gpus.choice import FAKE_GPUS_VARIABLE  # (the GPU probes: on this path only)

    also = f"; or set {FAKE_GPUS_VARIABLE}=4 in the environment" if variable_helps else ""
    return f"{spelled} (arguments of gpuherd.connect(), before the first submit{also})"


def start_options(
    gpus: str | Iterable[int] | None, fake_gpus: str | int | os.PathLike[str] | None
) -> tuple[list[str], bool]:
    """connect()'s `gpus` and `fake_gpus` as the daemon's options, and whether setting
    GPUHERD_FAKE_GPUS could help a start that fails (no argument given, the variable unset).
    Both, or the variable, are checked here, as every start checks them (gpus/choice.py): a
    bad one is GpusRefused naming it (the argument, in connect()'s words), and no daemon is
    started. The variable is not passed on as --fake-gpus: the daemon reads it itself, to
    know (and say) where its GPUs came from."""
    from gpuherd.gpus.choice import choose_gpus  # (the GPU probes: only to start a daemon)

    gpu_text = gpus if isinstance(gpus, str) or gpus is None else ",".join(map(str, gpus))
    fake_text = None if fake_gpus is None else str(fake_gpus)
    try:
        choice = choose_gpus(gpu_text, fake_text)
    except ValueError as exc:  # an argument given wins over the variable: never advised
        raise GpusRefused(connect_spelling(str(exc), variable_helps=False)) from None
    options = [] if gpu_text is None else ["--gpus", gpu_text]
    options += [] if fake_text is None else ["--fake-gpus", fake_text]
    return options, not choice.given


def sweep_warnings(texts: Iterable[str], category: type[Warning]) -> None:
    """What the daemon warns of (the CLI prints it as `gpuherd: warning:`), as Python
    warnings: shown once each, at the user's line."""
    for text in texts:
        warn_at_caller(python_spelling(text), category)


def warn_at_caller(text: str, category: type[Warning]) -> None:
    """Warn at the line that called into gpuherd (as Python 3.12's skip_file_prefixes), not
    at gpuherd's own: `train.sweep()` calls `Herd.sweep()`, which warns."""
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(text, category, stacklevel=level)


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


def submit_options(
    options: Mapping[str, Any], job_type: type[Any], client: Client, sweep: bool = False
) -> dict[str, Any]:
    """`submit` keyword options as the API takes them (sizes and durations may be text or,
    for durations, timedelta); `after`, `after_any` and `after_fail` as `job_ids` reads
    them. `sweep`: a sweep's, which takes max_parallel too (submit's list names it not)."""
    known = SUBMIT_OPTIONS | {"cwd", "name"}  # (submit's own: `cwdd=` names it)
    refuse_unknown(options, known if sweep else known - {"max_parallel"})
    out = _file_names(in_units({k: plain(v) for k, v in options.items() if v is not None}))
    check_types(out)
    refuse_hold_with_begin(out)  # (with begin as given: the daemon's words named --begin)
    if "begin" in out:
        out["begin"] = begin_seconds(out["begin"])
    for key in KINDS:
        out[key] = resolve_last(client, job_ids(out.get(key, ()), key, job_type, client), key)
    out["env_overrides"] = env_overrides(out.pop("env", {}))
    if "on_no_output" in out:
        out["kill_on_no_output"] = _kill_on_no_output(out)
    return out


def _file_names(out: dict[str, Any]) -> dict[str, Any]:
    """`out` with its `output` and `error` as text: a Path too (the daemon takes a relative
    one from the job's cwd)."""
    for key in ("output", "error"):
        value = out.get(key)
        if isinstance(value, os.PathLike):
            value = out[key] = os.fspath(value)
        if value is not None and not isinstance(value, str):  # (bytes failed in json.dumps)
            raise WrongType(f"{key} is a file name (text or a Path), got {as_given(value)}")
    return out


def edit_options(changes: Mapping[str, Any], job_type: type[Any], client: Client) -> dict[str, Any]:
    """`Job.edit` keyword changes as the API takes them, each as `submit` takes it (`cwd`
    made absolute, as a submission's is)."""
    out = _file_names(in_units({k: plain(v) for k, v in changes.items()}))
    check_types(out)
    if out.get("cwd") is not None:
        out["cwd"] = job_cwd(out["cwd"])
    if out.get("begin") is not None:
        out["begin"] = begin_seconds(out["begin"])
    for key in KINDS:
        if out.get(key) is not None:
            out[key] = resolve_last(client, job_ids(out[key], key, job_type, client), key)
    return out


def _kill_on_no_output(options: dict[str, Any]) -> bool:
    """`on_no_output="kill"` or `"flag"` (the CLI's `--on-no-output`), the same as
    `kill_on_no_output=True` or False; both given must agree."""
    given = options.pop("on_no_output")
    if wrong := not_a_choice("on_no_output", given, ON_NO_OUTPUT):
        raise WrongValue(wrong)
    kill: bool = given == "kill"
    if (other := options.get("kill_on_no_output", kill)) != kill:  # (one of them is not meant)
        raise WrongValue(
            f"on_no_output={given!r} and kill_on_no_output={other!r} disagree: give one of them"
        )
    return kill


def sweep_order(order: Any) -> str:
    """`Herd.sweep`'s `order` (default "given"), checked here as `--order`'s choice is: the
    daemon, which checks it too, is asked nothing for a misspelt one."""
    order = "given" if order is None else order
    if wrong := not_a_choice("order", order, ORDERS):
        raise WrongValue(wrong)
    return str(order)


def job_ids(value: Any, key: str, job_type: type[Any], client: Client) -> list[int | str]:
    """`after`, `after_any` or `after_fail` as given: a job handle (of `client`'s daemon: one
    of another's is refused), an id, text as `--after` takes it ("3-5,7", or "last": the job
    submitted last, left for `resolve_last`), or a list of these. Text is never read one
    character at a time ("12" is job 12)."""
    one = isinstance(value, str | int | job_type | bytes | Mapping)
    items = list(value) if isinstance(value, Iterable) and not one else [value]
    found: list[int | str] = []
    for item in items:
        if isinstance(item, job_type):
            refuse_other_home(item, client.home, key)
            found.append(item.id)
        elif isinstance(item, int) and not isinstance(item, bool) and item > 0:
            found.append(item)
        elif isinstance(item, str):  # ("82,last" too, as --after takes it)
            try:
                found += parse_after_refs(item, LAST, repr(LAST))
            except ValueError as exc:
                raise WrongValue(f"{key}: {exc}") from None
        else:
            raise WrongValue(
                f"{key}: {item!r} is not a job: give job handles, ids (a list of them, or "
                "text such as '3-5,7'), or 'last' (the job submitted last)"
            )
    return found


def env_overrides(env: Any) -> dict[str, str]:
    """`env` as the job's NAME=VALUE changes. A value is text, or a number as its text (as a
    sweep file's env takes it): None, True or an object would reach the job as its repr.
    Names and sizes as `--env` takes them (core/env_vars.py)."""
    if not isinstance(env, Mapping):  # (WrongType: a TypeError, in one line, as the others)
        words = env.split() if isinstance(env, str) else env
        meant = {"NAME": "value"}  # ["A=1"], or "A=1 B=2", as --env takes them: that dict
        if isinstance(words, list | tuple) and all(isinstance(w, str) and "=" in w for w in words):
            meant = dict(word.split("=", 1) for word in words) or meant
        raise WrongType(f"env is a dict of names to values (env={meant!r}), got {as_given(env)}")
    found: dict[str, str] = {}
    for name, value in env.items():
        if not isinstance(name, str):
            raise WrongType(f"env: the name {as_given(name)} is not text")
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise WrongType(f"env: {name}={value!r}: give the value as a string (or a number)")
        try:
            check_variable(name, str(value))
        except ValueError as exc:
            raise WrongValue(f"env: {exc}") from None
        found[name] = str(value)
    return found


def job_cwd(cwd: str | Path | None) -> str:
    """The folder a job runs in, absolute (default: this process's working folder)."""
    if cwd is not None and not isinstance(cwd, str | os.PathLike):  # (Path(3) said less)
        raise WrongType(f"cwd is a folder (text or a Path), got {as_given(cwd)}")
    if cwd == "":  # (a script's unset variable: it ran the job wherever Python ran)
        raise HerdError("cwd is empty: give the folder the job runs in, or leave cwd out")
    # (a relative one is taken from this process's folder, which may have been removed)
    given = cwd if cwd and os.path.isabs(cwd) else None
    path = Path(given or Path(current_folder("cwd=FOLDER"), cwd or ""))
    if path.exists() and not path.is_dir():
        raise HerdError(f"cwd {path} is not a folder: give the folder the job runs in")
    return str(path)


def in_units(options: dict[str, Any]) -> dict[str, Any]:
    """Sizes in bytes and durations in seconds, where they were given as text ("10GiB") or
    as a timedelta, and `only_gpus` as a list of indices."""
    if options.get("only_gpus") is not None:
        options["only_gpus"] = gpu_indices(options["only_gpus"])
    for key in ("mem", "ram"):
        value = options.get(key)
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            options[key] = read_value(key, memory_amount, value)  # mem=10: 10 bytes, refused
    cap = options.get("max_log_size")
    if isinstance(cap, str):  # "none": no cap (0, said so)
        options["max_log_size"] = read_value("max_log_size", sent_log_cap, cap)
    elif isinstance(cap, int) and not isinstance(cap, bool):
        if cap <= 0:  # as --max-log-size 0 and `config set max-log-size 0` are (it was no cap)
            raise WrongValue(
                f"max_log_size={cap} is no size: give one, e.g. max_log_size='10GiB', or "
                "max_log_size='none' (the text) for no cap"
            )
        options["max_log_size"] = read_value("max_log_size", memory_amount, cap)  # as mem=10
    for key in ("timeout", "grace", "no_output_timeout", "retry_delay"):
        if isinstance(options.get(key), str):
            options[key] = read_value(key, parse_duration, options[key])
        elif isinstance(options.get(key), timedelta):
            options[key] = options[key].total_seconds()
    return options


def gpu_indices(value: Any) -> list[int]:
    """`only_gpus` as given (core.idspec.gpu_index_list); HerdError naming it otherwise."""
    return list(read_value("only_gpus", gpu_index_list, value))


def make_spec(
    name: str,
    command: str,
    params: Mapping[str, Iterable[Any]],
    fixed: Mapping[str, Any] | None,
) -> SweepSpec:
    """A sweep of `command` over the grid of `params` (name -> list of values)."""
    if not isinstance(params, Mapping):
        raise WrongType(
            f"params must be a dict of lists ({{'lr': [0.1, 0.01]}}), got {as_given(params)}"
        )
    grid = {}
    for key, values in params.items():
        values = plain(values)  # a numpy array: a list
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise HerdError(f"parameter {key!r}: give a list of values, got {values!r}")
        if isinstance(values, Mapping):  # (its keys alone were swept, its values dropped)
            raise HerdError(
                f"parameter {key!r}: give a list of values, got a dict {values!r}: "
                f"to sweep its values, give list(d.values())"
            )
        if isinstance(values, Set):  # (in hash order: another order at each run of a script)
            values = _in_order(values)
        grid[key] = tuple(plain(list(values)))
    try:
        return SweepSpec(
            name=name,
            command=command,
            results_dir=f"results/{name}",
            fixed=plain(dict(fixed or {})),
            grids=(grid,) if grid else (),
        )
    except SweepError as exc:  # (an InvalidValue, as the daemon's refusal of a sweep is)
        raise WrongValue(f"invalid sweep: {exc}") from None


def _in_order(values: Set[Any]) -> list[Any]:
    """A set's values sorted (its points then run in the same order at each run), or, of
    values that do not sort (`{1, "a"}`), by their text."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=repr)


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


__all__ = [
    "connect_spelling",
    "in_units",
    "is_sweep_file",
    "job_cwd",
    "make_spec",
    "plain",
    "python_spelling",
    "start_options",
    "submit_options",
    "sweep_warnings",
    "warn_at_caller",
]
