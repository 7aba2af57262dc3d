"""Tasks defined interactively (a Jupyter notebook, IPython, `python -c`, `python - < x.py`),
pickled by value with cloudpickle at submit, as submitit and Ray run a notebook's functions.

A job finds a task of a module by importing it, and one of a script by loading the script
(tasks.py, worker.py); a function typed into a session has neither, so its code, the globals
it uses and its closure are pickled when it is submitted, into a file under the home's
task-params/ that the job loads (worker_pickled.py). One job's file is moved into the job's
folder at its first run (as large parameters are), so `gpuherd rm` of a job that never ran
removes it and a retry finds it; a sweep's points share one file named by its content (a
resubmission of the same function names the same file, so its done points did not run
"another command"), left in task-params/ for every point and retry.

So is a function of a module made at run time (`exec(code, {"__name__": "cellmod"})`, a
`types.ModuleType`), which no job could import by its name: it was accepted at submit, and
its job failed (`cannot import 'cellmod'`).
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpuherd import paths
from gpuherd.errors import HerdError
from gpuherd.tasks_by_name import tasks_by_value
from gpuherd.worker_pickled import header


class DefinedInteractively(HerdError):
    """A function with no file a job could read it from (its module is `__main__`)."""


class UnpicklableTask(HerdError):
    """A function defined interactively that cannot be pickled (a lock among its globals)."""


def pickled(fn: Any) -> bytes:
    """The file's content: the header line, then `fn` pickled by value. UnpicklableTask,
    naming what could not be pickled and what to do, if it cannot be."""
    import cloudpickle  # type: ignore[import-untyped]  # (only for these tasks: ~20 ms)

    # cloudpickle takes a module in sys.modules for one the job imports: one made at run
    # time is registered to be pickled by value, for this dump alone.
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    name = getattr(module, "__name__", None)
    by_value = inspect.ismodule(module) and made_at_run_time(name, module)
    by_value = by_value and name not in cloudpickle.list_registry_pickle_by_value()
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    try:
        with tasks_by_value():  # (a task it uses too, as before: no job has its __main__)
            data: bytes = cloudpickle.dumps(fn)
    except Exception as exc:  # TypeError, PicklingError, RecursionError...: all say "cannot"
        with tasks_by_value():
            refusal = _refusal(fn, exc, cloudpickle.dumps)
        raise UnpicklableTask(refusal) from None
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)
    return header(fn.__qualname__, str(cloudpickle.__version__)) + data


def made_at_run_time(name: str | None, module: Any) -> bool:
    """Whether a function of module `name` (`module`, as sys.modules has it, or None) was
    defined where no job could import it by that name: a module made at run time, not one
    of a file (a script's `__main__` is found by its path, or pickled: not this)."""
    if name in ("__main__", "__gpuherd_main__", "__mp_main__"):
        return False
    if module is None:  # exec(code, {"__name__": ...}), or a ModuleType never registered
        return True
    return getattr(module, "__spec__", None) is None and not getattr(module, "__file__", None)


def stage(fn: Any, home: Path, *, shared: bool) -> tuple[list[str], Path | None]:
    """Pickle `fn` into the home's task-params/: the worker's arguments that load it, and
    the file made now (None for a sweep's file that was there already), to remove if the
    submission fails."""
    data = pickled(fn)
    folder = paths.task_params(home)
    if shared:
        path = folder / f"task-{hashlib.sha256(data).hexdigest()[:32]}.pkl"
        if path.is_file():  # the same function, globals and Python: the same bytes
            return ["--shared-function-file", str(path)], None
    else:
        path = folder / f"{uuid.uuid4().hex}.pkl"
    try:
        paths.write_task_file(path, data)
    except OSError as exc:
        raise HerdError(
            f"cannot write {fn.__qualname__} pickled ({len(data)} bytes) under {folder}: "
            f"{exc.strerror or exc}"
        ) from None
    return ["--shared-function-file" if shared else "--function-file", str(path)], path


# ---- what could not be pickled ---------------------------------------------------------------


def _refusal(fn: Any, exc: Exception, dumps: Callable[[Any], bytes]) -> str:
    name = fn.__qualname__
    reason = " ".join(str(exc).split()) or type(exc).__name__
    culprit = _culprit(fn, dumps, set()) or "something"
    return (
        f"{name} was defined interactively, so it is pickled to run as a task, but it uses "
        f"{culprit}, which cannot be pickled ({reason}): create that inside the function that "
        f"uses it, or put {name} in a .py file (imported by each job, not pickled)"
    )


def _culprit(fn: Any, dumps: Callable[[Any], bytes], seen: set[int]) -> str | None:
    """`the global 'lock' (a _thread.lock)`: the first value `fn` uses that does not pickle,
    looked for in what an interactive helper it uses uses too (`helper, which uses ...`)."""
    seen.add(id(fn))
    for kind, name, value in _used_values(fn):
        if id(value) in seen:
            continue
        try:
            dumps(value)
        except Exception:
            if _defined_interactively(value) and (deeper := _culprit(value, dumps, seen)):
                return f"{value.__qualname__}, which uses {deeper}"
            what = f"{type(value).__module__}.{type(value).__qualname__}"
            return f"the {kind} {name!r} (a {what.removeprefix('builtins.')})"
    return None


def _used_values(fn: Any) -> Iterator[tuple[str, str, Any]]:
    """The globals a function (or a class's methods) names, its closure's values, and a
    class's own attributes, as (kind, name, value)."""
    if inspect.isclass(fn):
        for name, value in vars(fn).items():
            function = getattr(value, "__func__", value)  # a staticmethod's, a classmethod's
            if inspect.isfunction(function):
                yield from _used_values(function)
            elif not name.startswith("__"):
                yield "class attribute", name, value
        return
    if not inspect.isfunction(fn):
        return
    found = fn.__globals__
    for name in _names(fn.__code__):
        if name in found:
            yield "global", name, found[name]
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        try:
            yield "closure variable", name, cell.cell_contents
        except ValueError:  # an empty cell: nothing to pickle
            continue


def _names(code: Any) -> Iterator[str]:
    """The global names a code object (and the functions and comprehensions in it) uses."""
    yield from code.co_names
    for const in code.co_consts:
        if inspect.iscode(const):
            yield from _names(const)


def unpickled_in_main(fn: Any, module: Any) -> bool:
    """Whether `fn`, whose module is named `__main__`, was not defined in `module` (the
    running `__main__`): cloudpickle gave it globals of its own as a job loaded it. A
    notebook's task that submits another (`inner.submit()` inside the function) runs in a
    job whose `__main__` is gpuherd's worker: `inner` was looked for there by name, and the
    job failed (`gpuherd.worker has no 'inner'`). Such a function is pickled again."""
    namespace = _globals_of(inspect.unwrap(fn) if inspect.isfunction(fn) else fn)
    return namespace is not None and namespace is not getattr(module, "__dict__", None)


def _globals_of(fn: Any) -> dict[str, Any] | None:
    """The globals of a function, or of a class's first method (a GTS class); None: neither."""
    fn = getattr(fn, "__func__", fn)  # a classmethod's function
    if inspect.isfunction(fn):
        return fn.__globals__
    if inspect.isclass(fn):
        methods = (getattr(value, "__func__", value) for value in vars(fn).values())
        return next((m.__globals__ for m in methods if inspect.isfunction(m)), None)
    return None


def _defined_interactively(value: Any) -> bool:
    return (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == "__main__"


@contextmanager
def removed_unless_queued(made: list[Path | None], dry_run: bool = False) -> Iterator[None]:
    """Remove the files made for a submission (`made`, as it is at the end) if it raises, or
    is a dry run: a submission that failed, or queued nothing, leaves no file behind."""
    try:
        yield
    except BaseException:
        _remove(made)
        raise
    if dry_run:
        _remove(made)


def _remove(made: list[Path | None]) -> None:
    for path in made:
        if path is not None:
            path.unlink(missing_ok=True)
