"""W1 (issue 9's throughput: N trivial jobs on 4 fake GPUs) through `gpuherd run` and through
a daemon, for each source tree given, the trees' runs alternated (ABBA: on a machine whose
load comes and goes). Jobs per second from handing over the list to the last job's end, the
W1 job lines of the harness (two O_APPENDed records each), every job's end record counted.
Medians and ranges, and the load average before and after.

Nothing is deleted until the end: removing thousands of job folders just before a run slows
the file creations it measures (RESULTS.md's "How").

Run: python benchmarks/w1_trees.py [--reps 5] [--jobs 2000] [--tree DIR ...]
     (a folder holding src/gpuherd, e.g. HEAD's:
      mkdir /tmp/old && git archive HEAD src | tar -x -C /tmp/old; default: this repository)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from harness.common import compared_trees, herd_env
from harness.jobs import trivial_lines

TIMEOUT = 600.0


def _env(tree: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in herd_env(home).items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree / "src")
    return env


def _ended(record: Path, jobs: int) -> None:
    ends = sum(1 for line in record.read_text().splitlines() if line.startswith("E "))
    if ends != jobs:
        sys.exit(f"{record}: {ends} jobs ended, not {jobs}")


def run_once(python: str, tree: Path, work: Path, jobs: int) -> float:
    """Jobs per second of one `gpuherd run`, timed from its start to its exit."""
    folder = Path(tempfile.mkdtemp(dir=work, prefix="run-"))
    record = folder / "record"
    (folder / "jobs.txt").write_text("\n".join(trivial_lines("run", jobs, record)) + "\n")
    words = ["run", "--fake-gpus", "4", "--output-dir", str(folder / "out"), "jobs.txt"]
    began = time.time()
    subprocess.run(
        [python, "-m", "gpuherd", *words],
        cwd=folder,
        env=_env(tree, folder / "home"),
        stdout=subprocess.DEVNULL,
        check=True,
        timeout=TIMEOUT,
    )
    took = time.time() - began
    _ended(record, jobs)
    return jobs / took


def daemon_once(python: str, tree: Path, work: Path, jobs: int) -> float:
    """Jobs per second of one batch through a daemon of `tree`: from its POST to the answer
    of the wait that finds every job ended (the harness's HerdDaemon)."""
    from gpuherd.client import Client  # (this repository's: the API is the trees' own)

    folder = Path(tempfile.mkdtemp(dir=work, prefix="daemon-"))
    home, record = folder / "home", folder / "record"
    env = _env(tree, home)
    gpuherd = [python, "-m", "gpuherd"]
    subprocess.run([*gpuherd, "daemon", "start", "--fake-gpus", "4"], env=env, check=True)
    try:
        client = Client(home, timeout=TIMEOUT)
        batch = [
            {"command": ln, "cwd": str(folder), "env": None}
            for ln in trivial_lines("daemon", jobs, record)
        ]
        began = time.time()
        ids = client.post("/jobs", {"jobs": batch, "env": dict(os.environ)})["ids"]
        deadline = time.monotonic() + TIMEOUT
        while not client.get("/jobs/wait", ids=ids, timeout=30)["done"]:
            if time.monotonic() > deadline:
                sys.exit("the daemon's jobs did not finish in time")
        took = time.time() - began
    finally:
        subprocess.run([*gpuherd, "daemon", "stop", "--kill"], env=env, capture_output=True)
    _ended(record, jobs)
    return jobs / took


def main() -> None:
    sys.argv, jobs = _take_jobs(sys.argv)
    args, trees = compared_trees(5)
    kinds = {"gpuherd run": run_once, "gpuherd daemon": daemon_once}
    rates: dict[tuple[str, Path], list[float]] = {(k, t): [] for k in kinds for t in trees}
    load = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="w1-trees-"))
    try:
        for rep in range(args.reps):
            for kind, once in kinds.items():
                for tree in trees if rep % 2 == 0 else trees[::-1]:
                    rate = once(args.python, tree, work, jobs)
                    rates[(kind, tree)].append(rate)
                    print(f"  rep {rep + 1} {kind} [{tree}] {rate:.0f} jobs/s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    after = os.getloadavg()
    print(f"W1, {jobs} jobs, {args.reps} runs each: jobs/s, median (min-max)")
    print(f"  load average before {load[0]:.2f} {load[1]:.2f}, after {after[0]:.2f} {after[1]:.2f}")
    for (kind, tree), found in rates.items():
        print(
            f"  {kind:15} [{tree}] {statistics.median(found):.0f} "
            f"({min(found):.0f}-{max(found):.0f})"
        )


def _take_jobs(argv: list[str]) -> tuple[list[str], int]:
    """`--jobs N` out of the arguments (compared_trees parses the rest)."""
    if "--jobs" in argv:
        at = argv.index("--jobs")
        return argv[:at] + argv[at + 2 :], int(argv[at + 1])
    return argv, 2000


if __name__ == "__main__":
    main()
