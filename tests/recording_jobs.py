"""Jobs that record what they saw (their GPUs, times, pids), for claims checked from the jobs'
side: the daemon's (Recorder) and `gpuherd run`'s (Probe); conftest.py re-exports them."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

RECORDER_SCRIPT = r'''
"""A job that records what it saw: python3 record.py OUT [wait FILE] [sleep S] [exit N]."""
import json, os, sys, time

start = time.time()
out, rest = sys.argv[1], sys.argv[2:]
opts = dict(zip(rest[::2], rest[1::2]))
if "wait" in opts:
    with open(out + ".waiting", "a") as f:  # Recorder.waiting: this job has begun, and waits
        f.write(os.environ["GPUHERD_JOB_ID"] + "\n")
    while not os.path.exists(opts["wait"]):
        time.sleep(0.01)
if "sleep" in opts:
    time.sleep(float(opts["sleep"]))
record = {
    "id": int(os.environ["GPUHERD_JOB_ID"]),
    "attempt": int(os.environ["GPUHERD_ATTEMPT"]),
    "gpus": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "start": start,
    "end": time.time(),
    "pid": os.getpid(),
    "pgid": os.getpgid(0),
}
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(fd, (json.dumps(record) + "\n").encode())  # one write: lines never interleave
os.close(fd)
sys.exit(int(opts.get("exit", 0)))
'''


class Recorder:
    """Builds job commands that append what they saw (id, GPUs, times) to files in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.script = folder / "record.py"
        self.script.write_text(RECORDER_SCRIPT)

    def path(self, name: str) -> Path:
        return self.folder / name

    def cmd(
        self,
        out: str,
        *,
        wait: str | None = None,
        sleep: float | None = None,
        exit: int | None = None,
    ) -> str:
        """A shell command line for a job that records into `out` (a file name in folder)."""
        args = [sys.executable, str(self.script), str(self.path(out))]
        for key, value in (
            ("wait", wait and str(self.path(wait))),
            ("sleep", sleep),
            ("exit", exit),
        ):
            if value is not None:
                args += [key, str(value)]
        return shlex.join(args)

    def lines(self, out: str) -> list[dict[str, Any]]:
        try:
            text = self.path(out).read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines()]

    def waiting(self, out: str) -> int:
        """How many jobs recording into `out` have started and wait for their file (a job
        can be running for the daemon some milliseconds before its own start stamp)."""
        try:
            return len(self.path(out + ".waiting").read_text().splitlines())
        except FileNotFoundError:
            return 0

    def go(self, name: str = "go") -> None:
        self.path(name).touch()


GPUHERD_BIN = str(Path(sys.executable).parent / "gpuherd")


MTIME_TICK = 0.01
"""How far a file's mtime (the kernel's coarse clock) may lag a time.time() stamp: an
attempt's `ended_at` is its `process` file's mtime, up to a scheduler tick (1-10 ms) before
the moment its shell wrote it, which may be before a stop's stamp."""


PROBE_SCRIPT = r'''
"""A `gpuherd run` job: python3 probe.py RECDIR NAME [barrier N] [wait FILE] [sleep S]
[exit N] [fail-attempts K]. Writes RECDIR/NAME.started at start (its pid), appends one JSON
line to RECDIR/records.jsonl at the end. Every wait gives up after 30 s (exit 3)."""
import json, os, sys, time

start = time.time()
rec, name, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
opts = dict(zip(rest[::2], rest[1::2]))
with open(os.path.join(rec, name + ".started.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.replace(os.path.join(rec, name + ".started.tmp"), os.path.join(rec, name + ".started"))


def wait(what, ready):
    deadline = time.monotonic() + 30
    while not ready():
        if time.monotonic() > deadline:
            print(f"probe {name}: gave up waiting for {what}", file=sys.stderr)
            sys.exit(3)
        time.sleep(0.01)


if "barrier" in opts:
    folder = os.path.join(rec, "barrier")
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, name), "w").close()
    wait("the barrier", lambda: len(os.listdir(folder)) >= int(opts["barrier"]))
if "wait" in opts:
    wait(opts["wait"], lambda: os.path.exists(opts["wait"]))
if "sleep" in opts:
    time.sleep(float(opts["sleep"]))
attempt = int(os.environ.get("GPUHERD_ATTEMPT", "0"))
code = int(opts.get("exit", 0))
if attempt <= int(opts.get("fail-attempts", -1)):
    code = 1
record = {
    "name": name,
    "argv": sys.argv[1:],
    "gpus": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "job_dir": os.environ.get("GPUHERD_JOB_DIR"),
    "attempt": attempt,
    "probe_env": {k: v for k, v in os.environ.items() if k.startswith("PROBE_")},
    "start": start,
    "end": time.time(),
    "pid": os.getpid(),
    "pgid": os.getpgid(0),
    "exit": code,
}
fd = os.open(os.path.join(rec, "records.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(fd, (json.dumps(record) + "\n").encode())  # one write: lines never interleave
os.close(fd)
sys.exit(code)
'''


class Probe:
    """Builds `gpuherd run` job lines that record what they saw into `folder`."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.script = folder / "probe.py"
        self.script.write_text(PROBE_SCRIPT)

    def cmd(self, name: str, **opts: object) -> str:
        """A job line; options: barrier=N, wait=FILE-NAME (in folder), sleep=S, exit=N,
        fail_attempts=K."""
        args = [sys.executable, str(self.script), str(self.folder), name]
        for key, value in opts.items():
            if key == "wait":
                value = self.folder / str(value)
            args += [key.replace("_", "-"), str(value)]
        return shlex.join(args)

    def records(self) -> list[dict[str, Any]]:
        try:
            text = (self.folder / "records.jsonl").read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines()]

    def by_name(self) -> dict[str, dict[str, Any]]:
        """The one record of each job name (fails if a job ran more than once)."""
        found: dict[str, dict[str, Any]] = {}
        for record in self.records():
            assert record["name"] not in found, f"job {record['name']} ran twice"
            found[record["name"]] = record
        return found

    def started(self, name: str) -> bool:
        return (self.folder / f"{name}.started").exists()

    def touch(self, name: str) -> None:
        (self.folder / name).touch()


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most intervals that were open at one instant (an end before a start at a tie)."""
    points = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    most = now = 0
    for _, step in points:
        now += step
        most = max(most, now)
    return most
