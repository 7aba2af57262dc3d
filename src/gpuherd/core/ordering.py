"""The order jobs start in when their run times are known from earlier runs."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def longest_first(items: Iterable[T], run_time: Callable[[T], float | None]) -> list[T]:
    """Longest expected run first (LPT), so the last jobs to end are short ones and the GPUs
    finish together. Items with no known run time are not known to be short: they go first,
    in their given order (the sort is stable)."""

    def key(item: T) -> float:
        seconds = run_time(item)
        return -math.inf if seconds is None else -seconds

    return sorted(items, key=key)
