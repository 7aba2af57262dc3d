"""A Ray attempt found gone by a daemon on this machine (a home switched from Ray with
`--abandon-running`), with no sign of life left by the last daemon: nothing is known of its
end but that it is gone, so its end is the moment the restart found it gone, and daemon.log
says it ran on a Ray cluster. Before, it was said "killed with SIGKILL" (nothing here killed
it), and this machine's boot and the daemon's copies of its logs were taken for its own.

The state is built, not run on a cluster (tests/ray/test_ray_switched_jobs.py runs one, where
the last daemon's stop leaves a sign of life): a job of this machine, its daemon crashed and
its processes killed, whose folder then gets what the Ray executor writes as it launches an
attempt (`ray.json`), and whose last daemon's note of the jobs it saw alive is dropped.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from conftest import Herd, group_members, wait_for
from gpuherd import paths
from gpuherd.core.when import format_moment
from gpuherd.store import Store


def test_a_ray_attempt_with_no_sign_of_life_ends_when_found_gone(daemon: Herd, work: Path) -> None:
    job = daemon.submit("--cwd", str(work), "--", "echo started; exec sleep 300")
    pid = int(wait_for(lambda: daemon.job(job)["pid"], what="its pid"))
    folder = daemon.home / "jobs" / str(job) / "attempt-1"
    wait_for(lambda: (folder / "stdout.log").read_text() == "started\n", what="its first line")
    booted = time.time()  # (told the restart: this machine's boot, after its start)
    daemon.kill9()
    os.killpg(pid, signal.SIGKILL)
    wait_for(lambda: not group_members(pid), what="its processes to be gone")
    (folder / "ray.json").write_text(json.dumps({"actor": f"gpuherd-0-{job}-1", "handle": pid}))
    store = Store(paths.database(daemon.home))
    try:
        store.set_setting("seen_alive", "")  # (the crashed daemon's note of it)
    finally:
        store.close()
    daemon.env["GPUHERD_TEST_BOOT_TIME"] = repr(booted)
    wait_for(lambda: time.time() > booted + 1.0, what="a second to pass")
    restarted = time.time()
    daemon.start()

    lost = daemon.wait_state(job, "lost")
    assert lost["ended_at"] >= restarted, (lost, restarted)  # not its log's, nor the boot
    said = daemon.cli("daemon", "log", "-n", "20").stdout
    line = next(line for line in said.splitlines() if f"job {job} attempt 1 (pid" in line)
    end = format_moment(lost["ended_at"], time.time())
    assert line.endswith(
        f"job {job} attempt 1 (pid {pid}) is gone, with no exit status recorded (it ran on a "
        f"Ray cluster, where no daemon saw how it ended; its end recorded at {end}, when this "
        "daemon found it gone): the job is lost"
    ), line
    # Its outcome (show, ls) says so too, where it said "the process vanished without an
    # exit status" of processes that may well run on there.
    assert lost["attempts"][0]["message"] == (
        "it ran on a Ray cluster this daemon does not use (--abandon-running): its processes"
        " may go on there"
    ), lost["attempts"][0]
