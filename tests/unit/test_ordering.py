"""Longest-first ordering (LPT) by earlier run times."""

from __future__ import annotations

from gpuherd.core.ordering import longest_first


def test_longest_first_puts_unknown_items_first_in_given_order_then_longest_to_shortest() -> None:
    times = {"a": 1.0, "b": 9.0, "c": 4.0, "e": 4.0}
    items = ["a", "x", "b", "c", "y", "e"]
    assert longest_first(items, times.get) == ["x", "y", "b", "c", "e", "a"]


def test_longest_first_with_no_times_keeps_the_given_order() -> None:
    assert longest_first(range(5), lambda _: None) == [0, 1, 2, 3, 4]
