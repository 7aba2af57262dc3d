"""`gpuherd wait -q --timeout 1s` over N jobs queued behind one running job, and `gpuherd
sweep status --json` of a held sweep of P points, for each source tree given, the trees'
runs alternating (before and after a change, on a machine whose load comes and goes): each
tree runs its own daemon in a home of its own (a newer schema is no older daemon's) and its
own CLI.

Run: python benchmarks/wait_speed.py [--jobs 100000] [--points 10000] [--reps 5]
     [--tree DIR ...]   (a folder holding src/gpuherd, e.g. HEAD's:
                         mkdir /tmp/old && git archive HEAD src | tar -x -C /tmp/old;
                         default: this repository)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gpuherd.client import Client  # noqa: E402 (the path above first)
from harness.common import tree_daemon  # noqa: E402

BATCH = 10_000


def fill(env: dict[str, str], jobs: int, points: int) -> None:
    client = Client(env["GPUHERD_HOME"], timeout=600)
    client.post("/jobs", {"jobs": [{"command": "sleep 100000", "cwd": "/"}]})
    for start in range(0, jobs, BATCH):
        batch = [{"command": "true", "cwd": "/"}] * min(BATCH, jobs - start)
        client.post("/jobs", {"jobs": batch})
    sweep = ["sweep", "true {x}", "--name", "big", "--hold", "--yes", "-p", "x"]
    made = [sys.executable, "-m", "gpuherd", *sweep, *map(str, range(points))]
    # (Its results folder in the daemon's home, deleted with it: not in the folder it is run from.)
    home = env["GPUHERD_HOME"]
    subprocess.run(made, env=env, stdout=subprocess.DEVNULL, check=True, cwd=home)


def cli(env: dict[str, str], *words: str) -> float:
    """Wall seconds of `python -m gpuherd WORDS` (any exit status)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gpuherd", *words], env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tree", type=Path, action="append")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree or [REPO]]
    commands = {
        "gpuherd wait -q --timeout 1s": ["wait", "-q", "--timeout", "1s"],
        "gpuherd sweep status big --json": ["sweep", "status", "big", "--json"],
    }
    with ExitStack() as stack:
        envs = [stack.enter_context(tree_daemon(tree, 1, "wait-speed-")) for tree in trees]
        for env in envs:
            fill(env, args.jobs, args.points)
        for env in envs:
            cli(env, "sweep", "status", "big", "--json")  # warm: the daemon's caches
        walls: dict[tuple[str, int], list[float]] = {
            (label, t): [] for label in commands for t in range(len(trees))
        }
        for _ in range(args.reps):
            for label, words in commands.items():
                for t, env in enumerate(envs):
                    walls[label, t].append(cli(env, *words))
    print(f"{args.jobs:,} jobs queued behind 1 running; a held sweep of {args.points:,} points")
    for (label, t), runs in walls.items():
        shown = ", ".join(f"{w:.2f}" for w in runs)
        print(
            f"  {label} [{os.path.relpath(trees[t])}]: median {statistics.median(runs):.2f} s"
            f" (range {min(runs):.2f}-{max(runs):.2f}; runs {shown})"
        )


if __name__ == "__main__":
    main()
