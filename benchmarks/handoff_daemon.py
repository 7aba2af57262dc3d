"""W2's hand-offs through a daemon, stage by stage, against a bare loop's on the same machine.

handoff.py times the engine in its own process, one GPU; this one times a real daemon (4
fake GPUs, the socket, the API's long poll) running W2's jobs: the script starts itself as
the daemon (`--serve`), with the same timers as handoff.py around its steps plus the
executor's own look at the exit, and each run of W2 is posted and waited for as w2_budget.py
does. A hand-off is kept when no other job started or ended between its end stamp and 2 ms
after its start stamp (another slot's work would mix into its stages). Then the floor: a
Python loop that waits for one job (blocking waitpid) and spawns the next at once, as xargs
does, with `sh -c LINE` and with gpuherd's job shell: what no scheduler can avoid here (the
job's end seen, a process started), so the daemon's part is the difference.

Run: python benchmarks/handoff_daemon.py [--reps 3] [--scale 1.0] [--pairs 25] [--tree DIR]
(--scale 0.04: W3's pace, jobs of 8-80 ms; --tree: a folder holding the src/ to run)
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent

STAGES = [
    ("the job's end -> the executor sees the exit", "end", "seen"),
    ("the exit concluded (group, reap) -> the engine told", "seen", "exit"),
    ("exit seen -> tick", "exit", "tick"),
    ("tick -> recording the ended attempt", "tick", "exits>"),
    ("the ended attempt recorded", "exits>", "exits<"),
    ("-> placement pass", "exits<", "plan>"),
    ("placement pass", "plan>", "plan<"),
    ("the start recorded, committed", "plan<", "committed"),
    ("the attempt prepared", "committed", "spawn>"),
    ("posix_spawn", "spawn>", "spawn<"),
    ("spawn -> the job's first stamp", "spawn<", "start"),
    ("in all: end -> next start", "end", "start"),
]


def serve(marks_file: str, daemon_args: list[str]) -> int:
    """Run the daemon with timers around the hand-off's steps; the marks are written at exit."""
    # The tree's gpuherd (PYTHONPATH) first: handoff.py puts this repository's src/ first on
    # sys.path, and a package's modules are found where the package was.
    importlib.import_module("gpuherd")
    import handoff  # its timers, and the steps it wraps by name
    from gpuherd import daemon
    from gpuherd.executors.local import LocalExecutor

    handoff.instrument()
    handoff._timed(LocalExecutor, "_on_leader_exit", "seen")

    def write_marks() -> None:
        Path(marks_file).write_text(json.dumps(handoff.marks))

    atexit.register(write_marks)  # (the daemon runs the exit handlers before os._exit)
    return daemon.main(daemon_args)


def _answers(client: Any) -> bool:
    try:
        client.get("/daemon")
    except Exception:  # not listening yet
        return False
    return True


def daemon_stages(tree: Path, reps: int, scale: float, folder: Path) -> dict[str, list[float]]:
    from gpuherd.client import Client
    from harness.jobs import read_stamps, stamped_lines, w2_lengths

    lengths = [round(s * scale, 3) for s in w2_lengths()]
    home, marks_file = folder / "home", folder / "marks.json"
    env = dict(os.environ, GPUHERD_HOME=str(home), PYTHONPATH=f"{tree / 'src'}:{BENCHMARKS}")
    cmd = [sys.executable, __file__, "--serve", str(marks_file), "--home", str(home)]
    errors = folder / "daemon.err"
    with errors.open("wb") as err:
        proc = subprocess.Popen([*cmd, "--fake-gpus", "4"], env=env, stdout=err, stderr=err)
    stamps = []
    try:
        client = Client(home, timeout=60)
        deadline = time.monotonic() + 60
        while not _answers(client):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not answer: {errors.read_text()[-2000:]}")
            time.sleep(0.05)
        for rep in range(reps):
            time.sleep(1.0)  # as in run.py: each run starts from a quiet machine
            record = folder / f"record{rep}"
            jobs = [
                {"command": line, "cwd": str(folder), "env": dict(os.environ)}
                for line in stamped_lines("handoff", lengths, record)
            ]
            ids = client.post("/jobs", {"jobs": jobs})["ids"]
            while not client.get("/jobs/wait", ids=ids, timeout=30)["done"]:
                pass
            stamps += read_stamps(record)
    finally:
        proc.terminate()
        proc.wait(60)
    return _stages(stamps, json.loads(marks_file.read_text()))


def _stages(stamps: list[Any], marks: list[tuple[str, float]]) -> dict[str, list[float]]:
    """Each kept hand-off's stages (STAGES), in milliseconds."""
    edges = [t for s in stamps for t in (s.start, s.end)]
    by_gpu: dict[str, list[tuple[float, float]]] = {}
    for s in sorted(stamps, key=lambda s: s.start):
        by_gpu.setdefault(s.gpu, []).append((s.start, s.end))
    stages: dict[str, list[float]] = {label: [] for label, _, _ in STAGES}
    for chain in by_gpu.values():
        for (_, end), (start, _) in itertools.pairwise(chain):
            if any(end < t < start + 0.002 for t in edges if t not in (end, start)):
                continue  # another slot's job started or ended meanwhile
            window = [(label, at) for label, at in marks if end <= at <= start]
            reached = {"end": end, **_steps(window, end), "start": start}
            for label, a, b in STAGES:
                if a in reached and b in reached:
                    stages[label].append((reached[b] - reached[a]) * 1e3)
    return stages


def _steps(window: list[tuple[str, float]], end: float) -> dict[str, float]:
    """When each step of the hand-off began, in their order: the first mark of each after
    the step before (a tick that came before the exit was seen was another's)."""
    reached: dict[str, float] = {}
    since = end
    for step in [b for _, _, b in STAGES[:-2]]:
        at = next((at for label, at in window if label == step and at >= since), None)
        if at is None:
            break
        reached[step] = since = at
    return reached


def loop_floor(tree: Path, pairs: int, sleep: float, folder: Path) -> dict[str, list[float]]:
    """A hand-off by a bare loop: waitpid returns, the next job spawned at once."""
    from gpuherd.executors.local_shell import JOB_SHELL

    found: dict[str, list[float]] = {}
    env = dict(os.environ)
    for i, shell in itertools.product(range(pairs), ("sh -c LINE", "gpuherd's job shell")):
        record = folder / f"floor{i}{shell[0]}"
        seen = spawned = 0.0
        for j in range(2):
            line = f"bash -c 's=$EPOCHREALTIME; sleep {sleep}; echo $s $EPOCHREALTIME >> {record}'"
            attempt = folder / f"a{i}{j}{shell[0]}"
            attempt.mkdir()
            argv = ["/bin/sh", "-c", line]
            if shell != "sh -c LINE":
                argv = ["/bin/sh", "-c", JOB_SHELL, "job", line, str(folder), str(attempt)]
            spawned = time.time()
            pid = os.posix_spawn("/bin/sh", argv, env, setsid=True)
            os.waitpid(pid, 0)
            seen = seen or time.time()  # the first job's end, as the loop saw it
        (_, end), (start, _) = (map(float, ln.split()) for ln in record.read_text().splitlines())
        for label, ms in (
            ("the job's end -> waitpid returns", seen - end),
            ("-> posix_spawn of the next", spawned - seen),
            ("spawn -> the job's first stamp", start - spawned),
            ("in all: end -> next start", start - end),
        ):
            found.setdefault(f"{shell}: {label}", []).append(ms * 1e3)
    return found


def show(title: str, table: dict[str, list[float]]) -> None:
    print(f"\n{title}\n| stage | p50 ms | mean ms | n |\n|---|---|---|---|")
    for label, values in table.items():
        if values:
            median, mean = statistics.median(values), statistics.mean(values)
            print(f"| {label} | {median:.3f} | {mean:.3f} | {len(values)} |")
        else:
            print(f"| {label} | - | - | 0 |")


def main() -> int:
    if sys.argv[1:2] == ["--serve"]:
        return serve(sys.argv[2], sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="runs of W2 (default 3)")
    parser.add_argument("--scale", type=float, default=1.0, help="job lengths times this")
    parser.add_argument("--pairs", type=int, default=25, help="the floor's hand-offs per shell")
    parser.add_argument("--tree", type=Path, default=REPO, help="a folder holding src/")
    args = parser.parse_args()
    sys.path.insert(0, str(BENCHMARKS))
    sys.path.insert(0, str(args.tree.resolve() / "src"))
    print(f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="handoff-daemon-") as work:
        stages = daemon_stages(args.tree.resolve(), args.reps, args.scale, Path(work))
        show(f"W2's hand-offs through a daemon ({args.reps} runs, lengths x{args.scale}):", stages)
        floor = loop_floor(args.tree.resolve(), args.pairs, 0.3 * args.scale, Path(work))
        show("The floor: a loop's hand-off (waitpid, then posix_spawn):", floor)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0 if stages["in all: end -> next start"] else 1


if __name__ == "__main__":
    sys.exit(main())
