"""The order jobs start in when their run times are known from earlier runs."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Literal, TypeVar, get_args

T = TypeVar("T")

Order = Literal["given", "longest-first"]
ORDERS: tuple[Order, ...] = get_args(Order)
"""What `--order` (a sweep file's and Python's `order`) takes: the sweep's own order, or
the points that ran longest before first (`longest_first`)."""


def longest_first(items: Iterable[T], run_time: Callable[[T], float | None]) -> list[T]:
    """Longest expected run first (LPT), so the last jobs to end are short ones and the GPUs
    finish together. Items with no known run time are not known to be short: they go first,
    in their given order (the sort is stable)."""

    def key(item: T) -> float:
        seconds = run_time(item)
        return -math.inf if seconds is None else -seconds

    return sorted(items, key=key)
