"""The Python API's waits say, as a WaitWarning, which jobs they wait for cannot end by
themselves, as `gpuherd wait` says it on stderr (stuck_jobs.py): the queue paused, a job
paused, a job waiting for a held one. `sweep_from_config(...).wait()` with the queue paused
by accident waited in silence for ten minutes (pyapi_stuck.py)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd

PAUSED_QUEUE = "the queue is paused: no job starts until gpuherd resume"

GTS_SCRIPT = """
import gpuherd


class Point(gpuherd.GPUTask):
    def main(self):
        return {"i": self._config["i"]}


if __name__ == "__main__":
    config = {"scheduler_config": {"gpu": ["0"]}, "test_config": [{"i": [1, 2]}]}
    sweep = gpuherd.sweep_from_config(config, task=Point, name="paused")
    for _ in range(3):  # a script that waits in turns, to show progress: said once
        try:
            sweep.wait(timeout=0.2)
        except TimeoutError:
            pass
"""


def test_a_gts_scripts_wait_says_once_on_stderr_that_the_queue_is_paused(
    daemon: Herd, tmp_path: Path
) -> None:
    daemon.cli("pause")
    (tmp_path / "main.py").write_text(GTS_SCRIPT)
    ran = subprocess.run(
        [sys.executable, "main.py"],
        cwd=tmp_path,
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    said = [line for line in ran.stderr.splitlines() if "WaitWarning" in line]
    assert said == [f"{tmp_path / 'main.py'}:15: WaitWarning: {PAUSED_QUEUE}"], ran.stderr
    daemon.cli("resume")
    assert gpuherd.connect(daemon.home, start=False).get_sweep("paused").wait(timeout=30)


def test_every_wait_of_the_api_warns_of_a_paused_queue(daemon: Herd, tmp_path: Path) -> None:
    api = gpuherd.connect(daemon.home, start=False)
    daemon.cli("pause")
    job = api.submit("true", gpus=0, cwd=str(tmp_path))
    # 24 points: more than are asked about one by one (the paused listing and queue instead)
    sweep = api.sweep("true {i}", {"i": list(range(24))}, results_dir=str(tmp_path / "r"))
    waits = {
        "herd.wait": lambda: api.wait([job], timeout=0.2),
        "job.wait": lambda: job.wait(timeout=0.2),
        "job.result": lambda: job.result(timeout=0.2),
        "sweep.wait": lambda: sweep.wait(timeout=0.2),
        "herd.wait(sweep)": lambda: api.wait(sweep, timeout=0.2),
        "as_completed": lambda: list(api.as_completed([job], timeout=0.2)),
        "gpuherd.as_completed": lambda: list(gpuherd.as_completed(sweep.jobs(), timeout=0.2)),
    }
    for which, wait in waits.items():
        with pytest.warns(gpuherd.WaitWarning) as warned, pytest.raises(TimeoutError):
            wait()
        assert [str(w.message) for w in warned] == [PAUSED_QUEUE], which
        assert warned[0].filename == __file__, which  # at the caller's line, not gpuherd's
    daemon.cli("resume")
    assert job.wait(timeout=30) == "succeeded" and sweep.wait(timeout=60)


def test_a_wait_warns_of_a_paused_job_and_of_one_behind_a_held_job(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    api = gpuherd.connect(shared_daemon.home, start=False)
    running = api.submit("sleep 300", gpus=0, cwd=str(tmp_path))
    shared_daemon.wait_state(running.id, "running")
    running.pause()
    held = api.submit("true", gpus=0, hold=True, cwd=str(tmp_path))
    behind = api.submit("true", gpus=0, after=[held], cwd=str(tmp_path))
    with pytest.warns(gpuherd.WaitWarning) as warned, pytest.raises(TimeoutError):
        api.wait([running, behind], timeout=0.2)
    assert [str(w.message) for w in warned] == [
        f"job {running.id} is paused: waiting until it is resumed (gpuherd resume {running.id})",
        f"job {behind.id} is waiting for job {held.id} (held: gpuherd release {held.id})",
    ]
    held.release()
    assert behind.wait(timeout=30) == "succeeded"


def test_a_wait_for_jobs_that_run_warns_nothing(shared_daemon: Herd, tmp_path: Path) -> None:
    api = gpuherd.connect(shared_daemon.home, start=False)
    first = api.submit("true", gpus=0, cwd=str(tmp_path))
    second = api.submit("true", gpus=0, after=[first], cwd=str(tmp_path))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # (every warning of the block, none filtered out)
        assert api.wait([first, second], timeout=30) == {
            first.id: "succeeded",
            second.id: "succeeded",
        }
    assert not [w for w in seen if issubclass(w.category, gpuherd.WaitWarning)]


def test_a_wait_for_a_held_job_says_what_releases_it(daemon: Herd, tmp_path: Path) -> None:
    """As `gpuherd wait ID` says it: `job.wait()` of a held job waited in silence."""
    api = gpuherd.connect(daemon.home, start=False)
    held = api.submit("true", gpus=0, cwd=str(tmp_path), hold=True)
    later = api.submit("true", gpus=0, cwd=str(tmp_path), begin="+3h")
    with pytest.warns(gpuherd.WaitWarning) as warned, pytest.raises(TimeoutError):
        api.wait([held, later], timeout=0.2)
    said = [str(w.message) for w in warned]
    assert said[0] == (
        f"job {held.id} is held: waiting until it is released (gpuherd release {held.id} lets "
        "it run)"
    ), said
    assert said[1].startswith(f"job {later.id} is held until "), said
    assert said[1].endswith(
        f" (--begin): waiting until then (gpuherd release {later.id} starts it now)"
    ), said
    # Of more than 20 jobs, from the held ones' listing: one note for the jobs alike.
    many = [api.submit("true", gpus=0, cwd=str(tmp_path), hold=True) for _ in range(21)]
    with pytest.warns(gpuherd.WaitWarning) as warned, pytest.raises(TimeoutError):
        api.wait(many, timeout=0.2)
    first, last = many[0].id, many[-1].id
    assert [str(w.message) for w in warned] == [
        f"jobs {first}-{last} are held: waiting until they are released (gpuherd release "
        f"{first}-{last} lets them run)"
    ]
    api.jobs(all=True).kill()
