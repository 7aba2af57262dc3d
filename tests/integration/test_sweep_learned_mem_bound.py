"""A memory request a sweep learns never asks for more than its points' GPUs give: a point that
used 22.5 GiB of a 24 GiB GPU taught its siblings 24.8 GiB (its peak plus 10 %), which no
GPU has, and the rest of the sweep stayed queued for ever ("can never run on these GPUs"),
`sweep wait` with it. Requests an older daemon learned so are lowered as a daemon starts
(real daemon, fake GPUs told the memory each job uses by its fake_gpu_usage.json)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import Herd

GIB = 2**30

# Reports its fake GPU memory (docs/gpus.md), then lasts long enough for a reading of it.
USEMEM = """#!/bin/sh
echo "{\\"memory\\": \\"$1\\"}" > "$GPUHERD_JOB_DIR/fake_gpu_usage.json"
sleep "$2"
"""


def _usemem(herd: Herd) -> Path:
    work = herd.home.parent / "work"
    work.mkdir()
    script = work / "usemem.sh"
    script.write_text(USEMEM)
    script.chmod(0o755)
    return work


def _learned(herd: Herd, job_id: int) -> list[str]:
    return [e["detail"] for e in herd.job(job_id)["events"] if e["event"] == "learn"]


def test_a_point_using_most_of_its_gpu_leaves_its_siblings_runnable(herd: Herd) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    work = _usemem(herd)
    herd.cli("pause")  # (the first point starts first: it alone has the GPU, asking no --mem)
    command = "./usemem.sh 22.5GiB {s}"
    sweep = ["sweep", command, "-p", "s", "2.5", "0.3", "0.31", "--name", "big", "-q"]
    first, *siblings = map(int, herd.cli(*sweep, cwd=work).stdout.split())
    herd.cli("resume")
    herd.wait_state(first, "succeeded", timeout=30)

    waited = herd.cli("sweep", "wait", "big", "--timeout", "30s", check=False)
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert "3 of 3 points succeeded" in waited.stdout + waited.stderr
    for job_id in siblings:  # the GPU's 24 GiB, not 22.5 GiB x 1.1 = 24.75 GiB
        assert herd.job(job_id)["mem"] == 24 * GIB
        assert _learned(herd, job_id) == [f"mem {24 * GIB} from a sibling (all its GPUs give)"]


def test_a_request_learned_above_the_gpus_by_an_older_daemon_is_lowered_at_start(
    herd: Herd,
) -> None:
    herd.start("--fake-gpus", "2")  # (24 GiB each)
    work = _usemem(herd)
    sweep = ["sweep", "./usemem.sh 1GiB {s}", "-p", "s", "0.1", "0.2", "--name", "old", "-q"]
    held = list(map(int, herd.cli(*sweep, "--hold", cwd=work).stdout.split()))
    herd.cli("daemon", "stop")
    # What an older daemon left: 24.8 GiB learned from a point that used 22.5 GiB.
    learned = int(22.5 * GIB * 1.1)
    with sqlite3.connect(herd.home / "herd.db") as db:
        db.executemany(
            "UPDATE jobs SET mem = ?, mem_learned = 1 WHERE id = ?", [(learned, i) for i in held]
        )
    db.close()

    herd.start("--fake-gpus", "2")
    for job_id in held:
        assert herd.job(job_id)["mem"] == 24 * GIB
        assert _learned(herd, job_id) == [
            f"mem {24 * GIB}: all its GPUs give (it had learned more)"
        ]
    herd.cli("release", *map(str, held))
    waited = herd.cli("sweep", "wait", "old", "--timeout", "30s", check=False)
    assert waited.returncode == 0, waited.stdout + waited.stderr


def test_a_request_the_user_gave_is_never_lowered(herd: Herd) -> None:
    """Only a learned request is the daemon's to lower: a --mem the user gave stays as given
    (its line says `gpuherd edit ... --mem`, as before)."""
    herd.start("--fake-gpus", "2")
    work = _usemem(herd)
    sweep = ["sweep", "./usemem.sh 1GiB {s}", "-p", "s", "0.1", "--name", "own", "-q"]
    (job_id,) = map(int, herd.cli(*sweep, "--hold", cwd=work).stdout.split())
    herd.cli("daemon", "stop")
    with sqlite3.connect(herd.home / "herd.db") as db:  # (asked 30 GiB: no GPU has it)
        db.execute("UPDATE jobs SET mem = ? WHERE id = ?", (30 * GIB, job_id))
    db.close()
    herd.start("--fake-gpus", "2")
    assert herd.job(job_id)["mem"] == 30 * GIB
    assert _learned(herd, job_id) == []
