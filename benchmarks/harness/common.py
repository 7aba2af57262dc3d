"""Paths, statistics, process handling and gpuherd helpers shared by the harness modules."""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent
SCRATCH = BENCH / ".scratch"
"""Installed peers (kept between runs) and, below it, each run's own work folder."""
_WORK: list[Path] = [SCRATCH / "work"]


def workdir() -> Path:
    """This run's folder for records, logs, daemon homes and servers' sockets."""
    return _WORK[0]


def set_work(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "runs").mkdir(exist_ok=True)
    (path / "logs").mkdir(exist_ok=True)
    _WORK[0] = path


GPUS = (0, 1, 2, 3)
"""The fake GPU ids every tool gets."""


_PYTHON: list[Path] = [Path(sys.executable)]
"""The interpreter gpuherd and the Python floor run under: this one, or after
`use_python`, the venv a full run installs gpuherd into."""


def use_python(python: Path) -> None:
    _PYTHON[0] = python


def herd_python() -> str:
    return str(_PYTHON[0])


def gpuherd_cmd() -> list[str]:
    """The installed console script beside the interpreter (no pyenv shim in the way)."""
    script = _PYTHON[0].parent / "gpuherd"
    return [str(script)] if script.exists() else [str(_PYTHON[0]), "-m", "gpuherd"]


def herd_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "GPUHERD_HOME": str(home)}
    env.pop("XDG_RUNTIME_DIR", None)
    return env


@contextmanager
def scratch_daemon(prefix: str, gpus: int = 1) -> Iterator[tuple[Path, dict[str, str]]]:
    """A daemon with `gpus` fake GPUs in a new temporary home: (home, environment for
    `gpuherd` commands); killed on the way out."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    env = herd_env(home)
    subprocess.run(
        [*gpuherd_cmd(), "daemon", "start", "--fake-gpus", str(gpus)], env=env, check=True
    )
    try:
        yield home, env
    finally:
        subprocess.run([*gpuherd_cmd(), "daemon", "stop", "--kill"], env=env, capture_output=True)


@contextmanager
def tree_daemon(tree: Path, gpus: int, prefix: str) -> Iterator[dict[str, str]]:
    """A daemon of `tree`'s code (a folder holding src/gpuherd) with `gpus` fake GPUs in a
    new home: the environment of that tree's `python -m gpuherd`; stopped (its jobs killed)
    and its home deleted on the way out."""
    home = Path(tempfile.mkdtemp(prefix=prefix))
    env = {**herd_env(home), "PYTHONPATH": str(tree / "src")}
    gpuherd = [sys.executable, "-m", "gpuherd"]
    subprocess.run([*gpuherd, "daemon", "start", "--fake-gpus", str(gpus)], env=env, check=True)
    try:
        yield env
    finally:
        subprocess.run([*gpuherd, "daemon", "stop", "--kill"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def fresh_dir(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


def unused_dir(prefix: Path) -> Path:
    """A new, empty folder named `prefix`-N."""
    n = 1
    while True:
        path = prefix.with_name(f"{prefix.name}-{n}")
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            n += 1
            continue
        return path


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    value = fn()
    return time.perf_counter() - t, value


def wall(cmd: Sequence[str], env: dict[str, str] | None = None, check: bool = True) -> float:
    """Wall time of one process, output discarded."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


@dataclass
class Figure:
    """Repeated measurements of one quantity for one tool, and what was noticed on the way."""

    values: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def add(self, value: float | None, note: str = "") -> None:
        if value is not None:
            self.values.append(value)
        if note and note not in self.notes:
            self.notes.append(note)

    def fail(self, why: str) -> None:
        if why not in self.failures:
            self.failures.append(why)

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None


def cpu_seconds(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return float(t.user + t.system)


def tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def kill_tree(pid: int, grace: float = 3.0) -> None:
    """End a process we started and every descendant it left, by pid."""
    procs = tree(pid)
    for p in procs:
        try:
            p.send_signal(signal.SIGTERM)
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass


def wait_lines(path: Path, count: int, timeout: float, marker: str = "") -> float | None:
    """Poll a record file until it holds `count` lines (starting with `marker`); the time then."""
    deadline = time.monotonic() + timeout
    size = -1
    while time.monotonic() < deadline:
        try:
            now = path.stat().st_size
        except FileNotFoundError:
            now = 0
        if now != size:
            size = now
            text = path.read_text() if now else ""
            have = sum(1 for ln in text.splitlines() if ln.startswith(marker))
            if have >= count:
                return time.time()
        time.sleep(0.005)
    return None


def compared_trees(default_reps: int) -> tuple[argparse.Namespace, list[Path]]:
    """`--reps`, `--python` and `--tree DIR ...` of the scripts that time source trees against
    each other, and the trees (default: this repository), each compiled first: a machine that
    sets PYTHONDONTWRITEBYTECODE would otherwise compile every module at every call, which no
    installed copy does."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=default_reps)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--tree", type=Path, action="append")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree or [REPO]]
    for tree in trees:
        compileall.compile_dir(tree / "src", quiet=1)
    return args, trees
