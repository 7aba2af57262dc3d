"""Where the whole test suite's CPU goes, by kind of process: daemons, each CLI command,
pytest itself, the jobs, browsers, Ray. The suite runs as CI runs it (xdist and all), under
the kernel's process accounting (acct(2), through `accton` of Debian's `acct` package, as
root): one record per process that ends, with its CPU (user + system), pid, parent and start
time. Python processes are told apart by their command line, which a `sitecustomize` put on
the suite's PYTHONPATH logs as each starts (with its pid and the time); a process that is
no Python (a job's `sh`, chromium, Ray's raylet) counts for the kind of its nearest Python
ancestor. The tests' CLI calls and daemons are forks of a fork server (tests/forks.py) that
start no interpreter: each logs its start through the same `sitecustomize` as it takes on
its command line (forks_child.be_started_as). suite_cpu.py splits the suite by file
instead; this splits it by kind in one run.

The accounting is the machine's: other work on it is recorded too, and left out (it has no
logged ancestor). Pids are matched with start times, as they are reused within a run. Each
record's CPU is in 10 ms ticks: a process that used less shows 0 (a job's `sh`).

Run (root): python benchmarks/suite_kinds.py [--tree DIR] [-- extra pytest options]
     (DIR: a folder holding src/ and tests/, e.g. a `git archive` of a commit; default:
      this repository)
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SLACK = 1.5
"""Seconds between a record's start (whole seconds) and its logged start that still match."""

LOGGER = """import os, sys, time
def log_start():
    # (also called by the tests' fork server's children, tests/forks_child.py: a CLI call or
    # a daemon forked from it starts no interpreter, and would count for the server)
    try:
        line = "%.3f %d %s\\n" % (time.time(), os.getpid(), " ".join(
            a.replace("\\n", " ")[:80] for a in sys.orig_argv[:6]))
        fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, line.encode())
        os.close(fd)
    except Exception:
        pass
log_start()
"""


@dataclass
class Record:
    command: str
    cpu: float
    pid: int
    ppid: int
    start: float
    end: float
    kind: str | None = None


def kind_of(argv: list[str]) -> str:
    """A Python process's kind, from its command line."""
    if "gpuherd.daemon" in argv:
        return "daemon"
    for i, word in enumerate(argv):
        if (word == "gpuherd" and argv[i - 1 : i] == ["-m"]) or word.endswith("bin/gpuherd"):
            return "cli " + (argv[i + 1] if i + 1 < len(argv) else "")
    if any(w.endswith("forks_server.py") for w in argv):
        return "fork servers (tests/forks.py)"
    if any("xdist" in w or w.endswith("pytest") for w in argv) or "exec(eval" in " ".join(argv):
        return "pytest"
    if any("ray" in w for w in argv):
        return "ray (Python)"
    return "other Python (jobs, tools)"


def read_starts(path: Path) -> dict[int, list[tuple[float, str]]]:
    starts: dict[int, list[tuple[float, str]]] = collections.defaultdict(list)
    for line in path.read_text(errors="replace").splitlines():
        when, pid, *argv = line.split()
        starts[int(pid)].append((float(when), kind_of(argv)))
    return starts


def read_records(acct_file: Path) -> list[Record]:
    """dump-acct's lines: command|version|utime|stime|elapsed|uid|gid|mem|io|pid|ppid|...|start."""
    out = subprocess.run(["dump-acct", str(acct_file)], capture_output=True, text=True, check=True)
    records = []
    for line in out.stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        start = datetime.strptime(f[-1], "%a %b %d %H:%M:%S %Y").timestamp()
        cpu = (float(f[2]) + float(f[3])) / 100
        records.append(Record(f[0], cpu, int(f[9]), int(f[10]), start, start + float(f[4]) / 100))
    return records


def attribute(records: list[Record], starts: dict[int, list[tuple[float, str]]]) -> None:
    """Each record's kind: its own logged start's, else its nearest logged ancestor's."""
    by_pid: dict[int, list[Record]] = collections.defaultdict(list)
    for r in records:
        by_pid[r.pid].append(r)
        r.kind = next(
            (k for t, k in starts.get(r.pid, ()) if r.start - SLACK <= t <= r.end + SLACK), None
        )
    for r in records:
        if r.kind is not None:
            continue
        seen, parent = [r], r
        while parent.kind is None and len(seen) < 50:
            found = next(
                (
                    q
                    for q in by_pid.get(parent.ppid, ())
                    if q.start - SLACK <= parent.start <= q.end + SLACK
                ),
                None,
            )
            if found is None:
                break
            parent = found
            seen.append(parent)
        if parent.kind is not None:
            below = parent.kind.split()[0] if parent.kind.startswith("cli") else parent.kind
            r.kind = f"{r.command} under {below}"


def largest(seconds: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(seconds.items(), key=lambda item: -item[1])


def report(records: list[Record], wall: float) -> None:
    cpu: dict[str, float] = collections.defaultdict(float)
    count: collections.Counter[str] = collections.Counter()
    for r in records:
        if r.kind is None:
            continue
        group = "cli (all commands)" if r.kind.startswith("cli ") else r.kind
        for key in {group, r.kind}:
            cpu[key] += r.cpu
            count[key] += 1
    total = sum(v for k, v in cpu.items() if not k.startswith("cli ") or k == "cli (all commands)")
    print(f"suite: {wall:.0f} s of wall, {total:.0f} CPU-s of its processes\n")
    print("| kind | CPU-s | share | processes | CPU-s each |\n|---|---|---|---|---|")
    for key, seconds in largest(cpu):
        if seconds < 0.5:
            continue
        share = seconds / total if total else 0.0
        each = seconds / count[key]
        print(f"| {key} | {seconds:.1f} | {share:.1%} | {count[key]} | {each:.3f} |")
    # What no logged ancestor claims: the machine's other work, and the processes that left
    # their parent (Ray's gcs_server and raylets are children of init by the time they end).
    unclaimed: dict[str, float] = collections.defaultdict(float)
    for r in records:
        if r.kind is None:
            unclaimed[r.command] += r.cpu
    biggest = ", ".join(f"{c} {s:.1f}" for c, s in largest(unclaimed)[:8])
    print(f"\nunclaimed: {sum(unclaimed.values()):.0f} CPU-s; the biggest: {biggest}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    if os.geteuid() != 0 or shutil.which("accton") is None or shutil.which("dump-acct") is None:
        sys.exit("suite_kinds: needs root and the acct package (accton, dump-acct)")
    tree = args.tree.resolve()
    with tempfile.TemporaryDirectory(prefix="suite-kinds-") as scratch:
        work = Path(scratch)
        starts_log, acct_file = work / "starts.log", work / "pacct"
        (work / "sitecustomize.py").write_text(f"LOG = {str(starts_log)!r}\n" + LOGGER)
        acct_file.touch()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(tree / "src"), scratch, env.get("PYTHONPATH", "")) if p
        )
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
        subprocess.run(["accton", str(acct_file)], check=True, capture_output=True)
        began = time.monotonic()
        try:
            run = subprocess.run([*command, *args.pytest_args], cwd=tree, env=env)
        finally:
            subprocess.run(["accton", "off"], check=True, capture_output=True)
        wall = time.monotonic() - began
        records = read_records(acct_file)
        attribute(records, read_starts(starts_log))
    print(f"\npytest exited {run.returncode}")
    report(records, wall)


if __name__ == "__main__":
    main()
