"""Where W1's time goes when gpuherd starts jobs: two measurements without gpuherd itself.

1. `bursts`: k `sh -c true` spawned back to back with `os.posix_spawn`, as the engine does
   when one tick starts k jobs. posix_spawn returns only once the child has exec'd (glibc
   uses vfork), so the caller waits until the child gets a core. On 2 cores the first two
   children get one each; the third waits behind their `sh` start-up.
2. `loops`: a stand-in engine (an asyncio loop spending --work seconds of CPU per job, 4
   slots, pidfd watches) that starts jobs itself, one tick per batch of exits as gpuherd's
   engine does or one tick per exit, or through a small helper process that spawns and
   reports exits over pipes: does moving the vfork wait out of the engine's process pay
   for the extra messages? Or on SLOTS spawner threads, as the 4-thread floor spawns
   (`os.posix_spawn` or subprocess's fork_exec; the loop goes on, or the tick waits for its
   spawns, which then wait for their cores together rather than in turn).

Run: python benchmarks/spawn_study.py [bursts|loops] [--jobs 2000] [--work 0.0005]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

SHELL = "/bin/sh"
TRUE = [SHELL, "-c", "true"]
SLOTS = 4

# The helper: reads job numbers (one per line) on stdin, spawns `sh -c true` for each and
# writes `e <number>` on stdout once that job has exited (it watches them by pidfd).
HELPER = r"""
import os, select
poller = select.poll()
poller.register(0, select.POLLIN)
jobs, pending = {}, b""
while True:
    for fd, _ in poller.poll():
        if fd == 0:
            data = os.read(0, 65536)
            if not data:
                raise SystemExit(0)
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", "true"], os.environ, setsid=True)
                watch = os.pidfd_open(pid)
                jobs[watch] = (line, pid)
                poller.register(watch, select.POLLIN)
        else:
            line, pid = jobs.pop(fd)
            poller.unregister(fd)
            os.close(fd)
            os.waitpid(pid, 0)
            os.write(1, b"e " + line + b"\n")
"""


def busy(seconds: float) -> None:
    """Stand-in for the engine's own work on a job (Python, SQL, files)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def bursts(rounds: int = 300, size: int = 3) -> None:
    waits: list[list[float]] = [[] for _ in range(size)]
    for _ in range(rounds):
        pids = []
        for position in range(size):
            t = time.perf_counter()
            pids.append(os.posix_spawn(SHELL, TRUE, os.environ, setsid=True))
            waits[position].append(time.perf_counter() - t)
        for pid in pids:
            os.waitpid(pid, 0)
    for position, w in enumerate(waits, 1):
        w.sort()
        print(
            f"spawn {position} of {size}: p50 {w[len(w) // 2] * 1e6:.0f} us, "
            f"p90 {w[int(len(w) * 0.9)] * 1e6:.0f} us"
        )


async def inline_loop(jobs: int, work: float, batched: bool = True) -> None:
    """Like the engine: the exits seen in one pass of the loop wake one tick, which does its
    work for every job it starts and then spawns them back to back. Not `batched`: each exit
    gets its own tick (work, spawn), so a job's work overlaps the previous job's start-up."""
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    left, ended, free, tick_due = jobs, 0, SLOTS, False

    def on_exit(pid: int, watch: int) -> None:
        nonlocal ended, free, tick_due
        loop.remove_reader(watch)
        os.close(watch)
        os.waitpid(pid, 0)
        ended, free = ended + 1, free + 1
        if ended == jobs:
            done.set()
        elif not batched:
            tick()
        elif not tick_due:
            tick_due = True
            loop.call_soon(tick)

    def tick() -> None:
        nonlocal left, free, tick_due
        tick_due = False
        starting = min(free, left)
        left, free = left - starting, free - starting
        busy(work * starting)
        for _ in range(starting):
            pid = os.posix_spawn(SHELL, TRUE, os.environ, setsid=True)
            watch = os.pidfd_open(pid)
            loop.add_reader(watch, on_exit, pid, watch)

    tick()
    await done.wait()


async def helper_loop(jobs: int, work: float) -> None:
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    to_helper, from_helper = os.pipe(), os.pipe()
    helper = os.posix_spawn(
        sys.executable,
        [sys.executable, "-c", HELPER],
        os.environ,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, to_helper[0], 0),
            (os.POSIX_SPAWN_DUP2, from_helper[1], 1),
        ],
    )
    os.close(to_helper[0])
    os.close(from_helper[1])
    left, ended, pending = jobs, 0, b""

    def start() -> bytes:
        nonlocal left
        left -= 1
        busy(work)
        return b"%d\n" % left

    def on_message() -> None:
        nonlocal ended, pending
        *lines, pending = (pending + os.read(from_helper[0], 65536)).split(b"\n")
        starts = []
        for _ in lines:
            ended += 1
            if left:
                starts.append(start())
            elif ended == jobs:
                done.set()
        if starts:
            os.write(to_helper[1], b"".join(starts))

    loop.add_reader(from_helper[0], on_message)
    os.write(to_helper[1], b"".join(start() for _ in range(SLOTS)))
    await done.wait()
    loop.remove_reader(from_helper[0])
    os.close(to_helper[1])
    os.waitpid(helper, 0)
    os.close(from_helper[0])


async def threaded_loop(jobs: int, work: float, forked: bool, joined: bool = False) -> None:
    """Like `inline_loop` (batched), but each spawn runs on one of SLOTS threads, as the floor's
    do: the loop goes on while a child waits for a core to exec. `os.posix_spawn` or
    subprocess's fork_exec (what the floor uses; it gained far more here, 2026-11: whether
    posix_spawn keeps the GIL while its child execs was not settled).
    `joined`: the tick waits for its spawns (they wait for their cores together, not in turn),
    so the engine gets every pid within the tick, as it does now."""
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import wait as wait_all

    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    pool = ThreadPoolExecutor(SLOTS)
    left, ended, free, tick_due = jobs, 0, SLOTS, False
    children: dict[int, subprocess.Popen[bytes]] = {}  # a Popen dropped early is reaped by the next

    def spawn() -> int:
        if forked:
            child = subprocess.Popen(TRUE, start_new_session=True)
            children[child.pid] = child
            return child.pid
        return os.posix_spawn(SHELL, TRUE, os.environ, setsid=True)

    def on_exit(pid: int, watch: int) -> None:
        nonlocal ended, free, tick_due
        loop.remove_reader(watch)
        os.close(watch)
        os.waitpid(pid, 0)
        if (child := children.pop(pid, None)) is not None:
            child.returncode = 0  # reaped above
        ended, free = ended + 1, free + 1
        if ended == jobs:
            done.set()
        elif not tick_due:
            tick_due = True
            loop.call_soon(tick)

    def spawned(pid: int) -> None:
        watch = os.pidfd_open(pid)
        loop.add_reader(watch, on_exit, pid, watch)

    def tick() -> None:
        nonlocal left, free, tick_due
        tick_due = False
        starting = min(free, left)
        left, free = left - starting, free - starting
        busy(work * starting)
        if joined:
            spawns = [pool.submit(spawn) for _ in range(starting)]
            wait_all(spawns)
            for future in spawns:
                spawned(future.result())
            return
        for _ in range(starting):
            loop.run_in_executor(pool, spawn).add_done_callback(lambda f: spawned(f.result()))

    tick()
    await done.wait()
    pool.shutdown()


def loops(jobs: int, work: float, reps: int = 3) -> None:
    variants: dict[str, Callable[[], Coroutine[Any, Any, None]]] = {
        "inline, one tick per batch of exits": lambda: inline_loop(jobs, work),
        "inline, one tick per exit": lambda: inline_loop(jobs, work, batched=False),
        "helper process": lambda: helper_loop(jobs, work),
        "4 spawner threads, os.posix_spawn": lambda: threaded_loop(jobs, work, False),
        "4 spawner threads, subprocess fork_exec": lambda: threaded_loop(jobs, work, True),
        "4 spawner threads, os.posix_spawn, tick waits": lambda: threaded_loop(
            jobs, work, False, True
        ),
        "4 spawner threads, fork_exec, tick waits": lambda: threaded_loop(jobs, work, True, True),
    }
    for name, run in variants.items():
        rates = []
        for _ in range(reps):
            t = time.perf_counter()
            asyncio.run(run())
            rates.append(jobs / (time.perf_counter() - t))
        print(
            f"{name}: {statistics.median(rates):,.0f} jobs/s "
            f"(min {min(rates):,.0f}, max {max(rates):,.0f}; {work * 1e6:.0f} us of work a job)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", choices=("bursts", "loops"), nargs="?", default="bursts")
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--work", type=float, default=0.0005, help="CPU seconds per job")
    args = parser.parse_args()
    if args.study == "bursts":
        bursts()
    else:
        loops(args.jobs, args.work)


if __name__ == "__main__":
    main()
