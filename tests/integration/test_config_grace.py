"""`gpuherd config set grace D`: the time between SIGTERM and SIGKILL of every job submitted
without a grace of its own (by `submit`, `sweep`, a sweep file, the Python API or the
dashboard's form), stored in the job as it is submitted, as `config retries` is; and
`daemon restart --kill --grace D`, the grace of `daemon stop --kill --grace D`."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_kill_grace_chosen import stop_and_kill_times
from test_stopping_advice import DEAF, sigkill

from conftest import Herd, form_submitted, started_once, stays, wait_for
from gpuherd import connect


@pytest.fixture(scope="module")
def module_herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as started:
        yield started


def grace_of(herd: Herd, job: int) -> float:
    return float(herd.job(job)["grace"])


def trapped(herd: Herd, job: int) -> None:
    """Until the deaf job's trap is set (its line is in its log: a sweep point's log is in
    the point's folder, which test_stopping_advice.deaf_now does not look in)."""
    wait_for(lambda: herd.cli("log", str(job)).stdout == "deaf\n", what=f"job {job}'s trap")


def killed_after_a_second(herd: Herd, job: int) -> None:
    """A plain `kill` of the running deaf job ends it by its SIGKILL 1 s after the SIGTERM
    (by its events' times, loosely: the point is 1 s, not 10)."""
    herd.cli("kill", str(job))
    ended = herd.wait_state(job, "killed", timeout=15)
    assert (ended["outcome"], ended["signal"]) == ("killed", signal.SIGKILL), ended
    asked, killed = stop_and_kill_times(herd, job)
    assert 0.9 <= killed - asked < 5, (asked, killed)


def test_config_grace_is_the_grace_of_every_job_that_gives_none(
    module_herd: Herd, tmp_path: Path
) -> None:
    herd = module_herd
    assert herd.cli("config", "set", "grace", "1s").stdout == "grace = 1s\n"
    try:
        own = herd.submit("--hold", "--grace", "60s", "--", "true")
        submitted = herd.submit("--gpus", "0", "--", DEAF)
        point = herd.json("sweep", DEAF + " # {x}", "-p", "x", "1", "--gpus", "0")["ids"][0]
        for job in (submitted, point):
            trapped(herd, job)
            killed_after_a_second(herd, job)  # SIGTERM ignored: SIGKILLed after 1 s, not 10

        api = connect(herd.home, start=False)
        from_api = api.submit("true", gpus=0, hold=True).id
        from_api_sweep = api.sweep("echo {x}", {"x": [1]}, name="api", hold=True, cwd=tmp_path)
        given_api = api.submit("true", gpus=0, hold=True, grace="7s").id
        plain_file = tmp_path / "plain.yaml"
        plain_file.write_text("command: echo {x}\ngrid:\n  x: [1]\nhold: true\n")
        graced_file = tmp_path / "graced.yaml"
        graced_file.write_text("command: echo {x}\ngrid:\n  x: [1]\nhold: true\ngrace: 30s\n")
        from_file = herd.json("sweep", str(plain_file))["ids"][0]
        from_graced_file = herd.json("sweep", str(graced_file))["ids"][0]
        over_file = herd.json("sweep", str(graced_file), "--name", "over", "--grace", "5s")
        from_form = form_submitted(herd, tmp_path)
        assert {
            "own --grace": grace_of(herd, own),
            "Python API": grace_of(herd, from_api),
            "Python API sweep": grace_of(herd, from_api_sweep.submission["ids"][0]),
            "Python API grace=": grace_of(herd, given_api),
            "sweep file": grace_of(herd, from_file),
            "sweep file's grace": grace_of(herd, from_graced_file),
            "--grace over the file's": grace_of(herd, over_file["ids"][0]),
            "dashboard form": grace_of(herd, from_form),
        } == {
            "own --grace": 60.0,
            "Python API": 1.0,
            "Python API sweep": 1.0,
            "Python API grace=": 7.0,
            "sweep file": 1.0,
            "sweep file's grace": 30.0,
            "--grace over the file's": 5.0,
            "dashboard form": 1.0,
        }
        # Taken at submission: a change of the setting leaves the jobs already queued alone.
        herd.cli("config", "set", "grace", "auto")
        assert grace_of(herd, from_api) == 1.0
        assert grace_of(herd, herd.submit("--hold", "--", "true")) == 10.0
        shown = herd.cli("show", str(from_api)).stdout
        assert "\ngrace      1s (SIGTERM, then SIGKILL)\n" in shown, shown
    finally:
        herd.cli("config", "set", "grace", "auto")


def test_a_job_with_its_own_grace_keeps_it_and_an_edit_changes_it(module_herd: Herd) -> None:
    herd = module_herd
    herd.cli("config", "set", "grace", "1s")
    job = herd.submit("--gpus", "0", "--grace", "60s", "--", DEAF)
    try:
        waiting = herd.submit("--hold", "--", "true")
        herd.cli("edit", str(waiting), "--grace", "2s")  # an edit keeps working as before
        assert grace_of(herd, waiting) == 2.0
        herd.cli("edit", str(waiting), "--gpus", "0")  # and another keeps the grace
        assert grace_of(herd, waiting) == 2.0
        trapped(herd, job)
        herd.cli("kill", str(job))
        # In its own 60 s, well past the setting's 1 s.
        stays(lambda: herd.job(job)["state"] == "running", 3, "the job in its own grace")
    finally:
        sigkill(herd, job)
        herd.cli("config", "set", "grace", "auto")


@pytest.mark.parametrize("typed", ["-1", "abc", "0", ""])
def test_a_bad_grace_is_refused_in_one_line(module_herd: Herd, typed: str) -> None:
    said = module_herd.usage_error("config", "set", "grace", typed)
    assert said.startswith(f"gpuherd: error: grace: invalid duration '{typed}'"), said
    assert module_herd.cli("config", "get", "grace").stdout == "10s\n"


def test_the_setting_survives_a_daemon_restart(tmp_path_factory: pytest.TempPathFactory) -> None:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as herd:
        herd.cli("config", "set", "grace", "2s")
        herd.cli("daemon", "restart")
        assert herd.cli("config", "get", "grace").stdout == "2s\n"
        assert grace_of(herd, herd.submit("--hold", "--", "true")) == 2.0


def test_daemon_restart_kill_takes_a_grace(tmp_path_factory: pytest.TempPathFactory) -> None:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as herd:
        job = herd.submit("--gpus", "0", "--grace", "60s", "--", DEAF)
        trapped(herd, job)
        said = herd.usage_error("daemon", "restart", "--grace", "1s")
        assert "--grace goes with --kill (the stop of running jobs): add --kill" in said, said
        pid = herd.pid
        assert herd.job(job)["state"] == "running"  # refused before anything stopped
        begun = time.monotonic()
        herd.cli("daemon", "restart", "--kill", "--grace", "1s", timeout=30)
        assert time.monotonic() - begun < 20  # not the job's own 60 s
        assert herd.pid != pid
        ended = herd.job(job)
        assert (ended["state"], ended["signal"]) == ("killed", signal.SIGKILL), ended
