"""A task's options read as its submits and sweeps read them, checked when the task is made
(tasks.py's `task()`), and its sweep's own options checked before its spec is made.

The decorator checked the kinds of some options (timeout, mem, gpus, name, hold) at once,
but took `cwd=5`, `env=['A=1']`, `begin='whenever'`, `after='soon'`, `output=5`,
`on_no_output='explode'` and `max_parallel=-1`, and refused them only at each submit (or
sweep); `herd="/some/home"` and `herd=5` were ignored without a word, the jobs sent to
GPUHERD_HOME's daemon. Each is refused here in the words a submit (or sweep) refuses it in.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gpuherd import paths
from gpuherd.core.deps import KINDS
from gpuherd.errors import HerdError
from gpuherd.pyapi import Herd, Job, connect
from gpuherd.pyapi_sweep import SWEEP_OWN, check_keywords
from gpuherd.pyapi_types import WrongType, WrongValue, as_given
from gpuherd.pyapi_values import job_cwd, job_ids, submit_options, sweep_order


def task_herd(herd: Any) -> Herd | Path | None:
    """`herd=` as a task keeps it: a connection (a Herd), a home's folder (text or a Path,
    made absolute now, as a relative GPUHERD_HOME is on first reading: the task is connected
    to it at each submit, as `gpuherd.connect(home)`, starting its daemon if none runs), or
    None (GPUHERD_HOME's). WrongType for another kind, HerdError for an empty folder."""
    if herd is None or isinstance(herd, Herd):
        return herd
    if not isinstance(herd, str | os.PathLike) or isinstance(herd, bytes):
        raise WrongType(
            "herd is a connection (herd=gpuherd.connect(...)) or a home's folder (text or a "
            f"Path, as gpuherd.connect(home) takes it), got {as_given(herd)}"
        )
    if os.fspath(herd) == "":  # (a script's unset variable: as connect(home="") is refused)
        raise HerdError("herd is empty: give a home's folder or a connection, or leave herd out")
    return paths.home_dir(os.fspath(herd))


def connected(herd: Herd | Path | None) -> Herd:
    """The connection a task's `herd` names (task_herd): connect()ed now, unless a Herd."""
    return herd if isinstance(herd, Herd) else connect(herd)


def home_of(herd: Herd | Path | None) -> Path:
    """The home `connected(herd)` connects to, without connecting."""
    if isinstance(herd, Herd):
        return herd.client.home
    return herd if herd is not None else paths.home_dir()


def check_read_at_submit(options: Mapping[str, Any]) -> None:
    """The options a task's submit reads (env, begin, after..., output, on_no_output, cwd),
    and a sweep's cap (max_parallel), read now as they are then, in their words: refused at
    once rather than at each submit. What they are read as is not kept: `begin="+1h"` is an
    hour from each submit, and `after="last"` the job last submitted before it."""
    given = {k: v for k, v in options.items() if v is not None and k not in ("herd", "cwd")}
    for key in KINDS:  # (job handles: each submit checks that they are of its daemon)
        if key in given:
            _job_ids(given.pop(key), key)
    submit_options(given, Job, None, sweep=True)  # type: ignore[arg-type]  # (no `last` left)
    cwd = options.get("cwd")
    if cwd is not None and (cwd == "" or not isinstance(cwd, str | os.PathLike)):
        job_cwd(cwd)  # (its refusals alone: a folder is taken from where each submit runs)
    cap = given.get("max_parallel")
    if isinstance(cap, int) and cap < 1:  # (the daemon's words: a sweep was refused so)
        raise WrongValue(
            f"max_parallel {cap}: no point of the sweep could ever start; give 1 or more "
            "(how many of its points may run at once)"
        )


def _job_ids(value: Any, key: str) -> None:
    one = isinstance(value, str | int | Job | bytes | Mapping)
    items = list(value) if isinstance(value, Iterable) and not one else [value]
    job_ids([item for item in items if not isinstance(item, Job)], key, Job, None)  # type: ignore[arg-type]


def check_sweep_own(own: Mapping[str, Any], given: Mapping[str, str], results_dir: Any) -> None:
    """A task's sweep's own options (`own`, by their own names; `given`: the keyword each was
    given as, `sweep_seed` say) and `results_dir` of the wrong kind, refused as herd.sweep
    refuses them (`name=5` raised "argument of type 'int' is not iterable", `fixed=5`
    "Value after * must be an iterable"), naming the keyword as it was given."""
    for key, value in {**own, "results_dir": results_dir}.items():
        try:
            check_keywords((), {key: value})
            if key == "cwd" and (value == "" or not isinstance(value, str | os.PathLike | None)):
                job_cwd(value)
            if key == "order" and value is not None:
                sweep_order(value)
        except HerdError as exc:
            said = given.get(key, key)
            if said == key:
                raise
            raise type(exc)(said + str(exc).removeprefix(key)) from None


def own_list(fn: Any, key: str) -> bool:
    """Whether a list given to a task's sweep as `key` is for the sweep's own option, not a
    parameter's values: `sweep_seed=[1]`, or `fixed=["lr"]` to a function that takes no
    `fixed` (it said "train() takes no parameter 'fixed'; did you mean fixed?"); refused
    then by check_sweep_own, as herd.sweep refuses it."""
    if key.removeprefix("sweep_") not in SWEEP_OWN:
        return False
    if key.startswith("sweep_") or inspect.isclass(fn):
        return key.startswith("sweep_")
    try:
        accepted = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    return not takes_any and key not in accepted
