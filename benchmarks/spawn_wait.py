"""How long W1's engine sits inside `posix_spawn`: N trivial jobs through `gpuherd run` on 4
fake GPUs, with the engine's `os.posix_spawn` timed (a wrapper put in place before gpuherd is
imported; nothing in the package changes). glibc's posix_spawn is a vfork: the caller is
suspended until its child has exec'd, and the child needs a core for that. With a core free
it is ~60 us; on a machine whose cores run the other jobs' shells the child waits its turn,
and the engine with it: the part of W1's wall time that moving spawns off the engine's thread
(an async launch, a spawner process, slot shells: benchmarks/README.md) could win back.

Per run: jobs/s, the waits' sum and its share of the wall time, their median and p90, and the
engine process's CPU time (user + system, all its threads); medians over runs. Trees are
compared as in w1_trees.py (runs alternated).

Run: python benchmarks/spawn_wait.py [--reps 3] [--jobs 2000] [--tree DIR ...]
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.common import compared_trees, herd_env

TIMEOUT = 600.0

# Run in the measured process: times every posix_spawn, and at exit writes the waits and the
# process's CPU time to the file named by the first argument, then runs the CLI with the rest.
BOOT = r"""
import atexit, json, os, runpy, sys, time
out, waits, spawn = sys.argv[1], [], os.posix_spawn
def timed(*args, **kwargs):
    began = time.perf_counter()
    try:
        return spawn(*args, **kwargs)
    finally:
        waits.append(time.perf_counter() - began)
def dump():
    t = os.times()
    with open(out, "w") as f:
        json.dump({"waits": waits, "cpu": t.user + t.system}, f)
os.posix_spawn = timed
atexit.register(dump)
sys.argv = ["gpuherd", *sys.argv[2:]]
runpy.run_module("gpuherd", run_name="__main__")
"""


def run_once(python: str, tree: Path, work: Path, jobs: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(dir=work, prefix="run-"))
    (folder / "jobs.txt").write_text("true\n" * jobs)
    record = folder / "waits.json"
    words = ["run", "--fake-gpus", "4", "--output-dir", str(folder / "out"), "jobs.txt"]
    env = {**herd_env(folder / "home"), "PYTHONPATH": str(tree / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    began = time.perf_counter()
    subprocess.run(
        [python, "-c", BOOT, str(record), *words],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        check=True,
        timeout=TIMEOUT,
    )
    wall = time.perf_counter() - began
    found = json.loads(record.read_text())
    waits = sorted(found["waits"])
    if len(waits) != jobs:
        sys.exit(f"{len(waits)} spawns for {jobs} jobs: not W1's one spawn a job")
    return {
        "jobs/s": jobs / wall,
        "wait s": sum(waits),
        "wait share": sum(waits) / wall,
        "median us": statistics.median(waits) * 1e6,
        "p90 us": waits[int(len(waits) * 0.9)] * 1e6,
        "CPU s": found["cpu"],
    }


def main() -> None:
    jobs = 2000
    if "--jobs" in sys.argv:
        at = sys.argv.index("--jobs")
        jobs = int(sys.argv[at + 1])
        del sys.argv[at : at + 2]
    args, trees = compared_trees(3)
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    work = Path(tempfile.mkdtemp(prefix="spawn-wait-"))
    try:
        for rep in range(args.reps):
            for tree in trees if rep % 2 == 0 else trees[::-1]:
                figures = run_once(args.python, tree, work, jobs)
                runs[tree].append(figures)
                shown = ", ".join(f"{k} {v:.2f}" for k, v in figures.items())
                print(f"  rep {rep + 1} [{tree}] {shown}", flush=True)
    finally:  # (at the end: deleting job folders slows the next run's file creation)
        shutil.rmtree(work, ignore_errors=True)
    print(f"W1 through gpuherd run, {jobs} jobs, {args.reps} runs each: medians")
    for tree, found in runs.items():
        medians = {k: statistics.median(r[k] for r in found) for k in found[0]}
        print(f"  [{tree}] " + ", ".join(f"{k} {v:.2f}" for k, v in medians.items()))


if __name__ == "__main__":
    main()
