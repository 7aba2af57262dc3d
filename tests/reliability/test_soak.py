"""Soak: thousands of trivial jobs (10 % failing) through one daemon. Its descriptors and
threads come back to where they were, its memory barely grows, and it leaves no zombie.

CI: 2,000 jobs; GPUHERD_SOAK=full: 10,000 (the issue's figure).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import psutil
from faults import elapsed, integrity, job_processes, record, scaled

from conftest import Herd, wait_for

SEED = 77
BATCH = 100
FAILING = "sh -c 'exit 1'"


def usage(process: psutil.Process) -> tuple[int, int, int]:
    return process.num_fds(), process.num_threads(), process.memory_info().rss


def zombies(process: psutil.Process) -> list[int]:
    found = []
    for child in process.children(recursive=True):
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                found.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def run_batches(herd: Herd, commands: list[str], cwd: Path) -> list[int]:
    """Submit in batches of BATCH through the Python client; wait until all have finished."""
    env = dict(os.environ)
    ids: list[int] = []
    for start in range(0, len(commands), BATCH):
        batch = commands[start : start + BATCH]
        items = [{"command": c, "cwd": str(cwd), "env": env} for c in batch]
        ids += herd.client.post("/jobs", {"jobs": items})["ids"]

    def all_done() -> bool:
        counts = herd.client.get("/daemon")["counts"]
        return counts.get("succeeded", 0) + counts.get("failed", 0) >= ids[-1]

    wait_for(all_done, timeout=max(60.0, len(commands) / 20), what="the batch to finish")
    return ids


def test_soak_leaks_nothing(daemon: Herd, tmp_path: Path) -> None:
    total = scaled(2_000, 10_000)
    warmup = 300
    rng = random.Random(SEED)
    commands = [FAILING if rng.random() < 0.1 else "true" for _ in range(warmup + total)]
    process = psutil.Process(daemon.pid)

    run_batches(daemon, commands[:warmup], tmp_path)
    time.sleep(0.5)  # let the last connections close
    fds0, threads0, rss0 = usage(process)
    began = time.monotonic()
    ids = run_batches(daemon, commands[warmup:], tmp_path)
    seconds = elapsed(began)

    def settled() -> bool:
        fds, threads, _ = usage(process)
        return abs(fds - fds0) <= 2 and abs(threads - threads0) <= 2

    settled_in = time.monotonic()
    wait_for(settled, timeout=10, what="descriptors and threads back to their level")
    fds1, threads1, rss1 = usage(process)
    assert zombies(process) == []
    assert job_processes(daemon.home) == []

    jobs = daemon.client.get("/jobs", all=True)["jobs"]
    assert len(jobs) == warmup + total
    failed = [j["id"] for j in jobs if j["state"] == "failed"]
    expected = [n + 1 for n, c in enumerate(commands) if c == FAILING]
    assert failed == expected  # exactly the 10 % that exit 1, no other
    assert {(j["outcome"], j["exit_code"]) for j in jobs if j["state"] == "failed"} == {("exit", 1)}
    assert {j["state"] for j in jobs} == {"succeeded", "failed"}
    assert integrity(daemon.home / "herd.db") == "ok"
    growth = (rss1 - rss0) / 2**20
    assert growth < 50, f"RSS grew by {growth:.1f} MiB"
    record(
        "soak",
        jobs=total,
        failing=sum(1 for c in commands[warmup:] if c == FAILING),
        jobs_per_second=round(total / seconds, 1),
        fds=[fds0, fds1],
        threads=[threads0, threads1],
        rss_mib=[round(rss0 / 2**20, 1), round(rss1 / 2**20, 1)],
        rss_growth_mib=round(growth, 1),
        settle_seconds=elapsed(settled_in),
        zombies=0,
        seconds=seconds,
        ids=[ids[0], ids[-1]],
    )
