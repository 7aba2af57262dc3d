"""What one engine tick costs apart from its jobs, and what its commit costs per job.

1. An empty tick: 4 fake GPU slots busy with `sleep`, 2,100 jobs queued (more than one
   pass reads: engine_scan.SCAN_LIMIT); a tick that has nothing to record and finds no room
   (the placement pass, the device listing, two small queries, an empty transaction).
2. The engine's placement pass alone (what it reads of the queue and `plan`, nothing
   recorded), over a real database: W7's 100,000 queued 1-GPU jobs on 8 GPUs with 1 free
   or none, and 2,100 queued 4-GPU jobs with 3 of 4 GPUs free (no job fits: the pass reads
   its whole window, then the jobs of the shapes that could fit behind it).
3. The SQL of a job's end and the next job's start (6 statements), for 3 jobs in one
   transaction (a tick of W1's usual size) or each in its own (one tick per exit), in the
   daemon's database (WAL) and in `gpuherd run`'s scratch one.

Run: python benchmarks/tick_cost.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpuherd.core.model import Attempt, JobSpec, Policy
from gpuherd.core.states import JobState
from gpuherd.devices import DeviceTable
from gpuherd.engine import Engine
from gpuherd.executors.local import LocalExecutor
from gpuherd.gpus.fake import FakeGpu, FakeProbe
from gpuherd.layout import Layout
from gpuherd.service import Service
from gpuherd.store import NewJob, Store
from gpuherd.wire import SubmitItem
from harness.engine_pass import pass_times

SLOTS = 4
QUEUED = 2100


async def empty_tick(ticks: int = 3000) -> float:
    with tempfile.TemporaryDirectory(prefix="tick-cost-") as tmp:
        return await _empty_tick(Path(tmp), ticks)


async def _empty_tick(tmp: Path, ticks: int) -> float:
    store = Store(tmp / "herd.db")
    store.replace_devices(dict.fromkeys(range(SLOTS), 1))
    probe = FakeProbe([FakeGpu() for _ in range(SLOTS)])
    layout = Layout.for_run(tmp / "out", "job_", tmp)
    engine = Engine(store, DeviceTable(store, probe), LocalExecutor(), layout, Policy())
    (tmp / "out").mkdir()
    engine.start()
    Service(engine, tmp).submit(
        [SubmitItem(command="sleep 60", cwd=str(tmp)) for _ in range(QUEUED + SLOTS)]
    )
    while len(engine.live) < SLOTS:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # the spawns' pids recorded: later ticks record nothing
    start = time.perf_counter()
    for _ in range(ticks):
        engine._tick()
    seconds = (time.perf_counter() - start) / ticks
    engine.kill_all(0.1)
    await engine.drain()
    engine.close()
    store.close()
    return seconds


def placement_pass(queued: int, gpus: int, busy: int, per_job: int, passes: int = 50) -> float:
    """The median time of the engine's placement pass (harness/engine_pass.py)."""
    return statistics.median(pass_times(queued, gpus, busy, per_job, passes))


def end_and_start(per_tick: int, commit_each: bool, scratch: bool, rounds: int = 300) -> float:
    with tempfile.TemporaryDirectory(prefix="tick-cost-") as tmp:
        store = Store(Path(tmp) / "herd.db", scratch=scratch)
        return _end_and_start(store, per_tick, commit_each, rounds)


def _end_and_start(store: Store, per_tick: int, commit_each: bool, rounds: int) -> float:
    spec = JobSpec(command="true", cwd="/tmp")
    queue = iter(store.add_jobs([NewJob(spec) for _ in range(2000)], 1.0))

    def start(job_id: int, at: float) -> None:
        attempt = Attempt(job_id, 1, (0,), ("",), "/tmp/x", "host", started_at=at)
        store.add_attempt(attempt)
        store.update_job(
            job_id, at, "start", JobState.RUNNING, from_state=JobState.QUEUED, attempt=1
        )

    def end(job_id: int, at: float) -> None:
        store.update_attempt(job_id, 1, ended_at=at, exit_code=0)
        store.update_job(job_id, at, "succeed", JobState.SUCCEEDED, from_state=JobState.RUNNING)

    running = [next(queue) for _ in range(per_tick)]
    for job_id in running:
        start(job_id, 1.0)
    begin = time.perf_counter()
    for _ in range(rounds):
        following = [next(queue) for _ in range(per_tick)]
        pairs = list(zip(running, following, strict=True))
        for group in [[pair] for pair in pairs] if commit_each else [pairs]:
            with store.transaction():
                for old, new in group:
                    end(old, 2.0)
                    start(new, 2.0)
        running = following
    store.close()
    return (time.perf_counter() - begin) / (rounds * per_tick)


def main() -> None:
    print(f"empty tick, {QUEUED:,} queued: {asyncio.run(empty_tick()) * 1e6:.0f} us")
    for queued, gpus, busy, per_job in ((100_000, 8, 7, 1), (100_000, 8, 8, 1), (2100, 4, 1, 4)):
        seconds = placement_pass(queued, gpus, busy, per_job)
        print(
            f"placement pass, {queued:,} queued {per_job}-GPU jobs, {gpus - busy} of {gpus} "
            f"GPUs free: {seconds * 1e3:.2f} ms"
        )
    for scratch, which in ((False, "daemon (WAL)"), (True, "run (scratch)")):
        together = end_and_start(3, commit_each=False, scratch=scratch)
        alone = end_and_start(3, commit_each=True, scratch=scratch)
        print(
            f"{which}: a job's end and the next start: {together * 1e6:.0f} us a job with 3 "
            f"in a transaction, {alone * 1e6:.0f} us with a transaction each"
        )


if __name__ == "__main__":
    main()
