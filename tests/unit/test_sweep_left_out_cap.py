"""`sweep --dry-run`'s warning of options the printed commands leave out: `--max-log-size
none` is what `gpuherd run` does anyway (it said `leave out --max-log-size: give gpuherd run
--max-log-size`, for an option that would change nothing); a cap is left out."""

from __future__ import annotations

import os

from gpuherd.cli.sweep_left_out import left_out
from gpuherd.wire_requests import SweepOptions


def test_no_cap_is_not_left_out_and_a_cap_is() -> None:
    here = os.getcwd()
    assert left_out(SweepOptions(max_log_size=0), here) is None
    assert left_out(SweepOptions(max_log_size=2**21), here) == (
        "the commands printed leave out --max-log-size: give gpuherd run --max-log-size"
    )
