"""`python -m gpuherd.worker TARGET`: run one Python task (a point of a sweep) in a job.

TARGET is `package.module:function` (imported by name), or `/path/to/script.py:function` for a
task defined in a script run as `__main__`: the script is run as multiprocessing's spawn runs
it in a child process, as the module `__mp_main__` that is also `sys.modules["__main__"]`, so
its `if __name__ == "__main__":` block does not run again, and processes the task starts with
multiprocessing's "spawn" or "forkserver" load it the same way; its sys.argv is the script's
path and the arguments it was submitted with, as spawn's child sees the parent's
(worker_script.py). While the module loads, submitting a job raises (tasks_guard.py), and an
exit at its top level fails the job with one line saying so. The function is called with the
point's parameters, read from `RUN_DIR/params.json` (or given with `--params JSON`, or
`--params-file FILE` for large ones), plus `run_dir` when it takes that argument. Its return
value is written to `RUN_DIR/result.json` as it is, and to `RUN_DIR/metrics.json` what of it
fits the sweep table (a dict's short entries, another value but None as `{"result": value}`:
task_metrics.py); both are removed first, so a run that returns None, exits or fails shows
none of an earlier run's (clear_return_files). What JSON cannot hold is stored as its text,
said in one line on stderr (task_values.py): the function succeeded, so its run is kept. An
exception fails the job with the traceback on stderr, and below it a line naming its error
(raised_line). An `async def` task is run with asyncio.run; a generator returned, or
`sys.exit(N)`, ends the job as worker_endings.py says.

A class with a `main()` method (GPU Task Scheduler's `GPUTask`) runs too: it is created,
given `_config` (the parameters) and `_work_dir` (the run folder), and its `main()` called.

A task defined interactively (a notebook, `python -c`) has no module to import: it was
pickled at submit, and the job runs `--function-file FILE` instead of TARGET
(worker_pickled.py).

Only the standard library is imported before the user's module: the job's
CUDA_VISIBLE_DEVICES is already set, so `import torch` at the top of that module is safe.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import os
import sys
import traceback
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from gpuherd import own_files, tasks_guard, worker_pickled, worker_script
from gpuherd.task_metrics import table_metrics
from gpuherd.task_values import Storable
from gpuherd.worker_endings import ReturnedGenerator, exit_status, raised_line, settled

MAIN_MODULE = "__mp_main__"
"""The module name a `__main__` script is loaded under (its main block sees this name): the
one multiprocessing gives it in the processes it spawns, which can then unpickle its functions."""
PARAMS_FILE = "params.json"
METRICS_FILE = "metrics.json"
RESULT_FILE = "result.json"
"""The task's return value as it is (Job.result() reads it)."""
KEPT_PARAMS_FILE = "task-params.json"
"""Where a `--params-file` is moved to in the job's folder, for the job's later attempts."""


WORKER_MARK = " -m gpuherd.worker "
"""What a task's command line holds after its Python (tasks.worker_command)."""


def runs_task(command: str) -> bool:
    """Whether a job's command runs a task through this module (tasks.worker_command)."""
    return WORKER_MARK in f" {command} "


class WorkerError(Exception):
    """The task cannot be found or called; the message says why (no traceback needed)."""


class RestartWithEnv(Exception):
    """required_env() asked for environment variables the job did not start with: main()
    starts the worker again with them (the variables are in `env`)."""

    def __init__(self, env: dict[str, str]) -> None:
        super().__init__(sorted(env))
        self.env = env


class UnknownParameter(WorkerError):
    """A call gives a parameter (`name`) the function does not take."""

    def __init__(self, function: str, name: str, guess: str | None = None) -> None:
        self.function, self.name = function, name
        close = "" if guess is None else f" (did you mean {guess!r}?)"
        super().__init__(
            f"{function}() takes no parameter {name!r}{close}; add it to the signature (or "
            "**kwargs)"
        )


def load_target(target: str, script_args: list[str] | None = None, sweep: bool = False) -> Any:
    """The object TARGET names: `module:qualname` or `path/to/file.py:qualname`; a script is
    run with `script_args` as its arguments (sys.argv[1:]). `sweep`: a sweep's point."""
    where, sep, qualname = target.rpartition(":")
    if not sep or not where or not qualname:
        raise WorkerError(f"invalid target {target!r}: use module:function or file.py:function")
    script = where.endswith(".py") or os.sep in where
    tasks_guard.loading = where
    try:
        with worker_script.exit_said(where, qualname, script):
            module = _load_path(where, script_args or []) if script else _import(where, sweep)
    finally:
        tasks_guard.loading = None
    obj: Any = module
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise WorkerError(f"{where} has no {qualname!r} (looked up {part!r})") from None
    return getattr(obj, "__gpuherd_task__", obj)  # a @gpuherd.task wrapper: its function


def _import(name: str, sweep: bool) -> ModuleType:
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            what = "run the sweep" if sweep else "submit the task"
            raise WorkerError(
                f"cannot import {name!r} from {os.getcwd()}: {exc}; {what} from the folder the "
                "module is importable from"
            ) from None
        raise


def _load_path(path: str, args: list[str]) -> ModuleType:
    """Run the script as multiprocessing's spawn runs the main script in a child: as module
    `__mp_main__`, with no `__spec__` and its `__file__`, also standing as `__main__`, and
    `args` its arguments (sys.argv, as the parent's). A process the task starts with "spawn"
    is then told to load the script by its path, and finds its functions (pickled as
    `__mp_main__.name`) there."""
    file = Path(path)
    if not file.is_file():
        raise WorkerError(f"the task's script {path} does not exist (moved or deleted?)")
    try:
        source = file.read_bytes()
    except OSError as exc:
        raise WorkerError(f"cannot read the task's script {path}: {exc.strerror}") from None
    sys.path.insert(0, str(file.resolve().parent))  # as when the script itself was run
    module = ModuleType(MAIN_MODULE)
    module.__file__ = str(file)
    module.__loader__ = SourceFileLoader(MAIN_MODULE, str(file))
    sys.modules["__main__"] = sys.modules[MAIN_MODULE] = module
    sys.argv = [str(file), *args]  # (the worker's own were parsed: the script's now)
    exec(compile(source, str(file), "exec"), module.__dict__)
    return module


def call(obj: Any, params: dict[str, Any], run_dir: str, *, restarted: bool = False) -> Any:
    """Run a function with the params (and run_dir if it wants it), or a GPUTask-like class
    (RestartWithEnv when its required_env() is not yet in the environment, unless `restarted`
    for that already)."""
    if inspect.isclass(obj):
        if not callable(getattr(obj, "main", None)):
            raise WorkerError(f"class {obj.__qualname__} has no main() method to run")
        return _run_task_class(obj, params, run_dir, restarted)
    if not callable(obj):
        raise WorkerError(f"{obj!r} is not a function")
    return obj(**arguments(obj, params, run_dir))


def arguments(fn: Any, params: dict[str, Any], run_dir: str) -> dict[str, Any]:
    """The keywords to call `fn` with: the params, and run_dir if it takes it. WorkerError
    if its signature does not take them (tasks.py checks a call at submit with it too)."""
    kwargs = dict(params)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return kwargs
    accepted = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    if "run_dir" in accepted:
        kwargs["run_dir"] = run_dir
    unknown = [k for k in kwargs if k not in accepted]
    if unknown and not takes_any:
        raise UnknownParameter(fn.__qualname__, unknown[0])
    try:
        signature.bind(**kwargs)
    except TypeError as exc:
        raise WorkerError(f"cannot call {fn.__qualname__}() with {sorted(params)}: {exc}") from None
    return kwargs


def _run_task_class(cls: type[Any], params: dict[str, Any], run_dir: str, restarted: bool) -> Any:
    """GPU Task Scheduler's protocol: GPUTask(config, work_dir); required_env(); main()."""
    try:
        inspect.signature(cls).bind(params, run_dir)
        instance = cls(params, run_dir)
    except TypeError:
        try:
            instance = cls()
        except TypeError:
            instance = object.__new__(cls)
    instance._config = params
    instance._work_dir = run_dir
    required = getattr(instance, "required_env", None)
    if callable(required):
        wanted = {str(k): str(v) for k, v in (required() or {}).items()}
        missing = {k: v for k, v in wanted.items() if os.environ.get(k) != v}
        # GTS started the job with these set, before the task's module was imported: flags
        # that a library reads at its import (THEANO_FLAGS, TF_CPP_MIN_LOG_LEVEL) took effect
        # even when the module imports it at its top. Here it is imported already: start again.
        if missing and not restarted:
            raise RestartWithEnv(missing)
        os.environ.update(wanted)  # (restarted, values that change at each call: as they are)
    return instance.main()


def write_metrics(run_dir: str, result: Any) -> str | None:
    """result.json (the value as it is) and metrics.json (what of it fits the sweep table:
    task_metrics.py). Answers a note naming what JSON could not hold (stored as its text), if
    anything; a file that cannot be written is a WorkerError (the run's results would be
    missing, and a sweep would count the point done)."""
    if result is None:
        return None
    stored = Storable(result)
    value = stored.value
    metrics = table_metrics(value)
    for name, data in ((RESULT_FILE, value), (METRICS_FILE, metrics)):
        try:
            _write_json(Path(run_dir) / name, data)
        except OSError as exc:
            raise WorkerError(
                f"the task returned, but its return value could not be written to "
                f"{Path(run_dir) / name}: {exc.strerror or exc}"
            ) from None
    return stored.note()


def clear_return_files(run_dir: str) -> None:
    """Remove the result.json and metrics.json an earlier run in this folder left, first
    thing (before the parameters are read: a run that fails early leaves none either): a
    run that returns None, calls sys.exit() or fails writes neither, and the earlier run's
    would stand as its result (`job.result()`, `sweep status`'s columns). The daemon moves
    an earlier attempt's or run's metrics.json aside before a job starts (attempt-N/,
    previous-runs/), so this finds them only where nothing did: `gpuherd run` again into
    the same --output-dir, or a worker run by hand."""
    for name in (RESULT_FILE, METRICS_FILE):
        with contextlib.suppress(OSError):  # (none there: the usual case)
            Path(run_dir, name).unlink()


def _write_json(path: Path, data: Any, mode: int = 0o666) -> None:
    """(A new file renamed into place: a link planted in the job's folder is not followed.)"""
    own_files.replace_file(path, (json.dumps(data, indent=2) + "\n").encode(), mode)


def read_params(run_dir: str) -> dict[str, Any]:
    path = Path(run_dir) / PARAMS_FILE
    try:
        record = json.loads(path.read_text())
    except OSError as exc:
        raise WorkerError(f"cannot read the point's parameters {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise WorkerError(f"{path} is not valid JSON: {exc}") from None
    params = record.get("params") if isinstance(record, dict) else None
    if not isinstance(params, dict):
        raise WorkerError(f'{path} has no "params" object')
    return params


def read_params_file(path: str, run_dir: str) -> Any:
    """The parameters a submit left in a file (too large for a command line). The file is
    moved into the job's folder, so a later attempt (a retry) reads them there."""
    staged, kept = Path(path), Path(run_dir) / KEPT_PARAMS_FILE
    try:
        text = staged.read_text()
    except FileNotFoundError:
        try:
            text = kept.read_text()
        except FileNotFoundError:
            raise WorkerError(
                f"the task's parameters file {path} is gone: it is moved into the folder of "
                "the job that first runs it; submit the task again"
            ) from None
    else:
        try:
            _write_json(kept, json.loads(text), 0o600)  # (its user's values alone)
            staged.unlink()
        except (OSError, ValueError):
            pass  # keep the file where it is: the next attempt reads it there
    try:
        return json.loads(text)
    except ValueError as exc:
        raise WorkerError(f"{path} is not valid JSON: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuherd.worker", description=__doc__)
    parser.add_argument("target", nargs="?", help="module:function or path/to/script.py:function")
    parser.add_argument("--function-file", help="one job's pickled task (moved to its folder)")
    parser.add_argument("--shared-function-file", help="a sweep's pickled task (left as it is)")
    parser.add_argument("--run-dir", help="the point's folder (default: $GPUHERD_JOB_DIR)")
    parser.add_argument("--params", help="the parameters as a JSON object (else params.json)")
    parser.add_argument("--params-file", help="a file holding the parameters' JSON object")
    parser.add_argument("--path", help="a folder to import the module from (put on sys.path)")
    parser.add_argument("--script-args", help="a script's arguments, as a JSON list of strings")
    parser.add_argument("--script-args-file", help="a file holding them (a long command line)")
    parser.add_argument("--env-applied", action="store_true", help=argparse.SUPPRESS)
    own = sys.argv[1:] if argv is None else argv  # (the script's are set in sys.argv later)
    args = parser.parse_args(own)
    if args.path:
        sys.path.insert(0, args.path)
    run_dir = args.run_dir or os.environ.get("GPUHERD_JOB_DIR") or os.getcwd()
    clear_return_files(run_dir)
    try:
        if args.params_file is not None:
            params = read_params_file(args.params_file, run_dir)
        elif args.params is not None:
            params = json.loads(args.params)
        else:
            params = read_params(run_dir)
        if not isinstance(params, dict):
            raise WorkerError("--params must be a JSON object")
        obj = _load(args, run_dir)
        result = call(obj, params, run_dir, restarted=args.env_applied)
        result = settled(result, _called(obj))  # (an `async def` task: run here)
        if note := write_metrics(run_dir, result):
            print(f"gpuherd worker: {note}", file=sys.stderr)
    except RestartWithEnv as restart:
        _restart(restart.env, own)
    except (
        WorkerError,
        tasks_guard.BootstrapError,
        worker_pickled.PickledTaskError,
        worker_script.ScriptError,
        ReturnedGenerator,
    ) as exc:
        print(f"gpuherd worker: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # the task called sys.exit(): its status, said in one line
        return exit_status(exc.code)
    except BaseException as exc:  # the task's own error: its traceback, then a failed job
        traceback.print_exc()
        print(raised_line(exc), file=sys.stderr)  # (what failed it: JobFailed names that)
        return 1
    return 0


def _load(args: argparse.Namespace, run_dir: str) -> Any:
    """The task: TARGET imported, or the function a pickled task's file holds."""
    given = [a for a in (args.target, args.function_file, args.shared_function_file) if a]
    if len(given) != 1:
        raise WorkerError("give one of TARGET, --function-file and --shared-function-file")
    if args.target:
        given_args = worker_script.script_args(args.script_args, args.script_args_file)
        return load_target(args.target, given_args, sweep=args.run_dir is not None)
    path = args.function_file or args.shared_function_file
    own_folder = run_dir if args.function_file else None  # a sweep's file serves every point
    data = worker_pickled.read_function_file(path, own_folder)
    return worker_pickled.load_function(data, path)


def _called(obj: Any) -> str:
    """What ran, as a message names it: `train`, or a GPUTask class's `Trainer.main`."""
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{name}.main" if inspect.isclass(obj) else str(name)


def _restart(env: dict[str, str], argv: list[str]) -> NoReturn:
    """The same worker again, in this process (its pid, its GPUs), with `env` set from the start."""
    os.environ.update(env)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "gpuherd.worker", *argv, "--env-applied"])


if __name__ == "__main__":
    sys.exit(main())
