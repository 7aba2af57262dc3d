"""A job waiting for one held until its --begin time is told when that one starts, as the
held job's own INFO says it: `waiting for job 20 (held until 23:59)`. It was told `(held:
gpuherd release 20)`, as if job 20 would never start by itself (and `release` starts it now,
which its --begin did not want)."""

from __future__ import annotations

import time
from uuid import uuid4

from conftest import Herd
from gpuherd.core.idspec import format_ids
from gpuherd.core.when import format_moment


def test_waiting_for_a_begin_job_says_until_when(shared_daemon: Herd) -> None:
    herd, project = shared_daemon, f"p{uuid4().hex[:8]}"
    mine = ("--project", project)
    begins = herd.submit(*mine, "--begin", "+3h", "--", "true")
    until = f"held until {format_moment(herd.job(begins)['begin'], time.time())}"
    held = herd.submit(*mine, "--hold", "--", "true")
    after_begin = herd.submit(*mine, "--after", str(begins), "--", "true")
    after_both = herd.submit(*mine, "--after", f"{begins},{held}", "--", "true")
    listed = herd.cli("ls", *mine, "--columns", "id,info").stdout.splitlines()
    assert [line.split(maxsplit=1) for line in listed] == [
        ["ID", "INFO"],
        [str(begins), f"{until} (--begin)"],  # its own
        [str(held), "held"],
        [
            str(after_begin),
            f"waiting for job {begins} ({until})",
        ],  # was `(held: gpuherd release N)`
        [
            str(after_both),
            f"waiting for jobs {format_ids([begins, held])} (job {held} held: gpuherd release"
            f" {held}; job {begins} {until})",
        ],
    ]
