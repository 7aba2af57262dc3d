"""`gpuherd run`'s start-up: from the moment `python -m gpuherd run --fake-gpus 4 FILE` is
executed to its one job's start stamp (FILE is one `bash -c` line that writes
$EPOCHREALTIME), then to the command's end, and the CPU time of the whole run (user + system,
the job's shell and bash included), for each source tree given, the trees' runs alternated
(ABBA: on a machine whose load comes and goes). Medians and ranges.

Each tree is compiled first, and the runs write bytecode (PYTHONDONTWRITEBYTECODE is left
out of their environment): an installed copy never compiles at start-up. `--python`: the
interpreter to run with; a venv's (`python -m venv --without-pip DIR` and a `.pth` naming
this interpreter's site-packages) leaves out what this sandbox's own adds to every start.

Run: python benchmarks/run_start.py [--reps 20] [--python PYTHON] [--tree DIR ...]
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

from harness.common import compared_trees


def one_run(python: str, tree: Path, work: Path) -> tuple[float, float, float]:
    """(ms to the job's start stamp, ms to the command's end, CPU ms of the whole run)."""
    stamp, out = work / "stamp", Path(tempfile.mkdtemp(dir=work))
    jobs = work / "jobs.txt"
    jobs.write_text(f"bash -c 'echo $EPOCHREALTIME > {stamp}'\n")
    stamp.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree / "src")
    words = ["run", "--fake-gpus", "4", "--output-dir", str(out / "out"), str(jobs)]
    began = time.time()
    proc = subprocess.Popen([python, "-m", "gpuherd", *words], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.time()
    if status != 0:
        sys.exit(f"gpuherd run of {tree} failed (wait status {status})")
    shutil.rmtree(out, ignore_errors=True)
    first = float(stamp.read_text())
    return (first - began) * 1000, (ended - began) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    args, trees = compared_trees(20)
    runs: dict[Path, list[tuple[float, float, float]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory(prefix="run-start-") as work:
        for rep in range(args.reps):
            for tree in trees if rep % 2 == 0 else trees[::-1]:
                runs[tree].append(one_run(args.python, tree, Path(work)))
    print(f"gpuherd run of one job, {args.reps} runs each: median (min-max), ms")
    for tree, found in runs.items():
        columns = zip(("first job's start", "end", "CPU"), zip(*found, strict=True), strict=True)
        figures = ", ".join(
            f"{name} {statistics.median(values):.1f} ({min(values):.0f}-{max(values):.0f})"
            for name, values in columns
        )
        print(f"  [{os.path.relpath(tree)}] {figures}")


if __name__ == "__main__":
    main()
