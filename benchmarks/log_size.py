"""What reading a large log costs: `gpuherd log`, `log -n 20` and `log -f` of one job's
300 MB stdout through a daemon (wall time, the client's peak memory, the daemon's growth).

Run: python benchmarks/log_size.py [--mb 300]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from gpuherd.client import Client
from harness.common import scratch_daemon


def peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def timed(env: dict[str, str], *args: str) -> tuple[float, int]:
    """Wall seconds and the child's peak RSS (KiB) of one `gpuherd` command, output dropped."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpuherd", *args], env=env, stdout=subprocess.DEVNULL, check=True
    )
    seconds = time.perf_counter() - start
    return seconds, max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=300)
    size = parser.parse_args().mb * 1_000_000
    with scratch_daemon("log-size-") as (home, env):
        client = Client(home, timeout=120)
        line = "head -c {size} /dev/zero | tr '\\0' x | fold -w 100"
        job = client.post("/jobs", {"jobs": [{"command": line.format(size=size), "cwd": "/"}]})
        job_id = str(job["ids"][0])
        while not client.get("/jobs/wait", ids=[job_id], timeout=60)["done"]:
            pass
        pid = int(client.get("/daemon")["pid"])
        before = peak_kib(pid)
        for args in (["log", job_id], ["log", "-n", "20", job_id], ["log", "-f", job_id]):
            seconds, client_kib = timed(env, *args)
            print(
                f"gpuherd {' '.join(args)}: {seconds:.2f} s, client peak {client_kib // 1024} MiB"
                f" (all commands so far), daemon peak +{(peak_kib(pid) - before) // 1024} MiB"
            )


if __name__ == "__main__":
    main()
