"""Ctrl-C while the daemon submits a big sweep: the daemon goes on with what it was sent, so
every point is queued all the same. A bare `gpuherd: interrupted` read as a submission
called off; the line now says it may not be, and how to see and cancel its points."""

from __future__ import annotations

import signal
import subprocess
import sys

from conftest import Herd, wait_for

POINTS = 10_000  # (their folders take the daemon seconds to write: time to interrupt)


def test_an_interrupted_submission_says_it_may_go_on(daemon: Herd) -> None:
    work = daemon.home.parent
    results = work / "results" / "ci"
    args = ["sweep", "true {s}", "-p", "s", *map(str, range(POINTS)), "--name", "ci"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuherd", *args, "--hold", "--yes"],
        env=daemon.env,
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # A folder written: the daemon has the request (it writes them before storing the jobs).
    wait_for(lambda: results.is_dir() or proc.poll() is not None, timeout=60, what="folders")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert err == (
        "gpuherd: interrupted: sweep ci may be submitted all the same, as the daemon goes on"
        " with a sweep it was sent: gpuherd sweep status ci shows its points; gpuherd kill"
        " $(gpuherd ls -q --sweep ci --state queued,held) cancels those waiting\n"
    )

    def queued() -> bool:
        sweeps = daemon.json("sweep", "ls")
        return any(s["name"] == "ci" and s["counts"] == {"held": POINTS} for s in sweeps)

    wait_for(queued, timeout=60, what="every point queued all the same")
    daemon.cli("sweep", "rm", "ci", timeout=120)
