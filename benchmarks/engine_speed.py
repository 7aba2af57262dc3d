"""Engine speed, measured with a real daemon on fake GPUs (issue: The engine).

1. Hand-off latency: exit of one job -> start of the next on the freed GPU. Jobs are bash
   one-liners that write $EPOCHREALTIME (a builtin, no fork) when they start and just before
   they exit, so the gap includes the job's own bash start-up (~1 ms) - a ceiling on the
   scheduler's share.
2. `gpuherd ls` wall time with 10,000 queued jobs (submitted in one batch, queue paused).

Run: python benchmarks/engine_speed.py [--jobs 200] [--queued 10000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpuherd.client import Client


def gherd(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuherd", *args],
        env=env,
        text=True,
        capture_output=True,
        check=True,
    )


def wait_all_done(client: Client, ids: list[int]) -> None:
    while not client.get("/jobs/wait", ids=ids, timeout=30)["done"]:
        pass


def handoff(env: dict[str, str], client: Client, out: Path, jobs: int) -> list[float]:
    lines = [
        f"bash -c 'echo $EPOCHREALTIME > {out}/s{i}; echo $EPOCHREALTIME > {out}/e{i}'"
        for i in range(jobs)
    ]
    ids = client.post(
        "/jobs",
        {"jobs": [{"command": line, "cwd": str(out), "env": dict(os.environ)} for line in lines]},
    )["ids"]
    wait_all_done(client, ids)
    starts = [float((out / f"s{i}").read_text()) for i in range(jobs)]
    ends = [float((out / f"e{i}").read_text()) for i in range(jobs)]
    # One GPU, one slot, in order: job i+1 starts when job i has exited.
    return [(starts[i + 1] - ends[i]) * 1000 for i in range(jobs - 1)]


def handoff_floor(out: Path, jobs: int) -> list[float]:
    """The same jobs run back to back by a bare loop (posix_spawn of sh, wait): the floor."""
    for i in range(jobs):
        line = f"bash -c 'echo $EPOCHREALTIME > {out}/fs{i}; echo $EPOCHREALTIME > {out}/fe{i}'"
        pid = os.posix_spawn("/bin/sh", ["sh", "-c", line], dict(os.environ))
        os.waitpid(pid, 0)
    starts = [float((out / f"fs{i}").read_text()) for i in range(jobs)]
    ends = [float((out / f"fe{i}").read_text()) for i in range(jobs)]
    return [(starts[i + 1] - ends[i]) * 1000 for i in range(jobs - 1)]


def summary(gaps: list[float]) -> str:
    gaps = sorted(gaps)
    p99 = gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))]
    return (
        f"p50 {statistics.median(gaps):.2f} ms, p99 {p99:.2f} ms, max {gaps[-1]:.2f} ms "
        f"over {len(gaps)} gaps"
    )


def ls_time(env: dict[str, str], client: Client, queued: int, cwd: str) -> list[float]:
    client.post("/queue/pause")
    client.post("/jobs", {"jobs": [{"command": "true", "cwd": cwd} for _ in range(queued)]})
    times = []
    for args in (["ls"], ["ls"], ["ls"], ["ls", "--json"], ["ls", "--all", "--json"]):
        t = time.perf_counter()
        gherd(env, *args)
        times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--queued", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = {**os.environ, "GPUHERD_HOME": str(home)}
        env.pop("XDG_RUNTIME_DIR", None)
        gherd(env, "daemon", "start", "--fake-gpus", "1")
        client = Client(home)
        try:
            print(
                f"hand-off exit->next start, gpuherd daemon: "
                f"{summary(handoff(env, client, Path(tmp), args.jobs))}"
            )
            print(
                f"hand-off, bare spawn-and-wait loop (floor): "
                f"{summary(handoff_floor(Path(tmp), args.jobs))}"
            )
            t = time.perf_counter()
            ls = ls_time(env, client, args.queued, tmp)
            print(
                f"submit of {args.queued} jobs in one call + ls: "
                f"{(time.perf_counter() - t):.2f} s in all"
            )
            print(
                f"`gpuherd ls` with {args.queued} queued: {ls[0]:.0f} / {ls[1]:.0f} / "
                f"{ls[2]:.0f} ms; `ls --json`: {ls[3]:.0f} ms; `ls --all --json`: {ls[4]:.0f} ms"
            )
        finally:
            gherd(env, "daemon", "stop", "--kill")


if __name__ == "__main__":
    main()
