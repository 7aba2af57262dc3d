"""What `--max-log-size` costs: its look at the logs of N running capped jobs (a `stat` of
each job's stdout and stderr log, every log_cap_watch.LOG_CHECK_EVERY seconds).

1. The look alone (LogCapWatch.check), over N jobs' real log files: time per look.
2. Through a daemon: N CPU-only `sleep` jobs running, the daemon's CPU time over a window,
   with every job capped, then with none (the same jobs, `--max-log-size none`).

Run: python benchmarks/log_cap_check.py [--jobs 200] [--seconds 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpuherd.client import Client
from gpuherd.log_cap_watch import LOG_CHECK_EVERY, LogCapWatch
from harness.common import gpuherd_cmd, scratch_daemon


def look_alone(jobs: int, looks: int = 200) -> float:
    """Median seconds of one look at `jobs` jobs, each with a 1 KiB stdout and stderr log."""
    with tempfile.TemporaryDirectory(prefix="log-cap-") as tmp:
        live = {}
        for n in range(jobs):
            logs = []
            for stream in ("stdout", "stderr"):
                path = Path(tmp) / f"{n}.{stream}.log"
                path.write_bytes(b"x" * 1024)
                logs.append((stream, path))
            live[n] = SimpleNamespace(
                job_id=n, max_log_size=2**30, logs=tuple(logs), stop_reason=None, paused=False
            )
        watch = LogCapWatch(live, lambda _job: None)  # type: ignore[arg-type]
        times = []
        for _ in range(looks):
            start = time.perf_counter()
            watch.check()
            times.append(time.perf_counter() - start)
        return statistics.median(times)


def daemon_cpu(jobs: int, seconds: float, cap: str) -> float:
    """The daemon's CPU seconds over `seconds` while `jobs` capped (or not) jobs run."""
    with scratch_daemon("log-cap-daemon-") as (home, env):
        subprocess.run([*gpuherd_cmd(), "config", "set", "cpu-jobs", "none"], env=env, check=True)
        lines = "\n".join(["sleep 600"] * jobs) + "\n"
        subprocess.run(
            [*gpuherd_cmd(), "submit", "-q", "--gpus", "0", "--max-log-size", cap, "--file", "-"],
            env=env,
            input=lines.encode(),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        client = Client(home, timeout=60)
        deadline = time.monotonic() + 120
        while len(client.get("/jobs", state="running", all=True)["jobs"]) < jobs:
            if time.monotonic() > deadline:
                sys.exit("the jobs did not all start within 120 s")
            time.sleep(0.5)
        daemon = psutil.Process(int(client.get("/daemon")["pid"]))
        time.sleep(3)  # the starts' paperwork done
        before = sum(daemon.cpu_times()[:2])
        time.sleep(seconds)
        return sum(daemon.cpu_times()[:2]) - before


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    look = look_alone(args.jobs)
    print(
        f"one look at {args.jobs} jobs ({2 * args.jobs} stat calls): {look * 1e3:.2f} ms; "
        f"every {LOG_CHECK_EVERY:g} s: {look / LOG_CHECK_EVERY * 100:.3f}% of one core"
    )
    capped = daemon_cpu(args.jobs, args.seconds, "1GiB")
    uncapped = daemon_cpu(args.jobs, args.seconds, "none")
    print(
        f"daemon CPU over {args.seconds:g} s with {args.jobs} running jobs: "
        f"capped {capped:.3f} s, uncapped {uncapped:.3f} s"
    )


if __name__ == "__main__":
    main()
