"""Whether the command a sweep's point ran (its params.json, or its waiting job) is the one
the sweep gives it now. A task's point runs `PYTHON -m gpuherd.worker ...` with the Python
that submitted it (`sys.executable`), which names one interpreter by whichever of its names
started the script: `python3 demo.py` one day and `python demo.py` the next made every done
point of a task's sweep "another command" (--force runs them again), though nothing changed."""

from __future__ import annotations

import functools
import os
import shlex


def same_command(ran: str, now: str) -> bool:
    """`ran` and `now` are one command: the same text, or a task's worker line that differs
    only in which name of one Python it starts. (Text first: a sweep of 10,000 points asks
    for each, and most differ in more than that, or not at all.)"""
    if ran == now:
        return True
    from gpuherd.worker import WORKER_MARK  # (here: the daemon's listings need no more of it)

    one, mark, rest = ran.partition(WORKER_MARK)
    other, mark_now, rest_now = now.partition(WORKER_MARK)
    if not (mark and mark_now) or rest != rest_now:
        return False
    return _same_python(one, other)


@functools.lru_cache(maxsize=64)
def _same_python(one: str, other: str) -> bool:
    """Two names of one interpreter in one folder (a venv's `python`, `python3`,
    `python3.11`), each as the line quotes it. Not any two that resolve to one file: every
    venv's python links to the Python it was made from, so another venv, with other
    packages, would pass for this one."""
    try:
        [one], [other] = shlex.split(one), shlex.split(other)
    except ValueError:  # (not one word: not a line gpuherd made, its words are shlex-joined)
        return False
    return os.path.dirname(one) == os.path.dirname(other) and os.path.realpath(
        one
    ) == os.path.realpath(other)
