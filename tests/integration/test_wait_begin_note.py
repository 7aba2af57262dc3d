"""`gpuherd wait ID` of a job held until its --begin time says it waits until then, as
`submit --begin ... --wait` says it: it said `job 7 is held: waiting until it is released
(gpuherd release 7 lets it run)`, as if the job would never start without a release."""

from __future__ import annotations

import time

from conftest import Herd
from gpuherd.core.when import format_moment


def test_waiting_for_begin_jobs_says_until_when(shared_daemon: Herd) -> None:
    herd = shared_daemon
    soon = herd.submit("--begin", "+3h", "--", "true")
    until = format_moment(herd.job(soon)["begin"], time.time())
    # Two jobs held until one time: one note names both, as `submit --file --wait` says it.
    same = [herd.submit("--begin", "2099-01-01T00:00", "--", "true") for _ in range(2)]
    held = herd.submit("--hold", "--", "true")

    waited = herd.cli("wait", str(soon), *map(str, same), str(held), "--timeout", "1s", check=False)

    assert waited.returncode == 2
    assert waited.stderr.splitlines()[:3] == [
        f"gpuherd: job {soon} is held until {until} (--begin): waiting until then"
        f" (gpuherd release {soon} starts it now)",
        f"gpuherd: jobs {same[0]}-{same[1]} are held until 2099-01-01 00:00 (--begin):"
        f" waiting until then (gpuherd release {same[0]}-{same[1]} starts them now)",
        f"gpuherd: job {held} is held: waiting until it is released"
        f" (gpuherd release {held} lets it run)",  # a plain hold, as before
    ]


def test_a_begin_job_waited_for_starts_by_itself(shared_daemon: Herd) -> None:
    """The wait said it waited for a release; the job starts at its time, and the wait
    ends with it."""
    herd = shared_daemon
    job = herd.submit("--begin", "+2s", "--", "true")
    waited = herd.cli("wait", str(job))
    assert waited.returncode == 0
    assert "--begin): waiting until then" in waited.stderr.splitlines()[0]
    assert "until it is released" not in waited.stderr
    assert waited.stdout == "1 of 1 job succeeded\n"
