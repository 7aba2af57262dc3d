"""What listing a big queue costs: `gpuherd ls --json`, `ls --csv`, `ls` (the table), `ls -q`
and `wait --timeout 1s` with N jobs queued behind one running job (one fake GPU, so each
waits for a free GPU and says so), with the daemon's share (the answer's bytes through
`Client`) and the longest time another client waited meanwhile (the daemon's event loop,
the engine's too, builds the answer); then `sweep status --json` of a sweep of P points.

Run: python benchmarks/list_speed.py [--jobs 100000] [--points 10000] [--reps 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from bulk_verbs import Pinger
from gpuherd.client import Client
from harness.common import gpuherd_cmd, scratch_daemon

BATCH = 10_000


def timed(what: Callable[[], object], home: Path, reps: int) -> tuple[list[float], list[float]]:
    """Wall seconds of `what`, and the longest wait of another client meanwhile, per run."""
    walls, holds = [], []
    for _ in range(reps):
        pinger = Pinger(home)
        pinger.start()
        start = time.perf_counter()
        what()
        walls.append(time.perf_counter() - start)
        pinger.done.set()
        pinger.join()
        holds.append(pinger.longest)
    return walls, holds


def report(label: str, walls: list[float], holds: list[float]) -> None:
    runs = ", ".join(f"{w:.3f}" for w in walls)
    print(
        f"{label}: median {statistics.median(walls):.3f} s (runs {runs});"
        f" another client waited up to {max(holds) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    gpuherd = gpuherd_cmd()
    with scratch_daemon("list-speed-") as (home, env):
        client = Client(home, timeout=600)
        client.post("/jobs", {"jobs": [{"command": "sleep 100000", "cwd": "/"}]})
        for start in range(0, args.jobs, BATCH):
            batch = [{"command": "true", "cwd": "/"}] * min(BATCH, args.jobs - start)
            client.post("/jobs", {"jobs": batch})

        def cli(*words: str) -> Callable[[], object]:
            command = [*gpuherd, *words]
            return lambda: subprocess.run(command, env=env, stdout=subprocess.DEVNULL)

        print(f"{args.jobs:,} jobs queued behind 1 running:")
        daemon = lambda: client.request("GET", "/jobs", raw=True)  # noqa: E731
        report("  the daemon's answer to ls --json", *timed(daemon, home, args.reps))
        for words in (["ls", "--json"], ["ls", "--csv"], ["ls"], ["ls", "-q"]):
            report(f"  gpuherd {' '.join(words)}", *timed(cli(*words), home, args.reps))
        report("  gpuherd wait --timeout 1s", *timed(cli("wait", "-q", "--timeout", "1s"), home, 1))
        values = [str(v) for v in range(args.points)]
        sweep = [*gpuherd, "sweep", "true {x}", "--name", "big", "--hold", "--yes", "-p", "x"]
        subprocess.run([*sweep, *values], env=env, stdout=subprocess.DEVNULL, check=True)
        print(f"a sweep of {args.points:,} points, held:")
        status = cli("sweep", "status", "big", "--json")
        report("  gpuherd sweep status big --json", *timed(status, home, args.reps))


if __name__ == "__main__":
    main()
