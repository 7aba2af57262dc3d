"""The words of a grace chosen when stopping (`kill --grace`): what it takes, what it refuses,
and what a kill answers with it."""

from __future__ import annotations

import math

import pytest

from gpuherd.core.lifecycle import (
    Stopping,
    chosen_grace_refused,
    killed_while_stopping,
    stop_begun,
    stop_mode_grace_refused,
)
from gpuherd.core.states import OutcomeKind
from gpuherd.core.units import parse_grace


@pytest.mark.parametrize(
    ("typed", "seconds"), [("0", 0.0), ("0s", 0.0), ("0.0", 0.0), ("90s", 90.0), ("5m", 300.0)]
)
def test_a_grace_is_a_duration_or_zero(typed: str, seconds: float) -> None:
    assert parse_grace(typed) == seconds


@pytest.mark.parametrize("typed", ["0m", "0h", "0:00", "00:00:00", "0m0s", " 0 s "])
def test_zero_in_any_unit_or_clock_form_is_the_sigkill_at_once(typed: str) -> None:
    """Reviewer R4: `--grace 0m` was refused as "must be greater than zero", a grace of 0
    being the SIGKILL at once, which --grace's help offers."""
    assert parse_grace(typed) == 0.0


def test_a_negative_or_wordless_grace_is_refused_saying_what_to_give() -> None:
    with pytest.raises(ValueError, match=r"invalid grace '-3': must be 0 \(SIGKILL at once\)"):
        parse_grace("-3")
    with pytest.raises(ValueError, match="invalid duration 'abc': use a number of seconds"):
        parse_grace("abc")


def test_the_daemon_takes_0_to_100_years_and_only_for_a_kill() -> None:
    assert chosen_grace_refused(0.0) is None
    assert chosen_grace_refused(300.0) is None
    for bad in (-1.0, math.nan, math.inf):
        assert (chosen_grace_refused(bad) or "").startswith("grace must be 0 to 100 years")
    assert stop_mode_grace_refused("kill", 5.0) is None
    assert stop_mode_grace_refused("drain", 5.0) == (
        "grace goes with the mode kill (--kill), not drain: leave it out"
    )


def test_a_kill_says_the_grace_it_gave_and_where_it_moved_the_sigkill() -> None:
    assert stop_begun(90.0) == "stopping (SIGTERM, then SIGKILL after 90s)"
    assert stop_begun(0.0) == "stopping (SIGTERM, then SIGKILL at once)"
    killing = Stopping(OutcomeKind.KILLED, False, 300.0)
    assert killed_while_stopping(killing, was=7.8) == (
        "already stopping (SIGKILL in 300.0s, not in 7.8s)"
    )
    now = Stopping(OutcomeKind.KILLED, False, 0.0)
    assert killed_while_stopping(now, was=7.8) == "already stopping (SIGKILL at once, not in 7.8s)"
    retried = Stopping(OutcomeKind.KILLED, True, 60.0)
    assert killed_while_stopping(retried, was=7.8) == (
        "stopping (SIGKILL in 60.0s, not in 7.8s): it ends killed, no longer queued again"
    )
    assert killed_while_stopping(killing) == "already stopping (SIGKILL in 300.0s)"  # as before
