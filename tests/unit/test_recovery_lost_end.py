"""core.recovery.lost_end: the end recorded for an attempt found gone with no exit status."""

from __future__ import annotations

from gpuherd.core.recovery import lost_end

START, NOW = 1000.0, 9000.0


def test_its_end_is_its_last_sign_of_life_not_the_restart() -> None:
    assert lost_end(START, 1600.0, None, NOW) == 1600.0
    assert lost_end(START, 1600.0, 500.0, NOW) == 1600.0  # booted before it started


def test_never_after_a_boot_that_came_after_its_start() -> None:
    assert lost_end(START, 1600.0, 1200.0, NOW) == 1200.0
    assert lost_end(START, None, 1200.0, NOW) == 1200.0  # no sign of life: the boot


def test_with_nothing_known_its_end_is_the_restart_as_before() -> None:
    assert lost_end(START, None, None, NOW) == NOW  # a cluster's attempt
    assert lost_end(None, None, 1200.0, NOW) == NOW  # start unknown: the boot says nothing


def test_never_before_its_start_nor_after_now() -> None:
    assert lost_end(START, 990.0, None, NOW) == START  # written just before its start stamp
    assert lost_end(START, 99999.0, None, NOW) == NOW  # a job that set its log's time ahead
