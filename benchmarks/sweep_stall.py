"""What a big sweep's submission does to the daemon meanwhile: `gpuherd sweep 'true {x}' -p x
0 .. N-1 --hold --yes` (N new points: N folders and params.json written, N jobs stored)
through a daemon with 4 fake GPUs, while another client asks `GET /api/v1/daemon` every
10 ms (what `daemon status` and the Python API's `connect` wait 5 s for): the submission's
wall time (the CLI's, start-up included) and the longest that other client waited. For
each source tree given, the trees' runs alternating (before and after a change, on a
machine whose load comes and goes), each with its own daemon and home.

Run: python benchmarks/sweep_stall.py [--points 10000] [--reps 3]
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

from bulk_verbs import Pinger  # noqa: E402 (the path above first)
from harness.common import tree_daemon  # noqa: E402


def submit(env: dict[str, str], name: str, points: int) -> tuple[float, float]:
    """Wall seconds of the sweep's submission (N new points, held), and the longest another
    client waited for an answer meanwhile."""
    values = [str(v) for v in range(points)]
    words = ["sweep", "true {x}", "--name", name, "--hold", "--yes", "-p", "x", *values]
    pinger = Pinger(Path(env["GPUHERD_HOME"]))
    pinger.start()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpuherd", *words],
        env=env,
        cwd=env["GPUHERD_HOME"],  # its results folder: in the daemon's home, deleted with it
        stdout=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - start
    pinger.done.set()
    pinger.join()
    return wall, pinger.longest


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tree", type=Path, action="append")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree or [REPO]]
    runs: dict[int, list[tuple[float, float]]] = {t: [] for t in range(len(trees))}
    with ExitStack() as stack:
        envs = [stack.enter_context(tree_daemon(tree, 4, "sweep-stall-")) for tree in trees]
        for rep in range(args.reps):
            for t, env in enumerate(envs):
                runs[t].append(submit(env, f"stall{rep}", args.points))
    print(f"a sweep of {args.points:,} new points submitted (held), 4 fake GPUs:")
    for t, measured in runs.items():
        walls = [wall for wall, _ in measured]
        waits = [longest for _, longest in measured]
        shown = ", ".join(f"{w:.2f} s / {h * 1000:.0f} ms" for w, h in measured)
        print(
            f"  [{os.path.relpath(trees[t])}] submission: median {statistics.median(walls):.2f}"
            f" s; another client waited up to: median {statistics.median(waits) * 1000:.0f} ms"
            f" (runs: {shown})"
        )


if __name__ == "__main__":
    main()
