"""`gpuherd.sweep_from_config`: a GPU Task Scheduler config (scheduler_config, global_config,
test_config) submitted as a sweep of its GPUTask class or a task function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuherd import paths
from gpuherd.errors import HerdError
from gpuherd.pyapi import Herd, Sweep, SweepWarning, connect
from gpuherd.pyapi_types import WrongType, as_given
from gpuherd.pyapi_values import warn_at_caller
from gpuherd.tasks import task_command
from gpuherd.tasks_guard import refuse_while_loading
from gpuherd.tasks_pickled import removed_unless_queued


def sweep_from_config(
    config: Mapping[str, Any],
    task: Any,
    *,
    name: str | None = None,
    herd: Herd | None = None,
    force: bool | None = None,
    gpus: int | None = None,
    **options: Any,
) -> Sweep:
    """Submit a GPU Task Scheduler config (scheduler_config, global_config, test_config) with
    its GPUTask class (or a task function). `force_rerun`, the GPUs per job (the length of
    an entry of scheduler_config.gpu) and which GPUs (`only_gpus`: those the gpu list names)
    are taken from the config unless given here."""
    from gpuherd.core.sweep_config import gts_gpu_ids, unused_scheduler_keys
    from gpuherd.sweepfile import SweepFileError, from_config

    refuse_while_loading("sweep_from_config")
    fn = getattr(task, "__gpuherd_task__", task)
    scheduler = config.get("scheduler_config") or {}
    check_separators(scheduler)  # (before the task is pickled: a file left behind)
    home = herd.client.home if herd is not None else paths.home_dir()
    command, made = task_command(fn, home, sweep=True)
    with removed_unless_queued(made, dry_run=bool(options.get("dry_run"))):
        try:
            spec = from_config(config, name=fn.__name__, command=command)
            if "only_gpus" not in options and scheduler.get("gpu"):
                # GTS ran on the GPUs its list names and no others (a colleague's, the display's).
                options["only_gpus"] = gts_gpu_ids(scheduler["gpu"])
        except SweepFileError as exc:
            raise HerdError(gts_spelling(str(exc))) from None
        for unused in unused_scheduler_keys(config):
            warn_at_caller(unused, SweepWarning)
        if force is None:
            force = bool(scheduler.get("force_rerun", False))
        if gpus is None:
            entries = scheduler.get("gpu") or ["0"]
            sizes = [len(e) if isinstance(e, list | tuple) else 1 for e in entries]
            gpus = sizes[0]
            if len(set(sizes)) > 1:  # GTS gives each worker its entry; here every point alike
                mixed = " and ".join(map(str, sorted(set(sizes))))
                warn_at_caller(
                    f"scheduler_config.gpu mixes entries of {mixed} GPUs: every point runs on "
                    f"{gpus} (the first entry's); pass gpus=N to choose",
                    SweepWarning,
                )
        target = herd or connect()
        # (`name` given goes on, as Task.sweep's: herd.sweep refuses an empty one, name="")
        return target.sweep(spec, name=name, force=force, task=True, gpus=gpus, **options)


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
