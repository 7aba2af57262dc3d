"""Command lists as users write them (task files, `--file -`): pure parsing, no I/O."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Iterator, Sequence


def command_from_args(args: Sequence[str]) -> str:
    """One argument is a shell command as written; several are quoted and joined.

    So `submit "a && b"` keeps its shell syntax, and `submit -- echo 'a b'` keeps 'a b' whole.
    """
    if len(args) == 1:
        return args[0]
    return shlex.join(args)


def command_lines(lines: Iterable[str]) -> Iterator[str]:
    """Jobs from lines: `#` comments and blank lines skipped, a trailing `\\` continues a job.

    Works on a stream: each job is yielded as soon as its last line has arrived.
    """
    pending: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending.append(line)  # the shell itself reads backslash-newline as a continuation
            continue
        pending.append(line)
        job = "\n".join(pending).strip()
        pending = []
        if job:
            yield job
    if pending:  # input ended inside a continuation: run what there is
        job = "\n".join(pending).strip().removesuffix("\\").strip()
        if job:
            yield job
