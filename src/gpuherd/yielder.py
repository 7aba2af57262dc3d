"""gpu-hog's `--yielder FILE.py` for `gpuherd run`: import the file, take what its `yielder()`
yields, and check each item's fields (ValueError, one line naming the item and the field)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from gpuherd.wire import SubmitItem

FIELDS = ("command", "name", "gpus", "env")


def items_from_yielder(
    values: Iterable[Any], gpus: int, cwd: str, env: dict[str, str]
) -> Iterator[SubmitItem]:
    """gpu-hog's `yielder()` protocol: strings are commands; a dict may give more."""
    for n, value in enumerate(values):
        if isinstance(value, str):
            yield SubmitItem(command=value, cwd=cwd, env=env, gpus=gpus)
            continue
        if not isinstance(value, dict) or "command" not in value:
            raise ValueError(
                f"yielder item {n} is {type(value).__name__}: yield a command string or a "
                "dict with 'command' (and optionally 'name', 'gpus', 'env')"
            )
        unknown = set(value) - set(FIELDS)
        if unknown:
            raise ValueError(
                f"yielder item {n} has unknown keys: {', '.join(sorted(map(str, unknown)))}"
            )
        _check_fields(n, value)
        yield SubmitItem(
            command=value["command"],
            cwd=cwd,
            env=env,
            env_overrides={k: str(v) for k, v in (value.get("env") or {}).items()},
            name=value.get("name"),
            gpus=value.get("gpus", gpus),
        )


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
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ValueError(f"--yielder {path} failed to import: {type(exc).__name__}: {exc}") from exc
    function = getattr(module, "yielder", None)
    if not callable(function):
        raise ValueError(f"--yielder {path} defines no function yielder()")
    result: Callable[[], Iterable[Any]] = function
    return result
