"""A task defined interactively, loaded in its job: `python -m gpuherd.worker --function-file
FILE` (one job's) or `--shared-function-file FILE` (a sweep's, one file for all its points).

tasks_pickled.py wrote FILE at submit: one line of text saying which Python pickled it and
what, then cloudpickle's bytes (the function by value: its code, the globals it uses, its
closure). One job's file is moved into the job's folder at its first run, as large
parameters are (worker.read_params_file), so a retry finds it there; a sweep's stays where
it is, read by every point.

Standard library only, as worker.py: cloudpickle is imported when the function is loaded,
after the job's CUDA_VISIBLE_DEVICES is set (it is, from the job's start), as a module's own
`import torch` would be.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from gpuherd import own_files

MAGIC = "gpuherd-pickled-task"
"""The first word of a pickled task's file (its first line is text: `head -1 FILE` says what)."""
KEPT_FUNCTION_FILE = "task-function.pkl"
"""Where a `--function-file` is moved to in the job's folder, for the job's later attempts."""


class PickledTaskError(Exception):
    """The pickled task cannot be read or loaded; the message says why, in one line."""


def python_version() -> str:
    """This interpreter's `major.minor`: what a pickle of a function's code depends on."""
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def header(name: str, cloudpickle_version: str) -> bytes:
    """The file's first line: `gpuherd-pickled-task python=3.11 cloudpickle=3.1.3 name=train`."""
    facts = f"python={python_version()} cloudpickle={cloudpickle_version} name={name}"
    return f"{MAGIC} {facts}\n".encode()


def read_function_file(path: str, run_dir: str | None) -> bytes:
    """The file's bytes. With `run_dir` (one job's file) it is moved there at the first run,
    and read there by later attempts (a retry, a restart for required_env). The file is
    unpickled, which runs code: one that another user could have written is refused
    (own_files.read_own_file), as is one that is a link."""
    staged = Path(path)
    if run_dir is None:
        try:
            return _read_own(staged)
        except OSError as exc:
            raise PickledTaskError(
                f"cannot read the sweep's pickled task {path}: {exc.strerror or exc}; submit "
                "the sweep again (it writes the file anew)"
            ) from None
    kept = Path(run_dir) / KEPT_FUNCTION_FILE
    try:
        data = _read_own(staged)
    except FileNotFoundError:
        try:
            return _read_own(kept)
        except FileNotFoundError:
            raise PickledTaskError(
                f"the task's pickled function {path} is gone: it is moved into the folder of "
                "the job that first runs it; submit the task again"
            ) from None
    try:
        own_files.replace_file(kept, data, 0o600)  # (it may hold the closure's secrets)
        staged.unlink()
    except OSError:
        pass  # keep the file where it is: the next attempt reads it there
    return data


def _read_own(path: Path) -> bytes:
    try:
        return own_files.read_own_file(path)
    except own_files.NotYourOwnFile as exc:
        raise PickledTaskError(
            f"refusing to load the pickled task: {exc}, so someone else could have put code "
            "of theirs in it, to run as you; keep the job's folder writable by you alone, and "
            "submit the task again"
        ) from None


def load_function(data: bytes, path: str) -> Any:
    """The function (or class) the file holds. The Python that pickled it must be this one's
    major.minor: code objects change between them, and unpickling fails obscurely."""
    first, newline, payload = data.partition(b"\n")
    words = first.decode(errors="replace").split()
    if not newline or not words or words[0] != MAGIC:
        raise PickledTaskError(f"{path} is not a pickled gpuherd task")
    facts = dict(word.partition("=")[::2] for word in words[1:])
    name, pickled_by = facts.get("name", "the task"), facts.get("python", "?")
    if pickled_by != python_version():
        raise PickledTaskError(
            f"{name} was pickled by Python {pickled_by} at submit, and this job runs Python "
            f"{python_version()} ({sys.executable}): submit it again from Python "
            f"{python_version()}, or put it in a .py file (imported by each job, not pickled)"
        )
    try:
        import pickle

        import cloudpickle  # type: ignore[import-untyped]  # noqa: F401  (the pickle names it)
    except ImportError:
        raise PickledTaskError(
            f"{name} was pickled with cloudpickle, which the job's Python ({sys.executable}) "
            "cannot import: install gpuherd's dependencies there (pip install cloudpickle)"
        ) from None
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # modules it uses by name, from the job's cwd
    try:
        return pickle.loads(payload)
    except Exception as exc:  # a module it uses that the job cannot import, say
        raise PickledTaskError(
            f"cannot load {name} from {path}: {type(exc).__name__}: {exc}; a module it "
            "uses by name must be importable from the job's cwd"
        ) from None
