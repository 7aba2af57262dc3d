"""gpuherd: a GPU job queue for machine-learning experiments.

The Python API (`connect`, `Herd`, `Job`, `ListedJob`, `Sweep`, `JobFailed`, `SweepWarning`
from gpuherd.pyapi; `JobRemoved` from gpuherd.pyapi_removed; `as_completed` from
gpuherd.pyapi_completed; `task`, `Task`, `TaskArgumentError` from gpuherd.tasks;
`sweep_from_config` from gpuherd.tasks_gts; `GPUTask` from gpuherd.gts_task; `WaitWarning`
from gpuherd.pyapi_stuck; `HerdError`, what every error of gpuherd is) is
imported on first use, so `import gpuherd` (and the CLI) stay fast. So is `gpuherd.errors`,
as an attribute too: scripts name its errors after a bare `import gpuherd` (`except
gpuherd.errors.NotFound`). (Imported here, a Ctrl-C as the CLI loads came before its handler
was in place, cli/entry.py: a traceback.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

_API = {
    "connect": "pyapi",
    "as_completed": "pyapi_completed",
    "Herd": "pyapi",
    "Job": "pyapi",
    "ListedJob": "pyapi",
    "Sweep": "pyapi",
    "SweepWarning": "pyapi",
    "task": "tasks",
    "sweep_from_config": "tasks_gts",
    "GPUTask": "gts_task",
    "WaitWarning": "pyapi_stuck",
    "Task": "tasks",
    "JobFailed": "pyapi",
    "JobRemoved": "pyapi_removed",
    "TaskArgumentError": "tasks",
    "HerdError": "errors",
}

if TYPE_CHECKING:
    from gpuherd import errors as errors
    from gpuherd.errors import HerdError
    from gpuherd.gts_task import GPUTask
    from gpuherd.pyapi import Herd, Job, JobFailed, ListedJob, Sweep, SweepWarning, connect
    from gpuherd.pyapi_completed import as_completed
    from gpuherd.pyapi_removed import JobRemoved
    from gpuherd.pyapi_stuck import WaitWarning
    from gpuherd.tasks import Task, TaskArgumentError, task
    from gpuherd.tasks_gts import sweep_from_config


def __getattr__(name: str) -> Any:
    if name in _API or name == "errors":
        import importlib

        if name == "errors":  # (the module itself: importing it binds it here from then on)
            return importlib.import_module("gpuherd.errors")
        return getattr(importlib.import_module(f"gpuherd.{_API[name]}"), name)
    raise AttributeError(f"module 'gpuherd' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API, "errors"])


__all__ = [
    "GPUTask",
    "Herd",
    "HerdError",
    "Job",
    "JobFailed",
    "JobRemoved",
    "ListedJob",
    "Sweep",
    "SweepWarning",
    "Task",
    "TaskArgumentError",
    "WaitWarning",
    "__version__",
    "as_completed",
    "connect",
    "errors",
    "sweep_from_config",
    "task",
]
