"""`gpuherd ray-local` stopped with Ctrl-C after its head's GCS died (killed, as a user who
tries "the head goes away" of docs/cluster.md does), and its raylets with it, leaves no Ray
process behind. Before, each raylet's dashboard and runtime-env agents (~90 MB each) ran on
for good: they outlive a raylet the head's absence ended, and Ray's shutdown knows only the
processes it started itself.

A temporary folder of its own for Ray (short: Ray's socket paths must fit in 107 bytes).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import psutil
import pytest

from conftest import need, wait_for

need("ray.cluster_utils", "ray")

pytestmark = pytest.mark.timeout(180)

RECONNECT = 3
"""Seconds a raylet waits for its GCS before it ends (Ray's default: 60)."""


@pytest.fixture(name="ray_local")
def ray_local_fixture() -> Iterator[subprocess.Popen[str]]:
    """A running `gpuherd ray-local --nodes 1 --gpus-per-node 1`, once it printed its address;
    stopped (by its pid) and its folder removed at the end."""
    ray_tmp = tempfile.mkdtemp(prefix="rl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
    env["RAY_TMPDIR"] = ray_tmp
    env["RAY_gcs_rpc_server_reconnect_timeout_s"] = str(RECONNECT)
    command = [sys.executable, "-m", "gpuherd", "ray-local", "--nodes", "1", "--gpus-per-node", "1"]
    # (its stderr read by the tests: Ray's traceback, if any)
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        proc.stderr = stderr
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline() for _ in range(4)]
            assert lines[-1] == "Ctrl-C stops the cluster.\n", lines
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=60)
            if proc.stdout is not None:
                proc.stdout.close()
            shutil.rmtree(ray_tmp, ignore_errors=True)


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_after_the_head_died_leaves_no_ray_process(
    ray_local: subprocess.Popen[str], signum: int
) -> None:
    """SIGTERM too, as docs/cluster.md says: Ray's head had put its own handler in, which
    drained for 30 s (its GCS gone) and printed Ray's traceback."""
    cluster = psutil.Process(ray_local.pid)
    raylets = [p for p in cluster.children() if p.name() == "raylet"]
    assert len(raylets) == 2  # the head's and the node's
    wait_for(lambda: all(r.children() for r in raylets), 30, "each raylet to start its agents")
    started = cluster.children(recursive=True)
    try:
        for gcs in [p for p in cluster.children() if p.name() == "gcs_server"]:
            gcs.kill()
        wait_for(lambda: not any(alive(r) for r in raylets), 60, "the raylets to end")

        ray_local.send_signal(signum)
        assert ray_local.wait(timeout=90) == 0
        assert ray_local.stderr is not None
        ray_local.stderr.seek(0)
        said = ray_local.stderr.read()
        assert "Traceback" not in said and "Draining" not in said, said
        wait_for(lambda: not any(alive(p) for p in started), 15, "every Ray process to end")
    finally:
        for process in started:  # what a failed check left (by handle: pid and start time)
            if alive(process):
                process.kill()
