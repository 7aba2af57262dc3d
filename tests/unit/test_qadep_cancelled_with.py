"""How a kill's or rm's answer names the jobs it cancelled with a job (core/deps.py)."""

from __future__ import annotations

from gpuherd.core.deps import cancelled_with


def test_none_cancelled_with_it_leaves_the_answer_as_it_was() -> None:
    assert cancelled_with("cancelled", [], set(), "") == "cancelled"
    assert cancelled_with("cancelled", [8, 9], {8, 9}, "") == "cancelled"  # named: own lines


def test_the_waiters_not_named_are_said() -> None:
    assert (
        cancelled_with("cancelled", [9, 8], set(), "")
        == "cancelled, and jobs 8-9, which waited for it"
    )
    assert cancelled_with("removed", [8, 9], {9}, ", cancelled") == (
        "removed, and job 8, which waited for it, cancelled"
    )


def test_many_scattered_waiters_are_counted() -> None:
    said = cancelled_with("cancelled", list(range(2, 40, 2)), set(), "")
    assert said == "cancelled, and 19 jobs (2,4,6,8,…), which waited for it"
