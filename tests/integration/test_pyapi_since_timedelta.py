"""`herd.jobs(since=timedelta(...))` is "that long ago", as `since="1h"` (and `ls --since 1h`):
it raised WrongType, though `begin=` takes a timedelta. `until=` takes one alike. Against the
module's daemon (fake GPUs), looking only at this test's project; every wait has a timeout."""

from __future__ import annotations

import time
from datetime import timedelta

import gpuherd
from conftest import Herd, wait_for
from gpuherd.pyapi import connect


def test_since_and_until_take_a_timedelta_as_that_long_ago(shared_daemon: Herd) -> None:
    herd = connect(home=shared_daemon.home, start=False)
    job = herd.submit("true", gpus=0, project="ago")
    assert job.wait(timeout=60) == "succeeded"
    ended = job.info()["ended_at"]
    wait_for(lambda: time.time() > ended + 2, 10, "the job's end to be 2 s past")

    def listed(**window: timedelta | str) -> list[gpuherd.Job]:
        return list(herd.jobs(project="ago", **window))

    assert listed(since=timedelta(hours=1)) == [job] == listed(since="1h")
    assert listed(since=-timedelta(hours=1)) == [job]  # (as "-1h" is: its sign aside)
    assert listed(since=timedelta(seconds=1)) == [] == listed(since="1s")  # it ended before
    assert listed(until=timedelta(hours=1)) == []  # submitted since
    assert listed(since=timedelta(days=1), until=timedelta(0)) == [job]
