"""The grace of a stop chosen when stopping (`kill --grace D`, the HTTP API's `grace`,
`Job.kill(grace=...)`): the SIGKILL comes D after the SIGTERM instead of after the job's own
grace, D from now for a job already being stopped (0: at once), while a plain kill again
never moves it; the daemon's restart keeps the time it chose."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_stopping_advice import DEAF, deaf_now, sigkill

from conftest import Herd, load_stretch, started_once, stays, wait_for
from gpuherd import connect
from gpuherd.errors import InvalidValue


@pytest.fixture(scope="module")
def module_herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as started:
        yield started


@pytest.fixture
def herd(module_herd: Herd) -> Iterator[Herd]:
    """One daemon for the tests that look only at their own jobs (none restarts it). A test
    ends with its jobs ended: one left in a long grace is SIGKILLed, so the next finds the
    GPUs free (the shared daemon's teardown waits 30 s, less than those graces)."""
    yield module_herd

    def unfinished() -> list[int]:
        jobs = module_herd.client.get("/jobs", all=True)["jobs"]
        return [j["id"] for j in jobs if j["state"] in ("queued", "held", "running", "paused")]

    for job in unfinished():
        sigkill(module_herd, job)
        module_herd.cli("kill", str(job))
    wait_for(lambda: not unfinished(), what=f"the test's jobs to end: {unfinished()}")


def deaf_job(herd: Herd, own_grace: str) -> int:
    """A running job that ignores SIGTERM (only its SIGKILL ends it), with `--grace own_grace`."""
    job = herd.submit("--gpus", "0", "--grace", own_grace, "--", DEAF)
    deaf_now(herd, job)
    return job


def stop_and_kill_times(herd: Herd, job: int) -> tuple[float, float]:
    """When the job's stop was first asked, and when its SIGKILL was sent (its events)."""
    events: list[dict[str, Any]] = herd.json("show", str(job))["events"]
    asked = next(e["at"] for e in events if e["event"] == "stop")
    killed = next(e["at"] for e in events if e["event"] == "kill")
    return asked, killed


def test_kill_grace_replaces_the_jobs_own_grace(herd: Herd) -> None:
    job = deaf_job(herd, "60s")
    answer = herd.cli("kill", "--grace", "1s", str(job)).stdout
    assert answer == f"job {job}: stopping (SIGTERM, then SIGKILL after 1s)\n"
    assert herd.wait_state(job, "killed", timeout=10)["outcome"] == "killed"
    asked, killed = stop_and_kill_times(herd, job)
    assert 0.9 <= killed - asked < 3, (asked, killed)


def test_a_longer_grace_outlasts_the_own_one_and_a_plain_kill_keeps_it(herd: Herd) -> None:
    job = deaf_job(herd, "1s")
    herd.cli("kill", "--grace", "5m", str(job))
    stays(lambda: herd.job(job)["state"] == "running", 1.5, "the job in its chosen grace")
    again = herd.cli("kill", str(job)).stdout  # it used to bring the SIGKILL back to 1 s
    assert again.startswith(f"job {job}: already stopping (SIGKILL in 29"), again
    stays(lambda: herd.job(job)["state"] == "running", 1.0, "the job after a plain kill")
    now = herd.cli("kill", "--grace", "0", str(job)).stdout
    assert now.startswith(f"job {job}: already stopping (SIGKILL at once, not in 29"), now
    herd.wait_state(job, "killed", timeout=5)


def test_a_chosen_grace_moves_the_sigkill_of_a_stop_under_way_later(herd: Herd) -> None:
    """`kill 7`, then the checkpoint turns out to need longer: `kill --grace 5m 7`."""
    # The job's own grace holds the second kill's CLI start, slow on a loaded machine: the
    # times checked are those the daemon recorded, not how quickly the CLI came back. (That
    # start, forked (tests/forks.py), takes ~0.1 s on a quiet machine; the test waits out
    # the grace and 3 s more.)
    own = round(3 * load_stretch())
    job = deaf_job(herd, f"{own}s")
    herd.cli("kill", str(job))
    later = herd.cli("kill", "--grace", f"{own + 3}s", str(job)).stdout
    said = re.fullmatch(
        rf"job {job}: already stopping \(SIGKILL in {own + 3}\.0s, not in (\d+\.\d)s\)\n", later
    )
    assert said, later
    herd.wait_state(job, "killed", timeout=own + 10)
    events: list[dict[str, Any]] = herd.json("show", str(job))["events"]
    first, second = [e["at"] for e in events if e["event"] == "stop"]
    killed = next(e["at"] for e in events if e["event"] == "kill")
    # "not in": when the first kill's SIGKILL was due, as the second kill came.
    assert abs(float(said[1]) - (own - (second - first))) < 0.3, (said[1], first, second)
    # The SIGKILL: the chosen grace after the second kill, not the own one after the first.
    assert own + 3 - 0.1 <= killed - second < own + 3 + 2.5, (first, second, killed)


def test_a_waiting_job_is_cancelled_whatever_the_grace(herd: Herd) -> None:
    job = herd.submit("--hold", "--", "true")
    assert herd.cli("kill", "--grace", "5m", str(job)).stdout == f"job {job}: cancelled\n"


def test_bad_graces_are_refused_in_one_line(herd: Herd) -> None:
    job = herd.submit("--hold", "--", "true")
    for typed in ("-3", "abc"):
        said = herd.usage_error("kill", "--grace", typed, str(job))
        assert "--grace: invalid " in said and f"'{typed}'" in said, said
    for body, why in (
        ({"grace": -1}, "grace must be 0 to 100 years"),
        ({"grace": "x"}, "grace: Input should be a valid number"),
    ):
        with pytest.raises(InvalidValue, match=why):
            herd.client.post("/jobs/kill", {"ids": [job], **body})
    with pytest.raises(InvalidValue, match="grace is a kill's, not a hold's: leave it out"):
        herd.client.post("/jobs/hold", {"ids": [job], "grace": 3})
    assert herd.job(job)["state"] == "held"  # nothing done by a refused request


def test_the_python_api_kills_with_a_chosen_grace(herd: Herd) -> None:
    api = connect(herd.home, start=False)
    job = deaf_job(herd, "60s")
    with pytest.raises(InvalidValue, match="grace must be 0 to 100 years"):
        api.job(job).kill(grace=-1)
    with pytest.raises(TypeError, match="grace is seconds"):
        api.job(job).kill(grace=True)
    assert herd.job(job)["state"] == "running"  # (refused: no stop begun)
    assert api.job(job).kill(grace="1s") == "stopping (SIGTERM, then SIGKILL after 1s)"
    assert herd.wait_state(job, "killed", timeout=10)["outcome"] == "killed"


def test_the_python_api_takes_a_zero_grace_as_text(herd: Herd) -> None:
    """Reviewer R4: `kill(grace="0s")` (or "0") raised "invalid duration '0s': must be
    greater than zero", where `kill --grace 0s` and `kill(grace=0)` kill at once."""
    api = connect(herd.home, start=False)
    job = deaf_job(herd, "60s")
    assert api.job(job).kill(grace="0s") == "stopping (SIGTERM, then SIGKILL at once)"
    assert herd.wait_state(job, "killed", timeout=10)["outcome"] == "killed"
    with pytest.raises(ValueError, match="invalid grace '-1s': must be 0"):
        api.job(job).kill(grace="-1s")


def test_a_chosen_grace_survives_a_daemon_restart(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The stored stop gives the SIGKILL's due time back to the next daemon: longer than
    the job's own grace (1 s, here 5 s) as well as shorter (60 s, here 4 s)."""
    with started_once(tmp_path_factory, "--fake-gpus", "2") as herd:
        longer, shorter = deaf_job(herd, "1s"), deaf_job(herd, "60s")
        before = time.time()
        herd.cli("kill", "--grace", "5s", str(longer))
        herd.cli("kill", "--grace", "4s", str(shorter))
        herd.cli("daemon", "stop")
        herd.start()
        back = time.time()
        if back < before + 4.5:  # (a loaded machine may take longer to restart)
            assert herd.job(longer)["state"] == "running"  # past its own grace: still saving
        for job, grace in ((longer, 5.0), (shorter, 4.0)):
            herd.wait_state(job, "killed", timeout=30)
            asked, killed = stop_and_kill_times(herd, job)
            # Never before the chosen grace; once due, at once (as the daemon came back, if
            # it fell due while none ran).
            assert grace - 0.1 <= killed - asked, (job, asked, killed)
            assert killed < max(asked + grace, back) + 2.5, (job, asked, killed, back)


def test_daemon_stop_kill_takes_a_grace(tmp_path_factory: pytest.TempPathFactory) -> None:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as herd:
        job = deaf_job(herd, "60s")
        said = herd.usage_error("daemon", "stop", "--grace", "1s")
        assert "--grace goes with --kill" in said, said
        begun = time.monotonic()
        herd.cli("daemon", "stop", "--kill", "--grace", "1s", timeout=30)
        assert time.monotonic() - begun < 20  # not the job's own 60 s
        herd.start()
        assert herd.job(job)["state"] == "killed"
        asked, killed = stop_and_kill_times(herd, job)
        assert 0.9 <= killed - asked < 3, (asked, killed)
