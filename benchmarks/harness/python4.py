"""The floor a scheduler should reach: 4 threads, one per GPU, each running the next line.

Run as `python3 python4.py 0 1 2 3 < jobs.txt`: one job per line, run by /bin/sh with
CUDA_VISIBLE_DEVICES set to the thread's GPU. Minimal and correct: a GPU runs one job at a
time, every line runs once, and the run ends when all lines have ended.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading


def main() -> int:
    lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
    failed = []

    def worker(gpu: str) -> None:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu}
        while (line := lines.get()) is not None:
            if subprocess.run(["/bin/sh", "-c", line], env=env).returncode != 0:
                failed.append(line)

    threads = [threading.Thread(target=worker, args=(gpu,)) for gpu in sys.argv[1:]]
    for t in threads:
        t.start()
    for line in sys.stdin:
        if line.strip():
            lines.put(line.rstrip("\n"))
    for _ in threads:
        lines.put(None)
    for t in threads:
        t.join()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
