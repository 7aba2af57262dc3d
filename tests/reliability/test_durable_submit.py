"""A submission is on the disk before it is acknowledged (a power cut keeps it), while a job's
start and end stay cheap: seen in the system calls of a real daemon run under strace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import Herd, wait_for

STRACE = shutil.which("strace")

# CI installs strace (.ci/run): there a missing one fails the test instead of skipping it.
pytestmark = pytest.mark.skipif(
    STRACE is None and not os.environ.get("CI"),
    reason="strace is not installed (Debian: apt-get install strace)",
)


class Syncs:
    """The fsync and fdatasync calls of a daemon, as strace writes them (one per line:
    `TID fdatasync(7</home/herd.db-wal>) = 0`; strace writes a line before the call returns
    to the daemon, so before the daemon answers)."""

    def __init__(self, trace: Path, committer: int) -> None:
        self.trace = trace
        self.committer = committer
        """The thread that commits: the daemon's main one (its event loop), tid = pid."""

    def mark(self) -> int:
        """How many whole lines the trace holds now."""
        return self.trace.read_bytes().count(b"\n")

    def between(self, start: int, end: int) -> list[tuple[int, str]]:
        """(thread, file) of each sync of herd.db or its log in lines [start, end)."""
        lines = self.trace.read_text().splitlines()[start:end]
        found = []
        for line in lines:
            tid, _, call = line.partition(" ")
            for name in ("herd.db-wal>", "herd.db>"):
                if "sync(" in call and name in call:
                    found.append((int(tid), name[:-1]))
        return found

    def of_the_log_by_the_committer(self, start: int, end: int) -> int:
        return self.between(start, end).count((self.committer, "herd.db-wal"))

    def checkpointed(self, start: int, end: int) -> bool:
        """Whether the checkpoint thread synced anything in lines [start, end)."""
        return any(tid != self.committer for tid, _ in self.between(start, end))


@pytest.fixture
def syncs(herd: Herd, tmp_path: Path) -> Iterator[Syncs]:
    trace = tmp_path / "syncs.trace"
    command = [STRACE or "strace", "-f", "-qq", "-y", "-e", "trace=fdatasync,fsync"]
    command += ["-e", "signal=none", "-o", str(trace), sys.executable, "-m", "gpuherd"]
    command += ["daemon", "start", "--foreground", "--fake-gpus", "1"]
    proc = subprocess.Popen(
        command, env=herd.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(herd.is_up, what="the daemon under strace to answer")
        yield Syncs(trace, herd.pid)
    finally:
        herd.cleanup()  # kills the daemon; strace ends with it
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def without_a_checkpoint(syncs: Syncs, herd: Herd, check: Callable[[int], None]) -> None:
    """Run `check(mark)` after a commit made just before `mark` (a held job), in a round
    where the checkpoint thread did nothing from that commit to the end of the check.

    Why: the first commit after a checkpoint that copied the whole log starts the log over
    and syncs its new header under NORMAL too, so a round with a checkpoint in it
    would see a sync that tells nothing. The thread checkpoints once the database has been
    quiet for 2 s (or after 64 commits); a round is a few commits a fraction of a second
    apart, so one is rarely spoiled, and a spoiled one is run again, never judged.
    """
    for _ in range(3):
        start = syncs.mark()
        herd.submit("--hold", "--", "true")
        mark = syncs.mark()
        check(mark)
        if not syncs.checkpointed(start, syncs.mark()):
            return
    pytest.fail("the checkpoint thread synced during every round: nothing could be judged")


def test_a_submission_is_synced_before_it_is_acknowledged_and_a_job_end_is_not(
    herd: Herd, syncs: Syncs
) -> None:
    rounds: list[tuple[int, int]] = []

    def submit_then_run(mark: int) -> None:
        job = herd.submit("--", "true")
        acknowledged = syncs.mark()
        herd.wait_state(job, "succeeded")  # its start and end: the hand-off path
        rounds.append(
            (
                syncs.of_the_log_by_the_committer(mark, acknowledged),
                syncs.of_the_log_by_the_committer(acknowledged, syncs.mark()),
            )
        )

    without_a_checkpoint(syncs, herd, submit_then_run)
    at_submit, at_start_and_end = rounds[-1]
    assert at_submit >= 1, "the submission was acknowledged before its log was synced"
    assert at_start_and_end == 0, "a job's start or end synced the log (FULL for every commit?)"


def test_a_sweep_is_synced_before_it_is_acknowledged(herd: Herd, syncs: Syncs) -> None:
    seen: list[int] = []

    def sweep(mark: int) -> None:
        herd.cli("sweep", "true {x}", "-p", "x", "1", "2", "--hold", "--name", f"s{len(seen)}")
        seen.append(syncs.of_the_log_by_the_committer(mark, syncs.mark()))

    without_a_checkpoint(syncs, herd, sweep)
    assert seen[-1] >= 1, "the sweep was acknowledged before its log was synced"


PHASES = """
import os, sys
from pathlib import Path
from gpuherd.store import Store

folder = Path(sys.argv[1])
store, scratch = Store(folder / "herd.db"), Store(folder / "scratch.db", scratch=True)
store.set_setting("warm", "up")  # starts the log over, if opening left it checkpointed

def phase(name):  # a sync of a file named after the phase: a mark in the trace
    fd = os.open(folder / name, os.O_CREAT | os.O_WRONLY)
    os.fsync(fd)
    os.close(fd)

phase("nested")
with store.transaction():
    with store.transaction(durable=True):
        store.set_setting("a", "1")
phase("failed")
try:
    with store.transaction(durable=True):
        store.set_setting("b", "2")
        raise ValueError
except ValueError:
    pass
phase("after")
store.set_setting("c", "3")
phase("scratch")
with scratch.transaction(durable=True):
    scratch.set_setting("d", "4")
phase("end")
"""


def test_a_durable_transaction_nested_in_another_or_in_a_scratch_store(tmp_path: Path) -> None:
    """In one process, a few ms long (no checkpoint runs: see without_a_checkpoint): a durable
    transaction inside one that is not syncs the log once the outer one commits; one rolled
    back leaves the next commit unsynced (the level is back to NORMAL); a scratch store
    (`gpuherd run`'s: synchronous OFF, no log) syncs nothing even when asked."""
    trace = tmp_path / "phases.trace"
    command = [STRACE or "strace", "-f", "-qq", "-y", "-e", "trace=fdatasync,fsync", "-o"]
    subprocess.run(
        [*command, str(trace), sys.executable, "-c", PHASES, str(tmp_path)],
        check=True,
        timeout=60,
    )
    synced: dict[str, list[str]] = {}
    phase = "open"
    for line in trace.read_text().splitlines():
        name = line.rpartition("/")[2].partition(">")[0]
        if name in ("nested", "failed", "after", "scratch", "end"):
            phase = name
        else:
            synced.setdefault(phase, []).append(name)
    assert "herd.db-wal" in synced.get("nested", []), synced
    assert "failed" not in synced and "after" not in synced, synced
    assert "scratch" not in synced, synced
