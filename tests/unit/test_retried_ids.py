"""The ids a "retry them all" hint names (core/retry_blocked.retried_ids): a few one by one,
as typed; more with each run of consecutive ids, in the order given, as a range (a chain of
400 jobs was told `gpuherd retry 100 101 ... 499`, a line of 1.7 KB)."""

from __future__ import annotations

from gpuherd.core.idspec import parse_ids
from gpuherd.core.lifecycle import Rerun, retry_refused
from gpuherd.core.retry_blocked import retried_ids
from gpuherd.core.states import JobState


def test_a_few_ids_are_named_one_by_one() -> None:
    assert retried_ids((18, 19), [20]) == "18 19 20"
    assert retried_ids((5,), [8, 9]) == "5 8-9"


def test_a_long_chain_is_named_by_ranges() -> None:
    assert retried_ids(tuple(range(100, 499)), [499]) == "100-499"
    assert retried_ids((1, 2, 3, 4, 10, 11), [12, 20]) == "1-4 10-12 20"
    said = retry_refused(
        499, 498, JobState.CANCELLED, Rerun(tuple(range(100, 499)), (100, JobState.FAILED))
    )
    assert said.endswith("retry them all (gpuherd retry 100-499)")


def test_the_order_waited_for_is_kept() -> None:
    """A job an edit made wait for a later one still comes after it."""
    said = retried_ids((9, 5, 6, 7), [8])
    assert said == "9 5-8"
    assert sorted(parse_ids(said.split())) == [5, 6, 7, 8, 9]
