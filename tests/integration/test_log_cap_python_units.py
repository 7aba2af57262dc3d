"""The Python API's `max_log_size=` reads a whole number as `mem=` does: bytes, and one under
1 MiB refused as a forgotten unit (`max_log_size=10` stored a 10-byte cap, which stopped the
job at its first look, where `--max-log-size 10` and a sweep file's `max_log_size: 10` are
refused); no cap is "none", and 0 is refused, as `--max-log-size 0` is (it was no cap)."""

from __future__ import annotations

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect

MiB = 2**20


def test_a_small_whole_number_is_refused_as_a_forgotten_unit(shared_daemon: Herd) -> None:
    herd = connect(shared_daemon.home, start=False)
    with pytest.raises(InvalidValue, match=r"^max_log_size=10 is 10 bytes: give a unit, e.g. "):
        herd.submit("true", gpus=0, hold=True, max_log_size=10)
    capped = herd.submit("true", gpus=0, hold=True, max_log_size=3 * MiB)
    with pytest.raises(InvalidValue, match=r"^max_log_size=0 is no size: give one"):
        herd.submit("true", gpus=0, hold=True, max_log_size=0)
    uncapped = herd.submit("true", gpus=0, hold=True, max_log_size="none")
    assert shared_daemon.job(capped.id)["max_log_size"] == 3 * MiB
    assert shared_daemon.job(uncapped.id)["max_log_size"] is None
