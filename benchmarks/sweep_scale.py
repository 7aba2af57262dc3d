"""What the everyday calls on one big sweep cost (issue 9: a sweep of thousands of points is
as easy to handle as one of ten): a sweep of N points (`true {i}`), all queued behind a
paused queue on 4 fake GPUs, then

- reads: `GET /api/v1/sweeps/NAME?limit=1` (the daemon's answer alone), `gpuherd sweep status
  NAME` and `--json`, `gpuherd ls -q --sweep NAME`, and in Python `herd.wait(sweep,
  timeout=0)` and `sweep.wait(timeout=0)` (both end in TimeoutError: nothing runs),
  `sweep.status(limit=1)` and `sweep.results()`;
- stops and removals, each on a sweep of its own: `sweep.kill()` then `herd.jobs(sweep=NAME,
  all=True).rm()` in Python; `gpuherd kill $(gpuherd ls -q --sweep NAME)` then `gpuherd sweep
  rm NAME`; `gpuherd rm $(gpuherd ls -q --all --sweep NAME)` of a killed sweep.

A Python call is timed inside its own process (`connect()` and `get_sweep()` done before the
clock starts, as a script that has its handle already); a CLI call from outside (start-up
included, as a user waits for it). Each call's CPU (user and system) is taken too, the
caller's (the Python call's process, or the CLI's processes) and the daemon's: on a machine
shared with others, the wall time moves with their load, the CPU much less. For each source
tree given, the trees' runs alternating (before and after a change, on a machine whose load
comes and goes), each with its own daemon and home.

Run: python benchmarks/sweep_scale.py [--points 40000] [--reps 1] [--only NAME,...]
     [--tree DIR ...]   (a folder holding src/gpuherd, e.g. HEAD's:
                         mkdir /tmp/old && git archive HEAD src | tar -x -C /tmp/old;
                         default: this repository)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gpuherd.client import Client  # noqa: E402 (the path above first; every tree speaks its HTTP)
from harness.common import tree_daemon  # noqa: E402

# What each Python call runs, `herd` and `sweep` at hand (a handle on the sweep NAME).
PYTHON_CALLS = {
    "herd.wait(sweep, timeout=0)": "herd.wait(sweep, timeout=0)",
    "sweep.wait(timeout=0)": "sweep.wait(timeout=0)",
    "sweep.status(limit=1)": "sweep.status(limit=1)",
    "sweep.results()": "sweep.results()",
    "sweep.kill()": "sweep.kill()",
    "herd.jobs(sweep=NAME, all=True).rm()": "herd.jobs(sweep=sweep.name, all=True).rm()",
}
_CHILD = """
import sys, time, gpuherd
herd = gpuherd.connect(home=sys.argv[1], start=False)
sweep = herd.get_sweep(sys.argv[2])
start, cpu = time.perf_counter(), time.process_time()
try:
    {call}
    said = "ok"
except Exception as exc:  # (a wait's TimeoutError is the expected end)
    said = type(exc).__name__
print(time.perf_counter() - start, time.process_time() - cpu, said, gpuherd.__file__)
"""


class Tree:
    """One source tree's daemon (4 fake GPUs, its queue paused) and how to call it."""

    def __init__(self, tree: Path, stack: ExitStack) -> None:
        self.tree = tree
        self.env = stack.enter_context(tree_daemon(tree, 4, "sweep-scale-"))
        self.home = self.env["GPUHERD_HOME"]
        self.cli("pause")  # nothing starts: every point stays queued
        self.made = 0
        self.daemon = psutil.Process(Client(self.home).get("/daemon")["pid"])

    def timed(self, call: Callable[[], Taken]) -> Figure:
        """`call`'s seconds and its caller's CPU (as it measures them), and the daemon's CPU
        (user and system) meanwhile."""
        before = self.daemon.cpu_times()
        seconds, caller = call()
        after = self.daemon.cpu_times()
        return seconds, caller, after.user + after.system - before.user - before.system

    def cli(self, *words: str, shell: str | None = None) -> Taken:
        """Wall seconds of `python -m gpuherd WORDS` (or of a shell line calling `gpuherd`),
        and the CPU of the processes it ran."""
        gpuherd = f"{sys.executable} -m gpuherd"
        command = ["sh", "-c", shell.replace("gpuherd", gpuherd)] if shell else None
        start, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run(
            command or [sys.executable, "-m", "gpuherd", *words],
            env=self.env,
            cwd=self.home,  # (the sweeps' results folders: in the daemon's home)
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
        if done.returncode not in (0, 1):  # (1: `sweep status` of points not all done)
            raise RuntimeError(f"gpuherd {shell or ' '.join(words)}: {done.stderr.decode()}")
        return seconds, cpu

    def python(self, label: str, name: str) -> Taken:
        """Seconds and CPU of one Python call (PYTHON_CALLS[label]) on the sweep `name`."""
        code = _CHILD.format(call=PYTHON_CALLS[label])
        done = subprocess.run(
            [sys.executable, "-c", code, self.home, name],
            env=self.env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{label}: {done.stderr}")
        seconds, cpu, said, module = done.stdout.split()
        if not module.startswith(str(self.tree)):  # (the tree asked for, not the installed one)
            raise RuntimeError(f"{label} ran {module}, not {self.tree}'s gpuherd")
        if said not in ("ok", "TimeoutError"):
            raise RuntimeError(f"{label}: {said}")
        return float(seconds), float(cpu)

    def get_limit_1(self, name: str) -> Taken:
        """Seconds (and this process's CPU) of the daemon's answer to GET
        /api/v1/sweeps/NAME?limit=1."""
        client = Client(self.home, timeout=600)
        start, cpu = time.perf_counter(), time.process_time()
        client.request("GET", f"/sweeps/{name}?limit=1", raw=True)
        return time.perf_counter() - start, time.process_time() - cpu

    def new_sweep(self, points: int) -> str:
        """A sweep of `points` new points, every one queued: its name."""
        self.made += 1
        name = f"s{self.made}"
        values = map(str, range(points))
        self.cli("sweep", "true {i}", "--name", name, "--hold", "--yes", "-p", "i", *values)
        self.cli(shell=f"gpuherd release $(gpuherd ls -q --sweep {name})")
        return name


Taken = tuple[float, float]
"""A call's seconds, and its caller's CPU seconds."""
Figure = tuple[float, float, float]
"""(seconds, the caller's CPU seconds, the daemon's CPU seconds)."""
Figures = dict[str, Figure]


def _children_cpu() -> float:
    """The CPU (user and system) of this process's children that ended and were waited for."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(tree: Tree, points: int, only: set[str]) -> Figures:
    """Each figure once on `tree`'s daemon (`only`: those labels alone, if any)."""
    out: Figures = {}

    def take(label: str, call: Callable[[], Taken]) -> None:
        if not only or label in only:
            out[label] = tree.timed(call)

    name = tree.new_sweep(points)
    take("GET /sweeps/NAME?limit=1", partial(tree.get_limit_1, name))
    take("gpuherd sweep status NAME", partial(tree.cli, "sweep", "status", name))
    take("gpuherd sweep status NAME --json", partial(tree.cli, "sweep", "status", name, "--json"))
    take("gpuherd ls -q --sweep NAME", partial(tree.cli, "ls", "-q", "--sweep", name))
    for label in list(PYTHON_CALLS)[:4]:
        take(label, partial(tree.python, label, name))
    # Stops and removals: each on a sweep of its own (the first one's, then new ones).
    take("sweep.kill()", partial(tree.python, "sweep.kill()", name))
    rm = "herd.jobs(sweep=NAME, all=True).rm()"
    take(rm, partial(tree.python, rm, name))
    tree.cli("sweep", "rm", name)
    kill = "gpuherd kill $(gpuherd ls -q --sweep NAME)"
    if not only or {kill, "gpuherd sweep rm NAME"} & only:
        name = tree.new_sweep(points)
        take(kill, partial(tree.cli, shell=kill.replace("NAME", name)))
        take("gpuherd sweep rm NAME", partial(tree.cli, "sweep", "rm", name))
    rm = "gpuherd rm $(gpuherd ls -q --all --sweep NAME)"
    if not only or rm in only:
        name = tree.new_sweep(points)
        tree.cli(shell=kill.replace("NAME", name))
        take(rm, partial(tree.cli, shell=rm.replace("NAME", name)))
        tree.cli("sweep", "rm", name)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=40_000)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--only", default="", help="figures to take, by label, comma-separated")
    parser.add_argument("--tree", type=Path, action="append")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree or [REPO]]
    only = {label.strip() for label in args.only.split(",") if label.strip()}
    runs: dict[str, dict[int, list[Figure]]] = {}
    with ExitStack() as stack:
        daemons = [Tree(tree, stack) for tree in trees]
        for _ in range(args.reps):
            for t, daemon in enumerate(daemons):
                for label, figure in measure(daemon, args.points, only).items():
                    runs.setdefault(label, {}).setdefault(t, []).append(figure)
                    wall, caller, cpu = figure
                    print(
                        f"  [{os.path.relpath(trees[t])}] {label}: {wall:.2f} s, its CPU"
                        f" {caller:.2f} s, daemon CPU {cpu:.2f} s",
                        flush=True,
                    )
    print(f"a sweep of {args.points:,} points, all queued (the queue paused), 4 fake GPUs:")
    for label, by_tree in runs.items():
        for t, figures in by_tree.items():
            walls, callers, cpus = ([f[i] for f in figures] for i in range(3))
            print(
                f"  {label} [{os.path.relpath(trees[t])}]: median {statistics.median(walls):.2f} s"
                f" (runs {', '.join(f'{w:.2f}' for w in walls)}), its CPU"
                f" {statistics.median(callers):.2f} s, the daemon's {statistics.median(cpus):.2f} s"
            )
    if args.json:
        named = {label: {str(trees[t]): f for t, f in by.items()} for label, by in runs.items()}
        args.json.write_text(json.dumps({"points": args.points, "seconds": named}, indent=1))


if __name__ == "__main__":
    main()
