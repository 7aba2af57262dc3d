"""A job's `gpuherd` and gpuherd.connect() reach the daemon that runs it, whatever home the
submitter's environment named: a script's `connect(home=...)` (or `task(herd=...)`) with
another GPUHERD_HOME gave its jobs that other home, and with none set, a job's connect()
started a daemon in the default home (real daemon, a real job that submits a job)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import Herd, wait_for

SCRIPT = """
import json, sys, gpuherd
herd = gpuherd.connect(home=sys.argv[1], start=False)
job = herd.submit(sys.argv[2])
print(json.dumps(job.id))
"""

# The job submits a job of its own through the CLI, and notes where it thinks its daemon is.
INNER = (
    'echo "$GPUHERD_HOME ${{GPUHERD_SOCKET-unset}}" > {out}/seen; '
    "{python} -m gpuherd submit -q -- true > {out}/inner"
)


def test_a_job_reaches_its_own_daemon_whatever_home_its_submitter_named(
    daemon: Herd, tmp_path: Path
) -> None:
    other = tmp_path / "other-home"  # no daemon: a job that reached it would fail
    env = {**daemon.env, "GPUHERD_HOME": str(other), "GPUHERD_SOCKET": str(tmp_path / "x.sock")}
    command = INNER.format(out=tmp_path, python=sys.executable)
    submitted = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(daemon.home), command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    outer = json.loads(submitted.stdout)
    daemon.wait_state(outer, "succeeded")
    assert (tmp_path / "seen").read_text().split() == [str(daemon.home), "unset"]
    inner = int((tmp_path / "inner").read_text())
    assert wait_for(lambda: daemon.job(inner)["state"] == "succeeded")
    assert not other.exists()
