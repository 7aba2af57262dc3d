"""A job whose folder cannot be written as it ends (read-only, full disk, NFS away): herd.db
has its end, its folder not (no SUCCESS, job.json without its end). Said in daemon.log and the
job's history, and in the history of a job `--after` it that starts all the same; written
again later (here: by the next daemon's start), after which a sweep submitted again skips it.
Before, the daemon said nothing, and the sweep ran the point again ("1 new").

The fault: a read-only bind mount of the point's folder (root ignores file modes).
"""

from __future__ import annotations

import json
from pathlib import Path

from faults import read_only_bind

from conftest import Herd, wait_for


def events(herd: Herd, job_id: int, name: str) -> list[str]:
    return [e["detail"] for e in herd.job(job_id)["events"] if e["event"] == name]


def test_an_end_its_folder_refused_is_said_and_written_once_it_can_be(
    herd: Herd, tmp_path: Path
) -> None:
    results, go = tmp_path / "results", tmp_path / "go"
    point = results / "x=1"
    sweep = [
        "sweep",
        f"while [ ! -e {go} ]; do sleep 0.02; done; echo {{x}}",
        "--name",
        "mk",
        "-p",
        "x",
        "1",
        "--results-dir",
        str(results),
    ]
    herd.start("--fake-gpus", "2")
    try:
        herd.cli(*sweep)
        herd.wait_state(1, "running")
        waiter = herd.submit("--after", "1", "--", f"test -e {point}/SUCCESS || echo missing")
        with read_only_bind(point):
            go.touch()
            herd.wait_state(1, "succeeded")
            assert herd.wait_state(waiter, "succeeded", "failed")["state"] == "succeeded"
            said = wait_for(lambda: events(herd, 1, "end-unwritten"), what="its history")
            assert str(point) in said[0] and "Read-only file system" in said[0], said
            assert "a sweep submitted again runs it again" in said[0], said
            log = (herd.home / "daemon.log").read_text()
            assert f"job 1 (succeeded): its end could not be written to {point}" in log, log
            assert "Make that folder writable" in log, log
            # Its waiter started (herd.db has the end), and says what it started without.
            assert herd.cli("log", str(waiter)).stdout == "missing\n"
            noted = events(herd, waiter, "dep-end-unwritten")
            assert noted and "job 1's end" in noted[0], herd.job(waiter)["events"]
            assert not (point / "SUCCESS").exists()
            herd.cli("daemon", "stop")
        herd.start("--fake-gpus", "2")  # the folder writable again: its end is written now
        wait_for(lambda: (point / "SUCCESS").exists(), what="SUCCESS written")
        written = json.loads((point / "job.json").read_text())
        assert (written["id"], written["outcome"], written["exit_code"]) == (1, "exit", 0)
        assert (point / "attempt-1" / "SUCCESS").exists()
        assert events(herd, 1, "end-written"), herd.job(1)["events"]
        again = herd.cli(*sweep).stdout
        assert "0 new" in again and "1 done skipped" in again, again
        assert f"job 1: its end is written to {point} now" in (herd.home / "daemon.log").read_text()
    finally:
        herd.cleanup()  # before the unmount: no job may keep a file open in it
