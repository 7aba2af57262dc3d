"""docs/python.md's listing examples, as written: what `herd.jobs(limit=N)` counts (the
waiting jobs alone in the default listing; N jobs and every running one with `all=True`),
and the `since` still to come that gives the message shown."""

from __future__ import annotations

from datetime import datetime

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect


def test_the_docs_listing_examples_say_what_they_do(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    done = [herd.submit("--", "true") for _ in range(3)]
    for job_id in done:
        herd.wait_state(job_id, "succeeded")
    later = [herd.submit("--", "sleep", "60") for _ in range(5)]
    for job_id in later[:2]:
        herd.wait_state(job_id, "running")
    api = connect(herd.home, start=False)

    # "7 jobs: 3 finished, 2 running, the next 2 to start; .more is 1"
    listed = api.jobs(limit=2)
    assert [job.id for job in listed] == [*done, *later[:4]]
    assert listed.more == 1
    # "4 jobs: the newest finished, 2 running, the next to start"
    listed = api.jobs(all=True, limit=4)
    assert [job.id for job in listed] == [done[-1], *later[:3]]

    for since in (datetime(2099, 1, 1), "2099-01-01"):
        with pytest.raises(InvalidValue) as refused:
            api.jobs(since=since)
        assert str(refused.value) == (
            "since 2099-01-01 00:00 is in the future: give a past moment (2d: 2 days ago, "
            "yesterday, 23:30: the last 23:30)"
        )
    assert isinstance(api.jobs(since="23:30"), list)  # the last 23:30: never in the future
