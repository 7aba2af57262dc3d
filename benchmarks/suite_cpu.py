"""Where the test suite's CPU goes: each test file given is run alone (`pytest -n 0`) in a
cgroup v2 of its own, and the CPU of everything it started is read from the cgroup's
`cpu.stat` (user + system): the pytest process, every CLI call, every daemon (a daemon that
detaches stays in the cgroup), every job, browser and Ray process. CPU rather than wall time:
the machine is shared, and the suite is CPU-bound on 2 cores.

The daemons a file started are counted by looking at the cgroup's processes every 0.1 s (a
daemon lives long enough to be seen; a restart is a new pid, counted again).

Needs a writable cgroup v2 hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
host; root in most containers). Processes a file leaves behind are counted and killed by pid.

Run: python benchmarks/suite_cpu.py tests/integration/test_x.py [more files...]
     [--reps 2] [--json out.json] [-- extra pytest options]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def cgroup_root() -> Path:
    """The cgroup v2 hierarchy's mount point, if this process may make groups in it."""
    for root in ROOTS:
        if (root / "cpu.stat").exists() and os.access(root / "cgroup.procs", os.W_OK):
            return root
    sys.exit("suite_cpu: no writable cgroup v2 hierarchy (/sys/fs/cgroup/unified, /sys/fs/cgroup)")


def usage_seconds(group: Path) -> float:
    stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
    return int(stat["usage_usec"]) / 1e6


def members(group: Path) -> list[int]:
    return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]


def is_daemon(pid: int) -> bool:
    """A `python -m gpuherd.daemon`, not a process it forked (which has its command line
    until it execs: a job, or a helper)."""
    try:
        if b"gpuherd.daemon" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return False
        parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
        return b"gpuherd.daemon" not in Path(f"/proc/{parent}/cmdline").read_bytes()
    except OSError:
        return False


def end_leftovers(group: Path) -> int:
    """Kill (by pid) what the file left running in its group; how many there were."""
    left = members(group)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while members(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(left)


@dataclass
class Run:
    file: str
    cpu: float
    """Seconds of CPU (user + system) of everything the run started."""
    wall: float
    daemons: int
    leftovers: int
    """Processes still in the cgroup when pytest had exited (killed)."""
    summary: str
    """pytest's last line."""


def run_file(root: Path, test_file: str, extra: list[str]) -> Run:
    """One pytest run of `test_file` in a new cgroup: CPU, wall, daemons seen, its last line."""
    group = root / f"suite_cpu_{os.getpid()}_{time.monotonic_ns()}"
    group.mkdir()
    try:
        procs_file = str(group / "cgroup.procs")

        def join_group() -> None:  # in the child, before exec: it and all it starts
            with open(procs_file, "w") as procs:
                procs.write("0")

        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "0"]
        began = time.monotonic()
        with tempfile.TemporaryFile() as out:  # (a pipe read at the end could fill and block)
            child = subprocess.Popen(
                [*argv, *extra, test_file],
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=join_group,
            )
            daemons: set[int] = set()
            while child.poll() is None:
                seen = members(group)
                daemons.update(pid for pid in seen if pid not in daemons and is_daemon(pid))
                time.sleep(0.1)
            wall = time.monotonic() - began
            out.seek(0)
            output = out.read().decode(errors="replace")
        leftovers = end_leftovers(group)
        summary = output.strip().splitlines()[-1] if output.strip() else ""
        return Run(test_file, usage_seconds(group), wall, len(daemons), leftovers, summary)
    finally:
        end_leftovers(group)  # (what an interrupted run left)
        group.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="test files (extra pytest options after --)")
    parser.add_argument("--reps", type=int, default=1, help="runs of each file (alternated)")
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    args, extra = parser.parse_known_args()
    extra = [word for word in extra if word != "--"]
    root = cgroup_root()
    start_up = run_file(root, args.files[0], ["--collect-only"])
    print(f"{start_up.cpu:7.1f} CPU-s  pytest's own start-up and collection (in every row)")
    runs: list[Run] = []
    for _ in range(args.reps):
        for test_file in args.files:
            run = run_file(root, test_file, extra)
            runs.append(run)
            print(
                f"{run.cpu:7.1f} CPU-s {run.wall:6.1f} s wall {run.daemons:4} daemons"
                f"  {test_file}  ({run.summary})"
                + (f"  [{run.leftovers} left running, killed]" if run.leftovers else ""),
                flush=True,
            )
    if args.reps > 1:
        print("\nmedians:")
        for test_file in args.files:
            cpu = [run.cpu for run in runs if run.file == test_file]
            low, high = min(cpu), max(cpu)
            print(f"{statistics.median(cpu):7.1f} CPU-s ({low:.1f}-{high:.1f})  {test_file}")
    if args.json:
        args.json.write_text(json.dumps([asdict(run) for run in runs], indent=1))


if __name__ == "__main__":
    main()
