"""No job is submitted while a job's worker imports the user's module to find its task.

A job of `@gpuherd.task` runs `python -m gpuherd.worker`, which imports (or, for a script,
runs under the name `__mp_main__`) the module the task is defined in: its top level runs
again in every job. A `submit()` or `sweep()` call left there, outside an
`if __name__ == "__main__":` block, would submit another job from every job, for ever. So
while the worker loads the module (`loading`), and in a process that multiprocessing's
"spawn" or "forkserver" start is bootstrapping (it runs the main script's top level too),
those calls raise BootstrapError, as multiprocessing refuses to start a process then.

Only the standard library and gpuherd.errors are imported: the worker imports this module
before the user's code.
"""

from __future__ import annotations

import sys

from gpuherd.errors import HerdError

loading: str | None = None
"""The module (or script path) the worker is importing to find the task, while it does."""


class BootstrapError(HerdError):
    """A job was to be submitted from a module's top level while a job imported it."""


def refuse_while_loading(action: str) -> None:
    """Raise BootstrapError if called while a job imports the task's module."""
    where = loading
    if where is None:
        process = sys.modules.get("multiprocessing.process")
        current = getattr(process, "current_process", None)
        if current is None or not getattr(current(), "_inheriting", False):
            return
        where = "the main script in a process multiprocessing started"
    raise BootstrapError(
        f"{action}() was called while loading {where}: a module's top level runs again in "
        'every job of its tasks, so put the calls that submit jobs under `if __name__ == "'
        '__main__":`'
    )


__all__ = ["BootstrapError", "loading", "refuse_while_loading"]
