"""Python functions as jobs: `@gpuherd.task`, and GPU Task Scheduler configs and classes.

    @gpuherd.task(gpus=1)
    def train(lr: float, bs: int, run_dir: str) -> dict: ...

    train.submit(lr=0.1, bs=32)                       # one job; .result() is its return value
    train.sweep(lr=[0.1, 0.01], bs=[32, 64], results_dir="results/train")

The job runs `python -m gpuherd.worker module:function` (worker.py): the function is found by
its import path (or, defined in a script's `__main__`, by the script's path, with the
arguments the script was run with: tasks_script_args.py), not pickled: each job imports it
fresh. One defined interactively (a notebook, `python -c`) or in a module made at run time,
which no job could find so, is pickled by value at submit (tasks_pickled.py).
A call is checked against the function's signature at submit; its parameters go on the job's
command line, or, when large, in a file under the home's task-params/ that the job's first
run moves into its folder.
"""

from __future__ import annotations

import functools
import inspect
import shlex
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Generic, ParamSpec, TypeVar, overload

from gpuherd import paths, tasks_by_name, tasks_pickled, worker
from gpuherd.errors import HerdError
from gpuherd.pyapi import Herd, Job, Sweep
from gpuherd.pyapi_checks import refuse_unknown
from gpuherd.pyapi_sweep import SWEEP_OWN
from gpuherd.pyapi_types import WrongType, check_types
from gpuherd.pyapi_values import SUBMIT_OPTIONS, in_units, make_spec, plain
from gpuherd.tasks_checks import check_options, refuse_unfit
from gpuherd.tasks_guard import refuse_while_loading
from gpuherd.tasks_main_block import refuse_main_block
from gpuherd.tasks_options import (
    check_read_at_submit,
    check_sweep_own,
    connected,
    home_of,
    own_list,
    task_herd,
)
from gpuherd.tasks_params import checked, params_text
from gpuherd.tasks_pickled import DefinedInteractively, made_at_run_time, removed_unless_queued
from gpuherd.tasks_repr import task_repr
from gpuherd.tasks_script_args import script_args, write_task_text

PARAMS_INLINE_MAX = 16 * 1024
"""Larger parameters (as JSON) go in a file: one argument of a command line holds 128 KiB."""
JOB_OPTIONS = SUBMIT_OPTIONS | {"name", "cwd", "herd"}
"""What `gpuherd.task(...)` takes: a call's keyword of these names, which the function does
not take, was meant as a job option."""


class TaskArgumentError(HerdError, TypeError):
    """A task's call does not fit its function's signature (found at submit)."""


# ---- tasks ----------------------------------------------------------------------------------


P = ParamSpec("P")
R = TypeVar("R")


class Task(Generic[P, R]):
    """A function (or GPUTask-like class) that runs as a job: `.submit(**params)`, `.sweep()`;
    typed as its function is (P, R), so a user's `mypy --strict` checks what uses it."""

    def __init__(self, fn: Callable[P, R], options: dict[str, Any]) -> None:
        functools.update_wrapper(self, fn)
        # After: update_wrapper copies fn's __dict__, which for a task holds its own options.
        self.fn = fn
        self.options = options
        self.__gpuherd_task__ = getattr(fn, "__gpuherd_task__", fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:  # `<gpuherd.task train(lr: float, bs: int) gpus=1>`
        return task_repr(self.fn, self.options)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickled by reference, as a function is: found again by its module and name
        (tasks_by_name.py); by value within cloudpickle's dump of an interactive function."""
        if tasks_by_name.pickled_by_value():
            return super().__reduce_ex__(protocol)
        return tasks_by_name.found, tasks_by_name.reference(self)

    def _herd(self) -> Herd:  # (`herd=` a Herd, a home's folder, or GPUHERD_HOME's)
        return connected(self.options.get("herd"))

    def _home(self) -> Path:
        """The home `_herd()` connects to (a pickle is written there before connecting)."""
        return home_of(self.options.get("herd"))

    def _job_options(self) -> dict[str, Any]:
        return {k: v for k, v in self.options.items() if k != "herd"}

    def _check_call(self, params: Mapping[str, Any], call: str) -> None:
        """TaskArgumentError now, rather than a failed job later, for a call the function
        cannot take (a GPUTask-like class takes any config)."""
        if "run_dir" in params:  # the worker would replace it with the job's folder, silently
            raise TaskArgumentError(
                f"{self.fn.__name__}() is given run_dir by gpuherd (the job's folder, or the "
                "sweep point's): it cannot be passed; name a folder of your own otherwise "
                "(out_dir=...)"
            )
        if inspect.isclass(self.fn):
            return
        try:
            worker.arguments(self.fn, dict(params), run_dir="")
        except worker.UnknownParameter as exc:
            raise self._unknown_error(exc, call) from None
        except worker.WorkerError as exc:
            raise TaskArgumentError(str(exc)) from None
        # A **kwargs takes any keyword: `train.submit(lr=1, gpus=2)` ran on the task's GPUs,
        # its gpus=2 a parameter the function never read. A job option it does not name is
        # the job option meant, refused as for a function without **kwargs.
        named = self._named_parameters()
        if meant := next((k for k in params if k in JOB_OPTIONS and k not in named), None):
            raise self._job_option_error(meant, call, through_kwargs=True)

    def _unknown_error(self, exc: worker.UnknownParameter, call: str) -> TaskArgumentError:
        """A keyword the function does not take, named with the parameter or the job option
        it is closest to: `gpu=1` was meant as the job option gpus, not as a new parameter."""
        if exc.name in JOB_OPTIONS:
            return self._job_option_error(exc.name, call)
        import difflib  # (only on this error path)

        parameters = [k for k in self._named_parameters() if k != "run_dir"]
        own = [*SWEEP_OWN, "results_dir"] if call == "sweep" else []  # (result_dir=: a typo)
        for known in (parameters, own, JOB_OPTIONS):
            if close := difflib.get_close_matches(exc.name, known, n=1):
                if known is own:
                    return TaskArgumentError(
                        f"{exc.function}() takes no parameter {exc.name!r}; did you mean "
                        f"{close[0]}? {close[0]} is the sweep's own option: "
                        f"{exc.function}.sweep(..., {close[0]}=...)"
                    )
                if known is JOB_OPTIONS:
                    return self._job_option_error(close[0], call, given=exc.name)
                said = worker.UnknownParameter(exc.function, exc.name, guess=close[0])
                return TaskArgumentError(str(said))
        return TaskArgumentError(str(exc))

    def _job_option_error(
        self, key: str, call: str, given: str | None = None, through_kwargs: bool = False
    ) -> TaskArgumentError:
        name = self.fn.__name__
        said = f"{key!r}, and" if given is None else f"{given!r}; did you mean {key}?"
        if through_kwargs:
            said = f"{key!r} but through its **kwargs, and"
        return TaskArgumentError(
            f"{name}() takes no parameter {said} {key} is a job option: job options go "
            f"in the task, @gpuherd.task({key}=...), or for one call in a task of the task, "
            f"gpuherd.task({key}=...)({name}).{call}(...)"
        )

    def _named_parameters(self) -> list[str]:
        """The parameters the function names (not a **kwargs's), in order; none for a class."""
        try:
            accepted = {} if inspect.isclass(self.fn) else inspect.signature(self.fn).parameters
        except (TypeError, ValueError):
            return []
        variadic = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
        return [k for k, p in accepted.items() if p.kind not in variadic]

    def _by_name_error(self, call: str, given: str) -> TaskArgumentError:
        """Python's own error named `Task.submit()`, not the function, nor how to call it."""
        name = self.fn.__name__
        keywords = [f"{k}=..." for k in self._named_parameters() if k != "run_dir"]
        example = ", ".join(keywords[:3] or ["name=value"])
        return TaskArgumentError(
            f"{name}.{call}() takes {name}'s parameters by name, not {given}: "
            f"{name}.{call}({example})"
        )

    def submit(self, *args: Any, **params: Any) -> Job:
        """Run one call as a job (`job.result()` is its return value). The call is checked
        against the function's signature now: TaskArgumentError if it does not fit."""
        refuse_while_loading("submit")
        if args:
            raise self._by_name_error("submit", f"by position {args!r}")
        params = checked(params, self.fn.__name__)  # (a key JSON would make text, say)
        self._check_call(params, "submit")
        text = params_text(params, self.fn.__name__)  # (naming a parameter JSON cannot carry)
        herd = self._herd()
        command, made = task_command(self.fn, herd.client.home)
        with removed_unless_queued(made):  # (the files made for the job: if it is not queued)
            if len(text.encode()) <= PARAMS_INLINE_MAX:
                command += " --params " + shlex.quote(text)
            else:
                made.append(staged := _stage_params(herd, text))
                command += " --params-file " + shlex.quote(str(staged))
            options = self._job_options()
            options.pop("max_parallel", None)  # (its sweeps' cap: one job has none)
            gpus, name = options.pop("gpus", 1), options.pop("name", None) or self.fn.__name__
            return herd.submit(command, gpus, name=name, **options)

    def sweep(
        self,
        results_dir: str | Path | None = None,
        *,
        params: Mapping[str, Iterable[Any]] | None = None,
        **kwargs: Any,
    ) -> Sweep:
        """Run a grid: `train.sweep(lr=[0.1, 0.01], bs=[32, 64], results_dir="results/x")`.

        Keyword lists are parameters; name, samples, seed (a number), shuffle, fixed, force,
        yes, dry_run, cwd and order are the sweep's own. To sweep a parameter named like one of
        those, give it a list (`seed=[1, 2, 3]`) or pass `params={...}`; to fix it,
        `fixed={"seed": 5}`. For a function with a parameter of such a name, a value that is
        not a list is refused (whose is it?): the sweep's own is then `sweep_seed=5`."""
        refuse_while_loading("sweep")
        if isinstance(results_dir, list | tuple | range | dict):
            # (`train.sweep([0.1, 0.01])`: its one positional argument is the folder)
            raise self._by_name_error("sweep", f"{results_dir!r} as results_dir (a folder)")
        grid = checked(dict(params or {}), self.fn.__name__)
        sweep_args: dict[str, Any] = {}
        given: dict[str, str] = {}  # (the keyword each own option was given as: sweep_seed)
        for key, value in checked(kwargs, self.fn.__name__).items():  # numpy's: as lists
            if isinstance(value, list | tuple | range) and not own_list(self.fn, key):
                grid[key] = value
            elif (own := self._sweep_option(key, value)) is not None:
                sweep_args[own], given[own] = value, key
            elif key in JOB_OPTIONS and key not in self._named_parameters():
                raise self._job_option_error(key, "sweep")
            else:
                grid[key] = value  # make_spec says that a parameter takes a list
        check_sweep_own(sweep_args, given, results_dir)  # (herd.sweep's words: `name=5`)
        # A range is its values, as herd.sweep takes it (params_text refused it as one value).
        grid = {key: list(v) if isinstance(v, range) else v for key, v in grid.items()}
        self._check_call(dict.fromkeys([*grid, *(sweep_args.get("fixed") or {})]), "sweep")
        for key, values in [*grid.items(), *(sweep_args.get("fixed") or {}).items()]:
            params_text({key: values}, self.fn.__name__)  # (a Path, a set: named, as submit's)
        options = self._job_options()
        # A name given goes on to herd.sweep, which refuses an empty one (`name=""`, a script's
        # unset variable), as a sweep file's `name: ""`: it was the function's, without a word.
        name = sweep_args.get("name") or options.pop("name", None) or self.fn.__name__
        command, made = task_command(self.fn, self._home(), sweep=True)
        with removed_unless_queued(made, dry_run=bool(sweep_args.get("dry_run"))):
            spec = make_spec(name, command, grid, sweep_args.pop("fixed", None))
            return self._herd().sweep(
                spec, results_dir=results_dir, task=True, **{**options, **sweep_args}
            )

    def _sweep_option(self, key: str, value: Any) -> str | None:
        """The sweep's own option a keyword given a single value is (`seed` or `sweep_seed`),
        if it is one; TaskArgumentError if the function has a parameter of that name too."""
        own = key.removeprefix("sweep_")
        if own not in SWEEP_OWN:
            return None
        if key in self._named_parameters():
            name = self.fn.__name__
            other = f"sweep_{own}" if key == own else own
            raise TaskArgumentError(
                f"{name}() has a parameter {key!r}, and {key} is also the sweep's own option: "
                f"give {name}'s value as fixed={{{key!r}: {value!r}}} (or a list, {key}="
                f"[{value!r}], to sweep it), and the sweep's as {other}={value!r}"
            )
        return own


@overload
def task(fn: Callable[P, R], *, gpus: int | None = None, **options: Any) -> Task[P, R]: ...


@overload
def task(
    fn: None = None, *, gpus: int | None = None, **options: Any
) -> Callable[[Callable[P, R]], Task[P, R]]: ...


# (the overloads type it: as Any, it made a decorated function untyped, a --strict error)
def task(fn: Callable[..., Any] | None = None, *, gpus: int | None = None, **options: Any) -> Any:
    """Decorate a top-level function to run as jobs: `@gpuherd.task(gpus=1)` (1 GPU unless
    given). Options as `submit` (mem, priority, retries, timeout, ...), and `herd=` the
    daemon to use: a connection (`gpuherd.connect(...)`) or a home's folder (connected at
    each submit, as `gpuherd.connect(home)` is, starting its daemon if none runs). Applied
    to a task, the options given change that task's and keep the others, as a
    functools.partial of a partial does: `gpuherd.task(gpus=2)(train)` is train on 2 GPUs;
    the task itself is left as it was."""
    given = options if gpus is None else {"gpus": gpus, **options}
    if fn is not None and not callable(fn):  # `@gpuherd.task(2)`: was "2 cannot run as a task"
        raise WrongType(f"gpuherd.task() takes its options by name: @gpuherd.task(gpus={fn!r})")
    refuse_unknown(given, JOB_OPTIONS)  # here, not at the task's first submit
    check_types(in_units({k: plain(v) for k, v in given.items() if v is not None}))  # (so too)
    if "herd" in given:  # (a home's folder too, connected at each submit; it was ignored)
        given = {**given, "herd": task_herd(given["herd"])}

    def wrap(function: Callable[..., Any]) -> Task[..., Any]:
        try:
            target, _ = worker_target(function)  # fail now, not in the job, for a lambda...
        except DefinedInteractively:
            target = ""  # pickled at each submit (what it uses may be defined after it)
        if target.startswith("/"):  # a script's function: checked once, here (it reads the script)
            script, _, qualname = target.rpartition(":")
            refuse_main_block(Path(script), qualname)
        base = function.options if isinstance(function, Task) else {"gpus": 1}
        options = {**base, **given}
        check_options(in_units({k: plain(v) for k, v in options.items() if v is not None}))
        check_read_at_submit(options)  # (cwd=5, env=['A=1'], begin='whenever': each submit's)
        return Task(function.fn if isinstance(function, Task) else function, options)

    return wrap(fn) if fn is not None else wrap


def _stage_params(herd: Herd, text: str) -> Path:
    """Write the parameters to a new file under the home's task-params/ (only this user can
    read it); the job moves it into its own folder when it first runs (worker.py)."""
    folder = paths.task_params(herd.client.home)
    path = folder / f"{uuid.uuid4().hex}.json"
    write_task_text(path, text, "the task's parameters", "too large for a")
    return path


def worker_target(fn: Any) -> tuple[str, str | None]:
    """(`module:qualname` or `/path/script.py:qualname`, the folder to import it from)."""
    fn = getattr(fn, "__gpuherd_task__", fn)
    qualname = getattr(fn, "__qualname__", "")
    if not qualname or "<" in qualname:
        raise HerdError(f"{fn!r} cannot run as a task: define it at the top level of a module")
    refuse_unfit(fn)  # (a generator, parameters by position alone: at decoration, and submit)
    if inspect.ismethod(fn) and not inspect.isclass(fn.__self__):  # (a classmethod is found)
        raise HerdError(
            f"{qualname} is a method of an object, which a job cannot find again (the job "
            f"would call {qualname} without it): make it a top-level function or a staticmethod"
        )
    module_name = fn.__module__
    module = sys.modules.get(module_name)
    if module_name == "__main__" and tasks_pickled.unpickled_in_main(fn, module):
        raise DefinedInteractively(f"{qualname} was unpickled: no file defines it")
    if made_at_run_time(module_name, module):  # (exec() with a __name__, types.ModuleType)
        raise DefinedInteractively(f"{qualname}'s module {module_name!r} has no file to import")
    file = getattr(module, "__file__", None)
    spec = getattr(module, "__spec__", None)
    if module_name == "__main__" and spec is not None and spec.name not in ("__main__", None):
        module_name = spec.name  # run as `python -m package.module`
    if module_name in ("__main__", "__gpuherd_main__", "__mp_main__"):
        if not file:  # (task_command pickles it instead)
            raise DefinedInteractively(
                f"{qualname} was defined interactively: put it in a .py file to run it as a task"
            )
        if not Path(file).is_file():  # `python - < script.py`: __file__ is "<stdin>"
            raise DefinedInteractively(
                f"{qualname} was defined in a script read from {file}, which a job cannot read "
                "again: save it as a .py file and run that to use it as a task"
            )
        return f"{Path(file).resolve()}:{qualname}", None
    root = None
    if file:  # the folder the top-level package sits in, for the job's sys.path
        root = str(Path(file).resolve().parents[module_name.count(".")])
    return f"{module_name}:{qualname}", root


def worker_command(fn: Any, sweep: bool = False) -> str:
    """The job's command (a sweep template with {run_dir} when `sweep`), but for the
    arguments of a script's task's script (task_command adds them)."""
    return _worker_line(_target_args(fn), sweep)


def task_command(fn: Any, home: Path, sweep: bool = False) -> tuple[str, list[Path | None]]:
    """worker_command with the script's arguments for a script's task (tasks_script_args.py),
    or for a function defined interactively its pickle's under `home` (one file for a
    sweep's points); and the files made for it, to remove if not submitted."""
    try:
        args = _target_args(fn)
    except DefinedInteractively:
        fn = getattr(fn, "__gpuherd_task__", fn)
        args, made = tasks_pickled.stage(fn, home, shared=sweep)
        return _worker_line(args, sweep), [made]
    given, made = script_args(home) if args[0].startswith("/") else ([], None)
    return _worker_line([*args, *given], sweep), [made]


def _target_args(fn: Any) -> list[str]:
    target, root = worker_target(fn)
    return [target, *(["--path", root] if root is not None else [])]


def _worker_line(args: list[str], sweep: bool) -> str:
    command = shlex.join([sys.executable, "-m", "gpuherd.worker", *args])
    if sweep:
        command = command.replace("{", "{{").replace("}", "}}") + " --run-dir {run_dir}"
    return command


__all__ = [
    "Task",
    "TaskArgumentError",
    "task",
    "worker_command",
    "worker_target",
]
