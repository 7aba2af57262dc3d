"""Jobs that cross a switch of the home's executor, to a Ray cluster or away from one.

- A job given `--output` by a local daemon, started after the switch to Ray: its start fails
  (`spawn_error`) with the line `submit --output` gets on a Ray daemon, and nothing runs.
  Before, it ran on the cluster and succeeded, and the file it named was never written.
- A Ray attempt found lost by a local daemon started with --abandon-running after the
  cluster went away: daemon.log says it ran on a Ray cluster, whose end no daemon saw; its
  end is when the last daemon saw it running, never this machine's boot. Before, it was said
  "killed with SIGKILL" (nothing had killed it), and a boot of this machine after its start
  was taken for its end ("the machine restarted"), as for a job of this machine.

A cluster of a head alone (no GPU node: cheap) for each test; the jobs ask for no GPU, so
they run on the head.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, need, wait_for

need("ray.cluster_utils", "ray")

from ray_fixtures import lone_head, shutdown

from gpuherd.core.when import format_moment
from gpuherd.executors.base import NO_USER_FILES

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(name="head")
def head_fixture() -> Iterator[Any]:
    cluster = lone_head()
    try:
        yield cluster
    finally:
        shutdown(cluster)  # by handle: never `ray stop`


def test_a_job_given_output_before_the_switch_to_ray_fails_its_start(
    herd: Herd, head: Any, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    out = tmp_path / "out-%j.log"
    job = herd.submit("--hold", "--gpus", "0", "-o", str(out), "--", "echo hi")
    herd.cli("daemon", "stop")
    herd.start("--address", str(head.address))

    herd.cli("release", str(job))
    ended = herd.wait_state(job, "failed", "succeeded", timeout=60)
    assert (ended["state"], ended["outcome"], ended["message"]) == (
        "failed",
        "spawn_error",
        NO_USER_FILES,
    )
    assert not (tmp_path / f"out-{job}.log").exists()
    # No actor was asked for: the executor writes the attempt's handle, then its placement,
    # before it creates one.
    folder = herd.home / "jobs" / str(job) / "attempt-1"
    assert not (folder / "pid").exists() and not (folder / "ray.json").exists()
    herd.cli("daemon", "stop")


def test_a_ray_attempt_found_lost_by_a_local_daemon_is_said_to_have_run_on_ray(
    herd: Herd, head: Any
) -> None:
    herd.start("--address", str(head.address))
    job = herd.submit("--gpus", "0", "--", "exec sleep 300")
    started = herd.wait_state(job, "running", timeout=60)["started_at"]
    herd.env["GPUHERD_TEST_BOOT_TIME"] = repr(time.time())  # (this machine's, after its start)
    wait_for(lambda: time.time() > started + 1.0, what="a second of its run")
    before_stop = time.time()
    herd.cli("daemon", "stop")  # the job goes on, on the cluster: seen alive until now
    after_stop = time.time()
    shutdown(head)  # its actor, and the job, go with it

    herd.start("--executor", "local", "--fake-gpus", "1", "--abandon-running")
    lost = herd.wait_state(job, "lost")
    assert before_stop <= lost["ended_at"] <= after_stop, (lost, before_stop, after_stop)
    said = herd.cli("daemon", "log", "-n", "20").stdout
    line = next(line for line in said.splitlines() if f"job {job} attempt 1 (pid" in line)
    assert "SIGKILL" not in line and "the machine restarted" not in line, line
    end = format_moment(lost["ended_at"], time.time())
    assert line.endswith(
        f"job {job} attempt 1 (pid {lost['pid']}) is gone, with no exit status recorded (it ran "
        f"on a Ray cluster, where no daemon saw how it ended; its end recorded at {end}, when it "
        "was last seen alive): the job is lost"
    ), line
