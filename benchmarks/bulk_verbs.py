"""What a verb on a whole sweep costs: `gpuherd hold`, `release`, `kill`, `retry` and `rm`
of N queued jobs through a daemon (the queue is paused, so nothing starts), with the
longest time another client waited for an answer meanwhile (the daemon's event loop is
busy while a verb runs).

Run: python benchmarks/bulk_verbs.py [--jobs 100000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpuherd.client import Client
from harness.common import gpuherd_cmd, scratch_daemon


class Pinger(threading.Thread):
    """Asks the daemon for its status in a loop; keeps the longest answer time."""

    def __init__(self, home: Path) -> None:
        super().__init__(daemon=True)
        self.client = Client(home, timeout=600)
        self.longest = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            start = time.perf_counter()
            self.client.get("/daemon")
            self.longest = max(self.longest, time.perf_counter() - start)
            self.done.wait(0.01)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100_000)
    count = parser.parse_args().jobs
    gpuherd = gpuherd_cmd()
    with scratch_daemon("bulk-verbs-") as (home, env):
        client = Client(home, timeout=600)
        client.post("/queue/pause")
        batch = [{"command": "true", "cwd": "/"} for _ in range(count)]
        ids = client.post("/jobs", {"jobs": batch})["ids"]
        span = f"{ids[0]}-{ids[-1]}"
        for verb in ("hold", "release", "kill", "retry", "rm"):
            pinger = Pinger(home)
            pinger.start()
            start = time.perf_counter()
            done = subprocess.run([*gpuherd, verb, span], env=env, capture_output=True)
            seconds = time.perf_counter() - start
            pinger.done.set()
            pinger.join()
            outcome = "ok" if done.returncode == 0 else done.stderr.decode().strip()[:200]
            print(
                f"gpuherd {verb} of {count} jobs: {seconds:.2f} s ({outcome}); "
                f"longest wait of another client {pinger.longest * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()
