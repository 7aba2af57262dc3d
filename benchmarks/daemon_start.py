"""A daemon's start-up cost: the CPU a `python -m gpuherd.daemon --fake-gpus 2` in a new home
has used by the time it answers its first request (`GET /api/v1/daemon`, what `daemon start`
waits for), and by the time it has answered its first dashboard page (`GET /`) after that,
for each source tree given, the trees' runs interleaved (before and after a change, on a
machine whose load comes and goes).

CPU time (user + system, from /proc/PID/stat, in 10 ms ticks) rather than wall time: on a
busy machine the wall time is mostly waiting for a core. Wall time to the first answer is
printed too. Each start is a new interpreter with a new home; it is stopped by its pid.

Run: python benchmarks/daemon_start.py [--reps 15] [--tree DIR ...]
     (a folder holding src/gpuherd, e.g. HEAD's:
      mkdir /tmp/old && git -C . archive HEAD src | tar -x -C /tmp/old;
      default: this repository)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
FIRST = b"GET /api/v1/daemon HTTP/1.1\r\nHost: gpuherd\r\nConnection: close\r\n\r\n"
PAGE = b"GET / HTTP/1.1\r\nHost: gpuherd\r\nConnection: close\r\n\r\n"


def cpu_seconds(pid: int) -> float:
    """The process's user + system time so far (its threads' included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14, 15)


def ask(sock_path: Path, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(30)
        conn.connect(str(sock_path))
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def one_start(tree: Path) -> tuple[float, float, float]:
    """(CPU at the first answer, CPU at the first page, wall seconds to the first answer)."""
    home = Path(tempfile.mkdtemp(prefix="ds-"))
    env = {**os.environ, "GPUHERD_HOME": str(home), "PYTHONPATH": str(tree / "src")}
    env.pop("XDG_RUNTIME_DIR", None)  # the socket in the home: home/run/herd.sock
    env.pop("GPUHERD_SOCKET", None)
    sock_path = home / "run" / "herd.sock"
    began = time.perf_counter()
    cmd = [sys.executable, "-m", "gpuherd.daemon", "--home", str(home), "--fake-gpus", "2"]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the daemon of {tree} exited ({proc.returncode})")
            try:
                answer = ask(sock_path, FIRST)
                break
            except OSError:  # not bound yet, or bound and not yet serving
                time.sleep(0.005)
        wall = time.perf_counter() - began
        first = cpu_seconds(proc.pid)
        if not answer.startswith(b"HTTP/1.1 200"):
            raise SystemExit(f"{tree}: {answer[:200]!r}")
        page = ask(sock_path, PAGE)
        if not page.startswith(b"HTTP/1.1 200"):
            raise SystemExit(f"{tree}: {page[:200]!r}")
        return first, cpu_seconds(proc.pid), wall
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--tree", action="append", type=Path)
    args = parser.parse_args()
    trees = [tree.resolve() for tree in (args.tree or [REPO])]
    for tree in trees:  # with PYTHONDONTWRITEBYTECODE set, each start would compile them again
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "src")], check=True)
    figures: dict[Path, list[tuple[float, float, float]]] = {tree: [] for tree in trees}
    for rep in range(args.reps):
        turn = trees[rep % len(trees) :] + trees[: rep % len(trees)]  # rotated each repetition
        for tree in turn:
            figures[tree].append(one_start(tree))
    print(f"{args.reps} starts per tree, CPU seconds (user+system): median [min-max]")
    for tree in trees:
        runs = figures[tree]
        print(tree)
        for name, index in (("first answer", 0), ("first page", 1), ("wall to answer", 2)):
            values = [run[index] for run in runs]
            print(
                f"  {name:15} {statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"
            )


if __name__ == "__main__":
    main()
