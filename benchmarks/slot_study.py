"""W1's ceiling if a job's shell were forked from a running one, not started anew.

Each gpuherd job runs in a shell of its own (executors/local_shell.py: it opens the job's
logs, records its pid and exit status in the attempt folder's `process` file, enters its
folder and runs the command by `eval`), started by `posix_spawn`: an exec of `sh` and its
start-up for every job, ~0.5 ms of CPU of the ~1.1 ms a trivial job costs in all. A "slot
shell" is one long-lived bash per slot that forks a subshell for each job it is sent, in a
process group of its own (`set -m`: bash keeps job control without a terminal, dash does
not), doing the same steps, and reports the job's pid and exit status on a pipe. A fork of
a running shell costs far less than an exec and start-up of a new one.

Both variants here are a stand-in engine (asyncio; 4 slots; one tick per batch of ends, as
gpuherd's; `--work` seconds of CPU per job for the engine's own bookkeeping; a folder made
per job): `spawn` starts gpuherd's own JOB_SHELL per job with `posix_spawn` (setsid) and
watches it by pidfd; `slots` sends each job to a free slot's bash. Every job's `process`
file is checked for `exit 0` after each run. Runs alternate spawn, slots, slots, spawn.

`--slot-shell sh` runs the slots in dash instead: no job control there, so its jobs share the
slot's process group (a job could not be stopped as a whole by its group), and `$$` stands
in for the subshell's pid: what the shell's size costs, not a design that would do.

Run: python benchmarks/slot_study.py [--jobs 2000] [--work 0.0004] [--reps 3] [--slot-shell sh]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpuherd.executors.local_shell import JOB_SHELL

SLOTS = 4
COMMAND = "true"

# The slot's loop: three lines per job (attempt folder, working directory, command); the
# subshell does what JOB_SHELL does ($BASHPID: the subshell's own pid), the slot reports
# `p PID` once it forked and `e STATUS` once the job ended.
SLOT_SHELL = r"""
set -m
while IFS= read -r d && IFS= read -r w && IFS= read -r c; do
    (
        exec </dev/null >>"$d/stdout.log" 2>>"$d/stderr.log"
        trap 'printf "exit %s\n" "$?" >>"$d/process"' EXIT
        trap 'exit 129' HUP
        trap 'exit 130' INT
        trap 'exit 143' TERM
        printf 'pid %s\n' "$BASHPID" >"$d/process"
        cd -- "$w" || exit 127
        eval "$c"
    ) &
    echo "p $!"
    wait "$!"
    echo "e $?"
done
"""


def busy(seconds: float) -> None:
    """Stand-in for the engine's own work on a job (Python, SQL, files)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class Engine:
    """The stand-in: starts `jobs` jobs on SLOTS slots, each in a folder of its own."""

    def __init__(self, jobs: int, work: float, root: Path, slots: str) -> None:
        self.left, self.ended, self.jobs, self.work = jobs, 0, jobs, work
        self.root, self.made, self.tick_due = root, 0, False
        self.free = list(range(SLOTS))
        self.done = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.shells = [self._slot_shell(n, slots) for n in range(SLOTS)] if slots else []
        self.pending = [b""] * SLOTS

    def _slot_shell(self, slot: int, program: str) -> subprocess.Popen[bytes]:
        script = SLOT_SHELL
        if program != "bash":  # (dash: no job control, no $BASHPID)
            script = script.replace("set -m", "").replace("$BASHPID", "$$")
        shell = subprocess.Popen(
            [program, "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # (bash's job notices: `[1]+ Done`)
        )
        assert shell.stdout is not None
        self.loop.add_reader(shell.stdout.fileno(), self._reported, slot)
        return shell

    def _folder(self) -> str:
        folder = self.root / str(self.made)
        self.made += 1
        folder.mkdir()
        return str(folder)

    def _ended(self, slot: int) -> None:
        self.ended += 1
        self.free.append(slot)
        if self.ended == self.jobs:
            self.done.set()
        elif not self.tick_due:
            self.tick_due = True
            self.loop.call_soon(self.tick)

    def _reported(self, slot: int) -> None:
        out = self.shells[slot].stdout
        assert out is not None
        *lines, self.pending[slot] = (self.pending[slot] + os.read(out.fileno(), 4096)).split(b"\n")
        for line in lines:
            if line.startswith(b"e "):
                self._ended(slot)

    def _exited(self, pid: int, watch: int, slot: int) -> None:
        self.loop.remove_reader(watch)
        os.close(watch)
        os.waitpid(pid, 0)
        self._ended(slot)

    def tick(self) -> None:
        self.tick_due = False
        starting = min(len(self.free), self.left)
        self.left -= starting
        busy(self.work * starting)
        for _ in range(starting):
            slot, folder = self.free.pop(), self._folder()
            if self.shells:
                shell = self.shells[slot].stdin
                assert shell is not None
                os.write(shell.fileno(), f"{folder}\n{self.root}\n{COMMAND}\n".encode())
                continue
            argv = ["/bin/sh", "-c", JOB_SHELL, "sh", COMMAND, str(self.root), folder]
            pid = os.posix_spawn("/bin/sh", argv, os.environ, setsid=True)
            watch = os.pidfd_open(pid)
            self.loop.add_reader(watch, self._exited, pid, watch, slot)

    def close(self) -> None:
        for shell in self.shells:
            assert shell.stdout is not None and shell.stdin is not None
            self.loop.remove_reader(shell.stdout.fileno())
            shell.stdin.close()
            shell.wait()
            shell.stdout.close()


async def one_run(jobs: int, work: float, root: Path, slots: str) -> None:
    engine = Engine(jobs, work, root, slots)
    try:
        engine.tick()
        await engine.done.wait()
    finally:
        engine.close()


def measure(jobs: int, work: float, slots: str, work_dir: Path) -> tuple[float, float]:
    """(jobs/s, CPU ms a job of the engine and its children together), checked. `slots`:
    the slot shell's program, "" to spawn a shell per job. The job folders are left in
    `work_dir` until the end: ext4 allocates inodes slowly right after many were freed, so
    deleting a run's folders would slow the next one (the "Recreating an output folder" note
    in benchmarks/README.md)."""
    root = Path(tempfile.mkdtemp(prefix="run-", dir=work_dir))
    before, t = os.times(), time.perf_counter()
    asyncio.run(one_run(jobs, work, root, slots))
    wall, after = time.perf_counter() - t, os.times()
    ok = sum("exit 0" in (folder / "process").read_text() for folder in root.iterdir())
    assert ok == jobs, f"{ok} of {jobs} jobs recorded exit 0"
    cpu = sum(after[:4]) - sum(before[:4])  # user, system, children's user and system
    return jobs / wall, cpu / jobs * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--work", type=float, default=0.0004, help="engine CPU s a job")
    parser.add_argument("--reps", type=int, default=3, help="rounds of spawn/slots/slots/spawn")
    parser.add_argument("--slot-shell", default="bash", choices=("bash", "sh"))
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {"spawn": [], "slots": []}
    work_dir = Path(tempfile.mkdtemp(prefix="slot_study-"))
    try:
        for _ in range(args.reps):
            for name in ("spawn", "slots", "slots", "spawn"):
                shell = args.slot_shell if name == "slots" else ""
                results[name].append(measure(args.jobs, args.work, shell, work_dir))
    finally:
        shutil.rmtree(work_dir)
    for name, runs in results.items():
        rates, cpus = [r for r, _ in runs], [c for _, c in runs]
        print(
            f"{name}: {statistics.median(rates):,.0f} jobs/s (min {min(rates):,.0f}, max "
            f"{max(rates):,.0f}), CPU {statistics.median(cpus):.2f} ms a job "
            f"(engine and jobs; {args.work * 1e6:.0f} us of engine work a job)"
        )


if __name__ == "__main__":
    main()
