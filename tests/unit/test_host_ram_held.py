"""A running job's --ram is held for it (core/host_ram.py, host_room.py): a job that starts
must not take memory a running job asked for and has not used yet. It used to be counted
only within one placement pass, so jobs submitted together oversubscribed the host: a pass
50 ms after the first read the same (cached) MemAvailable and started one more."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from gpuherd import host_room
from gpuherd.core.host_ram import ram_held
from gpuherd.core.model import Job, JobSpec, Policy
from gpuherd.core.placement import plan
from gpuherd.core.states import JobState
from gpuherd.host_room import HostRoom, tree_rss

GIB = 1024**3
MIB = 1024**2


def test_a_run_holds_what_it_asked_for_and_does_not_use_yet() -> None:
    used = {(1, 1): 2 * GIB, (2, 1): 12 * GIB}
    asked = [((1, 1), 9 * GIB), ((2, 1), 9 * GIB), ((3, 1), 9 * GIB)]
    # 1 uses 2 of its 9 GiB: holds 7; 2 grew past its 9 (the reading counts it): nothing;
    # 3 started since the reading (not measured with it): all of its 9.
    assert ram_held(asked, used) == 16 * GIB
    assert ram_held([], used) == 0


@dataclass
class _Run:
    job_id: int
    attempt: int
    pid: int
    ram: int | None


def _job(job_id: int, ram: int) -> Job:
    spec = JobSpec("sleep 20", "/", gpus=0, ram=ram)
    return Job(job_id, spec, JobState.QUEUED, position=job_id)


def test_jobs_submitted_together_do_not_oversubscribe_the_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bug: 3 x --ram 9GiB against 20 GiB available; two start in a pass, and the next
    # pass, on the same reading, started the third.
    monkeypatch.setattr(host_room, "host_memory_available", lambda: 20 * GIB)
    monkeypatch.setattr(host_room, "tree_rss", lambda pid: 100 * MIB)
    room, policy = HostRoom(), Policy()
    queue = [_job(i, 9 * GIB) for i in (1, 2, 3)]
    running: list[_Run] = []

    def one_pass() -> list[int]:
        free = room.read(60.0, running).room
        started = [a.job_id for a in plan(queue, [], [], policy, 0.0, host_free=free)]
        running.extend(_Run(i, 1, 100 + i, 9 * GIB) for i in started)
        queue[:] = [j for j in queue if j.id not in started]
        return started

    assert one_pass() == [1, 2]
    assert room.read(60.0, running).held == 18 * GIB  # started since the reading: all of it
    assert one_pass() == []  # (the old code: [3], 27 GiB asked of 20)
    # Read again: each uses 100 MiB (counted by MemAvailable), and holds the rest.
    assert room.read(0.0, running).held == 2 * (9 * GIB - 100 * MIB)
    assert one_pass() == []
    running.pop(0)  # job 1 ends
    assert one_pass() == [3]


def test_a_job_without_ram_starts_while_running_jobs_hold_theirs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(host_room, "host_memory_available", lambda: 20 * GIB)
    monkeypatch.setattr(host_room, "tree_rss", lambda pid: 0)
    held = HostRoom().read(0.0, [_Run(1, 1, 101, 15 * GIB), _Run(2, 1, 102, None)])
    assert (held.available, held.held, held.room) == (20 * GIB, 15 * GIB, 5 * GIB)
    plain = Job(3, JobSpec("true", "/", gpus=0), JobState.QUEUED, position=3)
    assert [a.job_id for a in plan([plain], [], [], Policy(), 0.0, host_free=held.room)] == [3]
    keep = Policy(keep_ram=6 * GIB)  # promised beyond the margin: nothing starts
    assert plan([plain], [], [], keep, 0.0, host_free=held.room) == []


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_a_jobs_use_is_its_whole_process_trees() -> None:
    hog = "b = b'x' * 200 * 2**20; import sys; print('x', flush=True); input()"
    shell = subprocess.Popen(
        ["sh", "-c", f'{sys.executable} -c "{hog}"; :'],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert shell.stdout is not None and shell.stdout.read(1) == b"x"
        assert tree_rss(shell.pid) >= 200 * MIB  # (its child's, the shell's own is small)
    finally:
        shell.communicate(b"\n")
    assert tree_rss(shell.pid) == 0  # gone
