"""gpu-hog's `--yielder FILE.py` for `gpuherd run`: import the file, take what its `yielder()`
yields, and check each item's fields (ValueError, one line naming the item and the field).

The file runs in a Python process of its own, which sends the checked items to the run over
a pipe, one JSON record a line, and then an `end` record. Whatever ends that process before
its yielder() returned (`os._exit(0)`, a crash, a signal) would otherwise end `gpuherd run`
itself, with the yielder's exit status: now the run sees no `end` and says so.

No job starts before yielder() returns: a yielder still running NOTE_AFTER after it started is
said once on stderr. Should the run die outright meanwhile (`kill -9`, the OOM killer), the
yielder's process sees the pipe's other end close, as the run's watchdog does, and kills what
it started, then itself (_watch_the_run): both ran on, orphans, an endless one growing."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd.core.idspec import MOST_GPUS

if TYPE_CHECKING:
    from gpuherd.wire import SubmitItem

FIELDS = ("command", "name", "gpus", "env")
_FORMS = "yield a command string or a dict with 'command' (and optionally 'name', 'gpus', 'env')"
_EACH = "yield each job (or return a list of them)"
NOT_JOBS = (str, bytes, bytearray, Mapping, set, frozenset)
"""What yielder() may not return, though Python iterates it: a `return {"command": ...}` for a
`yield` ran the dict's keys as jobs (`command` succeeded: a false success), a string its
characters, and a set's order changes from run to run (the job folders are numbered in it)."""
NOTE_AFTER = 2.0
"""Seconds of waiting for yielder() before the run says that it runs and that its jobs start
once it returns (not with -q): a slow yielder was silence that looked like a hang."""
CHILD = "import sys; from gpuherd.yielder import main; main(sys.argv[1:])"
"""The yielder's process: `python -P` (no script folder nor working folder put first on
sys.path: it imports what `gpuherd run` itself would) with this code, the pipe and the file.
Once gpuherd's modules are loaded, the file's own folder goes first (load_yielder)."""


def yielded_items(path: Path, gpus: int, cwd: str, env: dict[str, str]) -> list[SubmitItem]:
    """Every job FILE.py's yielder() yields, as the run's items (a dict's `gpus`, else `gpus`).
    ValueError, one line, when the yielder fails, exits, or its process ends before the end."""
    from gpuherd.wire import SubmitItem

    return [
        SubmitItem(
            command=record["command"],
            cwd=cwd,
            env=env,
            env_overrides=record["env"],
            name=record["name"],
            gpus=record.get("gpus", gpus),
        )
        for record in _run_yielder(path)
    ]


def _kill_with_its_own(pid: int) -> None:
    """SIGKILL the yielder's process and the processes it started: a `sleep` it spawned
    outlived an interrupted run, holding the caller's stdout open. (Not by process group:
    in a group of its own, a yielder reading the terminal would be stopped, SIGTTIN.)"""
    import psutil  # (only then: start-up time)

    try:
        leader = psutil.Process(pid)
        processes = [*leader.children(recursive=True), leader]
    except psutil.Error:
        return
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()


def _run_yielder(path: Path) -> list[dict[str, Any]]:
    import subprocess

    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-P", "-c", CHILD, str(write_end), str(path)], pass_fds=[write_end]
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)  # the child's copy is the only one: its end is the pipe's end
    items: list[dict[str, Any]] = []
    ending: dict[str, Any] = {}
    try:
        with open(read_end, encoding="utf-8") as pipe:
            _say_if_slow(pipe.fileno(), path)
            for line in pipe:
                record = json.loads(line)
                if "item" not in record:
                    ending = record
                    break
                items.append(record["item"])
    except BaseException:  # Ctrl-C while it runs, or a record that is not ours
        _kill_with_its_own(process.pid)
        raise
    finally:
        status = process.wait()
    if "end" in ending:
        return items
    if "error" in ending:
        raise ValueError(ending["error"])
    if "exit" in ending:
        call = "sys.exit()" if ending["exit"] is None else f"sys.exit({ending['exit']})"
        raise ValueError(f"the yielder exited ({call}) before yielding its jobs")
    raise ValueError(
        f"the yielder's process ended ({_how_ended(status)}) before yielder() returned: none "
        f"of its jobs was run, as their list may be incomplete; {_advice(status)}"
    )


def _say_if_slow(pipe: int, path: Path) -> None:
    """Once, unless the run is -q: the yielder sent nothing within NOTE_AFTER (it sends its
    items once yielder() has returned, so nothing has started). "Waiting", not "running": it
    may still be importing the file (a slow `import torch` at its top)."""
    import click  # (loaded already: the run's CLI)

    context = click.get_current_context(silent=True)  # (the run's -q: not passed down)
    if context is not None and context.params.get("quiet"):
        return
    waiting = select.poll()
    waiting.register(pipe, select.POLLIN)  # (and its end: POLLHUP, always reported)
    if waiting.poll(NOTE_AFTER * 1000):
        return
    with contextlib.suppress(OSError):  # (a note: stderr full or gone stops no run)
        click.echo(
            f"--yielder {path}: waiting for yielder() to return; its jobs start once it has "
            "(Ctrl-C stops the run)",
            err=True,
        )


def _how_ended(status: int) -> str:
    if status >= 0:
        return f"exit status {status}"
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:
        return f"killed by signal {-status}"


def _advice(status: int) -> str:
    if status >= 0:
        return "let yielder() return instead of ending its process (os._exit())"
    return "see what killed it (out of memory?), then run again"


def main(args: list[str]) -> None:
    """The yielder's process: args are the pipe's descriptor and the file."""
    ending: dict[str, Any]
    with open(int(args[0]), "w", encoding="utf-8") as out:
        os.set_inheritable(out.fileno(), False)  # the yielder's own subprocesses must not hold it
        returned = _watch_the_run(out.fileno())
        try:
            items = list(checked_items(_yielded(Path(args[1]))))
        except SystemExit as exc:  # the yielder's own sys.exit()
            ending = {"exit": None if exc.code is None else repr(exc.code)}
        except BaseException as exc:  # its error (Ctrl-C too, which the run sees itself)
            ending = {"error": str(exc) or type(exc).__name__}
        else:
            for item in items:
                out.write(json.dumps({"item": item}) + "\n")
            ending = {"end": len(items)}
        finally:
            returned.set()
        out.write(json.dumps(ending) + "\n")


def _watch_the_run(pipe: int) -> threading.Event:
    """Until the Event returned is set (yielder() returned): should the run's end of `pipe`
    close, the run is gone, killed outright (its Ctrl-C and signals kill this process
    themselves), so kill what yielder() started, then this process. A thread, not a signal
    handler, so that a yielder busy in its own code is stopped too; and not PR_SET_PDEATHSIG:
    its SIGKILL came before anything could find this process's children (which ran on), and
    it follows the thread that started this process, not the run."""
    returned = threading.Event()

    def watch() -> None:
        closed = select.poll()
        closed.register(pipe, 0)  # a pipe's writing end: POLLERR once no reader is left
        closed.poll()
        if not returned.is_set():
            _kill_with_its_own(os.getpid())

    threading.Thread(target=watch, name="gpuherd-run-gone", daemon=True).start()
    return returned


def _yielded(path: Path) -> list[Any]:
    """All that FILE.py's yielder() yields. An exception it raises becomes a ValueError naming
    its type and the file's line it came through: `KeyError('lr')` alone said only "'lr'".
    What it returns that holds no jobs (NOT_JOBS, None, a number) is refused as it is: a None
    said `yielder() raised TypeError: 'NoneType' object is not iterable`."""
    function = load_yielder(path)
    try:
        returned = function()
        jobs = list(returned) if _holds_jobs(returned) else None
    except Exception as exc:  # (not SystemExit, nor Ctrl-C: main says those apart)
        file = os.path.abspath(path)
        lines = [
            frame.lineno
            for frame in traceback.extract_tb(exc.__traceback__)
            if os.path.abspath(frame.filename) == file
        ]
        where = f" at line {lines[-1]}" if lines else ""  # (the innermost: where to look)
        text = f": {exc}" if str(exc) else ""
        raise ValueError(f"yielder() raised {type(exc).__name__}{where}{text}") from None
    if jobs is None:
        raise ValueError(_not_jobs(returned))
    return jobs


def _holds_jobs(returned: object) -> bool:
    """A generator, a list, a tuple...: anything iterated but NOT_JOBS."""
    return isinstance(returned, Iterable) and not isinstance(returned, NOT_JOBS)


def _not_jobs(returned: object) -> str:
    """The line for what yielder() returned that holds no jobs, with what to do."""
    if returned is None:  # (no `yield` in it: a plain function, whose end returns None)
        return f"yielder() returned None, not jobs (a forgotten `yield`?): {_EACH}"
    name = type(returned).__name__
    shown = repr(returned)
    shown = shown if len(shown) <= 40 else f"{shown[:37]}..."
    sets = isinstance(returned, set | frozenset)
    why = "whose order changes from run to run" if sets else "not jobs"
    what = name if name == "bytes" else f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
    return f"yielder() returned {what} ({shown}), {why}: {_EACH}"


def checked_items(values: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """gpu-hog's `yielder()` protocol: strings are commands; a dict may give more. Each as
    {command, name, env, and gpus if given}."""
    for n, value in enumerate(values):
        if isinstance(value, str):
            yield {"command": value, "name": None, "env": {}}
            continue
        # A dict is one of the two forms: "item 1 is dict: yield ... a dict" read as a riddle
        # when all it lacked was 'command' (a `{"cmd": ...}`), so that is what is said.
        what = "a dict without 'command'" if isinstance(value, dict) else type(value).__name__
        if not isinstance(value, dict) or "command" not in value:
            raise ValueError(f"yielder item {n} is {what}: {_FORMS}")
        unknown = set(value) - set(FIELDS)
        if unknown:
            keys = ", ".join(sorted(map(str, unknown)))
            raise ValueError(f"yielder item {n} has unknown keys: {keys}: {_FORMS}")
        _check_fields(n, value)
        item = {
            "command": value["command"],
            "name": value.get("name"),
            "env": {k: str(v) for k, v in (value.get("env") or {}).items()},
        }
        yield item | ({"gpus": value["gpus"]} if "gpus" in value else {})


def _check_fields(n: int, item: dict[Any, Any]) -> None:
    """Each field of item `n` has its type: a name of 5 was taken as it is and failed deep in
    the submission with a traceback; a command of 5 ran as `5`."""

    def wrong(what: str, value: object, want: str) -> ValueError:
        return ValueError(f"yielder item {n}: {what} is {type(value).__name__}: give {want}")

    if not isinstance(item["command"], str):
        raise wrong("'command'", item["command"], "the command as a string")
    if not isinstance(item.get("name"), str | None):
        raise wrong("'name'", item["name"], "a string (or leave it out)")
    # bool is an int to Python, but `"gpus": True` is surely a mistake
    if "gpus" in item and (not isinstance(item["gpus"], int) or isinstance(item["gpus"], bool)):
        raise wrong("'gpus'", item["gpus"], "a number of GPUs, like 1")
    # (the submission's limit, said here in the yielder's words: the submission's own named
    # `--gpus`, which in `gpuherd run` is the list of GPUs to use)
    if not 0 <= item.get("gpus", 0) <= MOST_GPUS:
        raise ValueError(
            f"yielder item {n}: 'gpus' is {item['gpus']}: give a number of GPUs from 0 to "
            f"{MOST_GPUS}"
        )
    env = item.get("env")
    if not isinstance(env, dict | None):
        raise wrong("'env'", env, "a dict of variable names to values")
    for key, value in (env or {}).items():
        if not isinstance(key, str):
            raise wrong(f"'env' name {key!r}", key, "variable names as strings")
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise wrong(f"'env' value of {key!r}", value, "a string or a number")


def load_yielder(path: Path) -> Callable[[], Iterable[Any]]:
    """Import FILE.py and return its `yielder` function (errors say what to fix)."""
    import importlib.util

    if not path.is_file():
        raise ValueError(f"--yielder {path}: no such file")
    spec = importlib.util.spec_from_file_location(f"gpuherd_yielder_{os.getpid()}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--yielder {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Its own modules beside it (`from grid import LRS`) import, as with `python FILE.py` and
    # gpu-hog, which put the file's folder first on sys.path; gpuherd's are loaded already.
    sys.path.insert(0, str(path.parent.absolute()))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ValueError(f"--yielder {path} failed to import: {type(exc).__name__}: {exc}") from exc
    function = getattr(module, "yielder", None)
    if function is not None and not callable(function):  # (`yielder = 3`: said as it is)
        raise ValueError(
            f"--yielder {path}: yielder is {repr(function)[:40]} ({type(function).__name__}), "
            "not a function: define yielder() as a function that yields the jobs' commands"
        )
    if function is None:
        raise ValueError(f"--yielder {path} defines no function yielder()")
    result: Callable[[], Iterable[Any]] = function
    return result
