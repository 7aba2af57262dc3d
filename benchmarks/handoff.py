"""Where a hand-off's time goes (W2, W3): from a job's exit to the next job's start on the
freed GPU, stage by stage.

One fake GPU, N jobs queued behind each other, each a `bash -c` that stamps
`$EPOCHREALTIME` first and last (as W3's jobs do). The engine runs in this process with
timers around its steps (wrapped by name: a renamed step fails this script, and its smoke
test, rather than drop out of the table). For each hand-off, the first time each step began
after the job's end stamp gives the stages:

  the job's end -> its exit seen     bash exits, the job shell records the status, pidfd
  exit seen -> tick                  the loop turns to the tick
  the ended attempt recorded         its job moves on (SQL)
  placement pass                     what starts where
  the start recorded, committed      the attempt and the job's state (SQL, one commit)
  the attempt prepared               its folder, environment, `process` file
  posix_spawn                        until the child has exec'd (vfork)
  spawn -> the job's first stamp     the job shell, then bash's own start-up

and, for comparison, the last stage's floor: `sh -c LINE` and gpuherd's job shell spawned
by hand, back to back, without the engine.

Run: python benchmarks/handoff.py [--jobs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpuherd import engine as engine_module
from gpuherd.attempts import Attempts
from gpuherd.core.model import Policy
from gpuherd.devices import DeviceTable
from gpuherd.engine import Engine
from gpuherd.executors import local
from gpuherd.executors.local import LocalExecutor
from gpuherd.executors.local_shell import JOB_SHELL
from gpuherd.gpus.fake import FakeGpu, FakeProbe
from gpuherd.layout import Layout
from gpuherd.service import Service
from gpuherd.store import Store
from gpuherd.wire import SubmitItem

JOB = "bash -c 's=$EPOCHREALTIME; sleep {sleep}; echo {i} $s $EPOCHREALTIME >> {record}'"

STAGES = [
    ("the job's end -> its exit seen", "end", "exit"),
    ("exit seen -> tick", "exit", "tick"),
    ("the ended attempt recorded", "exits>", "exits<"),
    ("placement pass", "plan>", "plan<"),
    ("the start recorded, committed", "plan<", "committed"),
    ("the attempt prepared", "committed", "spawn>"),
    ("posix_spawn", "spawn>", "spawn<"),
    ("spawn -> the job's first stamp", "spawn<", "start"),
    ("in all: end -> next start", "end", "start"),
]

marks: list[tuple[str, float]] = []


def _timed(owner: Any, name: str, before: str, after: str | None = None) -> None:
    """Mark `before` when owner.name begins and `after` when it returns."""
    original: Callable[..., Any] = getattr(owner, name)  # AttributeError when renamed

    def timed(*args: Any, **kwargs: Any) -> Any:
        marks.append((before, time.time()))
        try:
            return original(*args, **kwargs)
        finally:
            if after:
                marks.append((after, time.time()))

    setattr(owner, name, timed)


def instrument() -> None:
    _timed(Engine, "_on_exit", "exit")
    _timed(Engine, "_tick", "tick")
    _timed(engine_module, "finish_exits", "exits>", "exits<")  # as engine.py calls it
    _timed(Engine, "_plan_starts", "plan>", "plan<")
    _timed(Engine, "_record_exits_and_starts", "recording>", "committed")
    _timed(Attempts, "launch", "prepare>")
    _timed(local.os, "posix_spawn", "spawn>", "spawn<")


async def _run(tmp: Path, jobs: int, record: Path, sleep: float) -> None:
    store = Store(tmp / "herd.db")
    store.replace_devices({0: 1})
    layout = Layout.for_run(tmp / "out", "job_", tmp)
    (tmp / "out").mkdir()
    probe = FakeProbe([FakeGpu()])
    engine = Engine(store, DeviceTable(store, probe), LocalExecutor(), layout, Policy())
    engine.start()
    items = [
        SubmitItem(command=JOB.format(i=i, record=record, sleep=sleep), cwd=str(tmp))
        for i in range(jobs)
    ]
    Service(engine, tmp).submit(items)
    while len(record.read_text().splitlines()) < jobs:
        await asyncio.sleep(0.01)
    engine.close()


def engine_stages(jobs: int, sleep: float) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="handoff-") as folder:
        tmp = Path(folder)
        record = tmp / "record"
        record.touch()
        asyncio.run(_run(tmp, jobs, record, sleep))
        stamps = {}
        for line in record.read_text().splitlines():
            i, start, end = line.split()
            stamps[int(i)] = (float(start), float(end))
    stages: dict[str, list[float]] = {label: [] for label, _, _ in STAGES}
    for i in range(1, jobs):
        end, start = stamps[i - 1][1], stamps[i][0]
        first: dict[str, float] = {"end": end, "start": start}
        for label, at in marks:
            if end <= at <= start:
                first.setdefault(label, at)
        for label, a, b in STAGES:
            if a in first and b in first:
                stages[label].append((first[b] - first[a]) * 1e3)
    return stages


def shell_floor(runs: int) -> dict[str, list[float]]:
    """posix_spawn -> the command's first stamp: a plain `sh -c`, and gpuherd's job shell."""
    found: dict[str, list[float]] = {"sh -c LINE": [], "gpuherd's job shell": []}
    with tempfile.TemporaryDirectory(prefix="handoff-shell-") as folder:
        stamp = os.path.join(folder, "stamp")
        line = f"bash -c 'echo $EPOCHREALTIME > {stamp}'"
        for i in range(runs):
            attempt = os.path.join(folder, f"a{i}")
            os.mkdir(attempt)
            argvs = {
                "sh -c LINE": ["/bin/sh", "-c", line],
                "gpuherd's job shell": ["/bin/sh", "-c", JOB_SHELL, "job", line, folder, attempt],
            }
            for label, argv in argvs.items():
                began = time.time()
                pid = os.posix_spawn("/bin/sh", argv, dict(os.environ), setsid=True)
                os.waitpid(pid, 0)
                with open(stamp) as f:
                    found[label].append((float(f.read()) - began) * 1e3)
    return found


def show(title: str, table: dict[str, list[float]]) -> None:
    print(f"\n{title}\n| stage | p50 ms | p90 ms | n |\n|---|---|---|---|")
    for label, values in table.items():
        if values:
            ordered = sorted(values)
            p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
            print(f"| {label} | {statistics.median(values):.3f} | {p90:.3f} | {len(values)} |")
        else:
            print(f"| {label} | - | - | 0 |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200, help="jobs in the chain (default 200)")
    parser.add_argument(
        "--sleep", type=float, default=0.02, help="each job's sleep in s (default 0.02, W3's)"
    )
    args = parser.parse_args()
    jobs = args.jobs
    instrument()
    stages = engine_stages(jobs, args.sleep)
    show(f"A hand-off in the engine ({jobs} jobs of {args.sleep} s on one GPU):", stages)
    show("posix_spawn -> the command's first stamp, without the engine:", shell_floor(jobs))
    return 0 if stages["in all: end -> next start"] else 1


if __name__ == "__main__":
    sys.exit(main())
