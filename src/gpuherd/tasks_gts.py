"""`gpuherd.sweep_from_config`: a GPU Task Scheduler config (scheduler_config, global_config,
test_config) submitted as a sweep of its GPUTask class or a task function."""

from __future__ import annotations

import os
import reprlib
from collections.abc import Mapping
from typing import Any

from gpuherd.errors import HerdError
from gpuherd.pyapi import Herd, Sweep, SweepWarning
from gpuherd.pyapi_types import WrongType, as_given
from gpuherd.pyapi_values import warn_at_caller
from gpuherd.tasks import Task, task_command
from gpuherd.tasks_guard import refuse_while_loading
from gpuherd.tasks_options import connected, home_of, task_herd
from gpuherd.tasks_pickled import removed_unless_queued


def sweep_from_config(
    config: Mapping[str, Any],
    task: Any,
    *,
    name: str | None = None,
    herd: Herd | str | os.PathLike[str] | None = None,
    force: bool | None = None,
    gpus: int | None = None,
    **options: Any,
) -> Sweep:
    """Submit a GPU Task Scheduler config (scheduler_config, global_config, test_config) with
    its GPUTask class (or a task function). `force_rerun`, the GPUs per job (the length of
    an entry of scheduler_config.gpu) and which GPUs (`only_gpus`: those the gpu list names)
    are taken from the config unless given here. A task (`@gpuherd.task(...)`, or
    `gpuherd.task(...)(MyGPUTask)`) brings its own options (hold, timeout, retries, herd,
    name, ...), as its `.sweep()` does; a keyword given here wins over the task's, and a
    task's `gpus` other than 1 (a task's unless given) over the config's gpu list."""
    from gpuherd.core.sweep_config import gts_gpu_ids, unused_scheduler_keys
    from gpuherd.sweepfile import SweepFileError, from_config

    refuse_while_loading("sweep_from_config")
    scheduler = checked_scheduler(config)  # (before the task is pickled: a file left behind)
    fn = getattr(task, "__gpuherd_task__", task)
    # The task's options, as Task.sweep takes them: they were dropped without a word (a
    # task's hold=True ran every point at once, its gpus=0 on a GPU, with no timeout).
    own = dict(task.options) if isinstance(task, Task) else {}
    own_herd, own_name, own_gpus = own.pop("herd", None), own.pop("name", None), own.pop("gpus", 1)
    where = own_herd if herd is None else task_herd(herd)  # (a home's folder too, as the task's)
    options = {**own, **options}
    if force is None:
        force = scheduler.get("force_rerun") or False
    command, made = task_command(fn, home_of(where), sweep=True)
    with removed_unless_queued(made, dry_run=bool(options.get("dry_run"))):
        try:
            spec = from_config(config, name=fn.__name__, command=command)
            if gpus is None:  # (after from_config: it refuses a gpu that is no list)
                gpus = own_gpus if own_gpus != 1 else config_gpus(scheduler)
            if "only_gpus" not in options and scheduler.get("gpu") and gpus != 0:
                # GTS ran on the GPUs its list names and no others (a colleague's, the display's);
                # a point on no GPU has none to keep off (only_gpus with gpus 0 is refused).
                options["only_gpus"] = gts_gpu_ids(scheduler["gpu"])
        except SweepFileError as exc:
            raise HerdError(gts_spelling(str(exc))) from None
        for unused in unused_scheduler_keys(config):
            warn_at_caller(unused, SweepWarning)
        # (`name` given goes on, as Task.sweep's: herd.sweep refuses an empty one, name="")
        name = name if name is not None else own_name
        return connected(where).sweep(spec, name=name, force=force, task=True, gpus=gpus, **options)


def checked_scheduler(config: Any) -> Mapping[str, Any]:
    """The config's scheduler_config, once the config is a dict and what is read from it
    before the sweep's spec is made is of its kind: WrongType otherwise (a list or None was
    an AttributeError; `force_rerun: "no"` was read with bool(), and re-ran every point)."""
    if not isinstance(config, Mapping):
        raise WrongType(
            "config is GPU Task Scheduler's config dict (scheduler_config, global_config, "
            f"test_config), got {reprlib.repr(config)} ({type(config).__name__})"
        )
    scheduler = config.get("scheduler_config") or {}
    if not isinstance(scheduler, Mapping):
        raise WrongType(
            "scheduler_config is a dict (gpu, result_root_folder, force_rerun, ...), "
            f"got {reprlib.repr(scheduler)} ({type(scheduler).__name__})"
        )
    check_separators(scheduler)
    rerun = scheduler.get("force_rerun")  # (None: left out, as check_types takes force=None)
    if rerun is not None and not isinstance(rerun, bool):  # (in force='s words)
        raise WrongType(f"scheduler_config.force_rerun is True or False, got {as_given(rerun)}")
    return scheduler


def config_gpus(scheduler: Mapping[str, Any]) -> int:
    """The GPUs per point the config's gpu list asks for: its first entry's count, with a
    SweepWarning if its entries differ (1 if it has none)."""
    entries = scheduler.get("gpu") or ["0"]
    sizes = [len(e) if isinstance(e, list | tuple) else 1 for e in entries]
    if len(set(sizes)) > 1:  # GTS gives each worker its entry; here every point alike
        mixed = " and ".join(map(str, sorted(set(sizes))))
        warn_at_caller(
            f"scheduler_config.gpu mixes entries of {mixed} GPUs: every point runs on "
            f"{sizes[0]} (the first entry's); pass gpus=N to choose",
            SweepWarning,
        )
    return sizes[0]


_SEPARATORS = {
    "item": "test_config_string_separator",
    "kv": "test_config_string_indicator",
}
"""The sweep's separators (`separators.item`, `.kv`), by the names a GTS config gives them."""


def check_separators(scheduler: Mapping[str, Any]) -> None:
    """WrongType for a separator of the config that is not text: made text before its check,
    `test_config_string_separator: 1` was refused as the character '1' (or None as 'None'),
    under the name `separators.item`, which the config does not have."""
    for which, key in _SEPARATORS.items():
        if key in scheduler and not isinstance(scheduler[key], str):
            default = "','" if which == "item" else "'-'"  # (GTS's: method-GAN,num_packing-1)
            raise WrongType(
                f"scheduler_config.{key} is one punctuation character as text ({default}), "
                f"got {as_given(scheduler[key])}"
            )


def gts_spelling(text: str) -> str:
    """A refusal of the config's sweep, its separators named as the config names them."""
    for which, key in _SEPARATORS.items():
        text = text.replace(f"separators.{which}:", f"scheduler_config.{key}:")
    both = ", ".join(f"scheduler_config.{key}" for key in _SEPARATORS.values())
    return text.replace("separators: item and kv are both", f"{both} are both")
