"""A task pickled as plain functions are: by reference, its module and qualified name, found
again where it is unpickled (tasks.py's `Task.__reduce_ex__`).

Pickle took a task for an object of its own, and pickled its function by name, which named
the task: `pool.submit(train.submit, lr=0.1)` on a ProcessPoolExecutor raised "Can't pickle
<function train>: it's not the same object as __main__.train". A task made from another
(`gpuherd.task(gpus=2)(train)`) is found by its function's name, and carries its options.

cloudpickle, pickling by value a function defined interactively (tasks_pickled.py), takes a
task it uses by value, as before: a job has no `__main__` of the notebook to find it in.
"""

from __future__ import annotations

import importlib
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_BY_VALUE: ContextVar[bool] = ContextVar("gpuherd_tasks_by_value", default=False)


@contextmanager
def tasks_by_value() -> Iterator[None]:
    """Tasks pickled by value within (cloudpickle's dump of an interactive function)."""
    token = _BY_VALUE.set(True)
    try:
        yield
    finally:
        _BY_VALUE.reset(token)


def pickled_by_value() -> bool:
    return _BY_VALUE.get()


def reference(task: Any) -> tuple[str, str, dict[str, Any] | None]:
    """(module, qualified name, the options, or None when the name finds `task` itself), for
    `found` to make the task again; PicklingError if that name does not find its function."""
    fn = task.fn
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    try:
        found = _lookup(module or "", qualname)
    except (ImportError, AttributeError) as exc:
        raise pickle.PicklingError(
            f"cannot pickle the task {qualname}: {module}.{qualname} is not found ({exc}); "
            "define it at the top level of a module"
        ) from None
    if found is task:
        return module or "", qualname, None
    if _function(found) is not fn and _function(found) != fn:  # (a classmethod's: equal)
        raise pickle.PicklingError(
            f"cannot pickle the task {qualname}: {module}.{qualname} is another object now"
        )
    return module or "", qualname, dict(task.options)


def found(module: str, qualname: str, options: dict[str, Any] | None) -> Any:
    """The task `reference` named, looked up again (a task of it, with `options`, if given)."""
    from gpuherd.tasks import Task

    target = _lookup(module, qualname)
    if options is None and isinstance(target, Task):
        return target
    return Task(_function(target), options or {"gpus": 1})


def _lookup(module: str, qualname: str) -> Any:
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _function(target: Any) -> Any:
    from gpuherd.tasks import Task

    return target.fn if isinstance(target, Task) else target
