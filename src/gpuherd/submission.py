"""A submitted job, checked: from the wire's SubmitItem to the core's JobSpec."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from gpuherd.core.model import JobSpec
from gpuherd.errors import HerdError
from gpuherd.wire import SubmitItem


def spec_from_item(item: SubmitItem, n: int | None) -> JobSpec:
    """The JobSpec a submitted item asks for; HerdError names the first thing wrong.

    `n` numbers the item within a batch, so a message can say which line of a file it is.
    """
    where = where_in_batch(n or 1, 2 if n else 1)
    reject_nul(
        where,
        command=item.command,
        cwd=item.cwd,
        name=item.name or "",
        project=item.project or "",
        env=item.env or {},
        env_overrides=item.env_overrides,
    )
    command = item.command.strip()
    if not command:
        raise HerdError(f"{where}the command is empty: give it after -- or as one string")
    if not 0 <= item.gpus <= 64:
        raise HerdError(f"{where}--gpus must be between 0 and 64, got {item.gpus}")
    if item.retries < 0:
        raise HerdError(f"{where}--retries must be 0 or more, got {item.retries}")
    if item.timeout is not None and item.timeout <= 0:
        raise HerdError(f"{where}--timeout must be positive")
    if item.no_output_timeout is not None and item.no_output_timeout <= 0:
        raise HerdError(f"{where}--no-output-timeout must be positive")
    if item.grace < 0:
        raise HerdError(f"{where}--grace must be 0 or more seconds")
    if item.mem is not None and item.mem <= 0:
        raise HerdError(f"{where}--mem must be positive")
    if item.ram is not None and item.ram <= 0:
        raise HerdError(f"{where}--ram must be positive")
    if item.begin is not None and not math.isfinite(item.begin):
        raise HerdError(f"{where}--begin must be a time (epoch seconds)")
    if item.begin is not None and item.hold:
        raise HerdError(
            f"{where}give --hold or --begin, not both: --begin keeps the job held until then"
        )
    if not os.path.isabs(item.cwd) or not os.path.isdir(item.cwd):
        raise HerdError(f"{where}working directory {item.cwd} does not exist: pass --cwd DIR")
    return JobSpec(
        command=command,
        cwd=item.cwd,
        env=dict(item.env or {}),
        env_overrides=dict(item.env_overrides),
        name=item.name,
        gpus=item.gpus,
        mem=item.mem,
        ram=item.ram,
        oom_retry=item.oom_retry,
        after=tuple(sorted(set(item.after))),
        retries=item.retries,
        timeout=item.timeout,
        no_output_timeout=item.no_output_timeout,
        kill_on_no_output=item.kill_on_no_output,
        grace=item.grace,
        project=item.project,
        folder=item.folder,
        sweep=item.sweep,
        git=item.git,
    )


def reject_nul(where: str, **fields: str | Mapping[str, str]) -> None:
    """No NUL byte in text that reaches a process's argv, environment or a path."""
    for name, value in fields.items():
        # One join instead of a test per variable: a submitted environment has ~100 of them.
        text = value if isinstance(value, str) else "".join([*value.keys(), *value.values()])
        if "\0" in text:
            raise HerdError(f"{where}a NUL byte in {name}: remove it (no program can receive it)")


def where_in_batch(n: int, total: int) -> str:
    return f"job {n} of the submission: " if total > 1 else ""
