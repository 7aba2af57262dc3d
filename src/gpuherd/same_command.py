"""Whether the command a sweep's point ran (its params.json, or its waiting job) is the one
the sweep gives it now. A task's point runs `PYTHON -m gpuherd.worker ...` with the Python
that submitted it (`sys.executable`), which names one interpreter by whichever of its names
started the script: `python3 demo.py` one day and `python demo.py` the next made every done
point of a task's sweep "another command" (--force runs them again), though nothing changed."""

from __future__ import annotations

import os
import shlex

from gpuherd.worker import runs_task


def same_command(ran: str, now: str) -> bool:
    """`ran` and `now` are one command: the same text, or a task's worker line that differs
    only in which name of one Python it starts."""
    if ran == now:
        return True
    one, other = _worker_words(ran), _worker_words(now)
    if one is None or other is None or one[1:] != other[1:]:
        return False
    return _same_python(one[0], other[0])


def _worker_words(command: str) -> list[str] | None:
    if not runs_task(command):
        return None
    try:
        return shlex.split(command)
    except ValueError:  # (not a line gpuherd made: its words are shlex-joined)
        return None


def _same_python(one: str, other: str) -> bool:
    """Two names of one interpreter in one folder (a venv's `python`, `python3`,
    `python3.11`). Not any two that resolve to one file: every venv's python links to the
    Python it was made from, so another venv, with other packages, would pass for this one."""
    return os.path.dirname(one) == os.path.dirname(other) and os.path.realpath(
        one
    ) == os.path.realpath(other)
