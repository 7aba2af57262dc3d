"""What `@gpuherd.task` refuses at once, in the caller's process, rather than in a job or at
every submit (tasks.py): a function no job could run as a task (a generator, parameters it
takes by position alone), and job options no submission takes (`gpus=-1`)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from gpuherd.errors import HerdError, InvalidValue

SPEC_FIELDS = (
    *("gpus", "mem", "ram", "retries", "retry_delay", "timeout", "grace"),
    *("no_output_timeout", "exclusive", "only_gpus"),
)
"""The job options a JobSpec holds as the task has them (sizes and durations in units, as
pyapi_values.in_units makes them): checked as a submission checks them."""


def refuse_unfit(fn: Any) -> None:
    """HerdError, in one line, for a function a job cannot call and keep what it returns: a
    generator function (its job succeeded, storing `<generator object ...>`, its body never
    run), or one with a parameter it takes by position alone and has no default for (a
    task's parameters are given by name: no call could give it). An `async def` function is
    fine: its job runs it with asyncio.run (worker_endings.py)."""
    if inspect.isclass(fn):  # (a GPUTask-like class: created, and its main() called)
        return
    name = getattr(fn, "__qualname__", None) or repr(fn)
    if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
        kind = "an async generator" if inspect.isasyncgenfunction(fn) else "a generator"
        raise HerdError(
            f"{name} is {kind} function (it yields), which cannot run as a task: a job keeps "
            "what the function returns, and a generator returns its values only as it is "
            "iterated; collect them and return a list instead"
        )
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # (a builtin: the call is checked at submit, if it can be)
        return
    by_position = [
        p.name
        for p in parameters
        if p.kind is inspect.Parameter.POSITIONAL_ONLY and p.default is inspect.Parameter.empty
    ]
    if by_position:
        listed = ", ".join(map(repr, by_position))
        example = ", ".join(f"{p}=..." for p in by_position[:3])
        raise HerdError(
            f"{name}() takes {listed} by position only (the / in its signature), and a task "
            f"is called with its parameters by name ({name.rpartition('.')[2]}.submit("
            f"{example})): drop the / from {name}'s signature"
        )


def check_options(options: Mapping[str, Any]) -> None:
    """InvalidValue for a job option no submission takes (`gpus=-1`, `retries=-1`, `grace=0`,
    `mem=` with `gpus=0`, `hold=True` with a `begin`), in a submission's words: a task took
    it, and each submit was refused. `options` are the task's, their kinds checked and in
    units already."""
    from gpuherd.core.model import JobSpec  # (deferred: only at decoration)
    from gpuherd.pyapi_begin import refuse_hold_with_begin
    from gpuherd.submission import check_spec

    refuse_hold_with_begin(options)  # (in the API's words, as each submit would refuse it)
    given = {k: options[k] for k in SPEC_FIELDS if options.get(k) is not None}
    if "only_gpus" in given:
        given["only_gpus"] = tuple(given["only_gpus"])
    try:
        check_spec(JobSpec(command="true", cwd="/", **given))
    except InvalidValue as exc:  # (re-raised here: its traceback ends at the decorator)
        raise InvalidValue(str(exc)) from None
