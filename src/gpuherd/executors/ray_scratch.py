"""Who owns an attempt's scratch folder on its node, and the sweep of the folders no one does
(node side: the job's actor calls both, ray_actor.py).

An actor writes its folder's `owner` (its worker's pid and start time) before `spec.json`,
which holds the job's whole environment (API keys and all). From the moment the supervisor
has started, the supervisor removes the folder when the actor dies (ray_supervisor.py). But
an actor killed before that (`gpuherd kill` of a job just launched, a stop's kill, a cluster
stopped: Ray SIGKILLs the worker and its children, the supervisor still starting among them)
ran nothing more, and its folder stayed on the node for good. Each new actor of this user
on the node sweeps them: a folder whose owner has ended and whose supervisor does not run.

Only the standard library and psutil: this runs on every node.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from pathlib import Path

import psutil

OWNER_FILE = "owner"
SUPERVISOR_PID_FILE = "supervisor.pid"
UNOWNED_AFTER = 600.0
"""Seconds after which a folder of an older gpuherd (no `owner` file) whose supervisor never
started is swept: its actor gives the supervisor 60 s to start, then fails."""


def claim(folder: Path) -> None:
    """Record this process (the actor's worker) as the owner of `folder`."""
    me = psutil.Process()
    (folder / OWNER_FILE).write_text(f"{me.pid} {me.create_time()!r}\n")


def sweep(root: Path, now: float | None = None) -> list[str]:
    """Remove the folders under `root` that no process will ever remove; their names."""
    now = time.time() if now is None else now
    swept = []
    for folder in _folders(root):
        if _abandoned(folder, now):
            shutil.rmtree(folder, ignore_errors=True)
            swept.append(folder.name)
    return swept


def _folders(root: Path) -> list[Path]:
    try:
        return [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def _abandoned(folder: Path, now: float) -> bool:
    """Its owner (the actor) has ended and no supervisor runs for it: nothing reads it, and
    nothing will remove it. A folder of an older gpuherd (no owner recorded): its supervisor
    never started, long past the time its actor gave it."""
    if _supervisor_runs(folder):
        return False
    owner = _read(folder / OWNER_FILE)
    if owner is not None:
        return not _alive(owner)
    if (folder / SUPERVISOR_PID_FILE).exists():
        return False  # (its actor may still hold the job's status and logs for a daemon)
    try:
        return now - folder.stat().st_mtime > UNOWNED_AFTER
    except OSError:
        return False


def _supervisor_runs(folder: Path) -> bool:
    text = _read(folder / SUPERVISOR_PID_FILE)
    if text is None:
        return False
    with contextlib.suppress(ValueError, psutil.Error):
        proc = psutil.Process(int(text))
        # (its pid may be another process's now: the supervisor names its folder)
        return proc.status() != psutil.STATUS_ZOMBIE and str(folder) in proc.cmdline()
    return False


def _alive(owner: str) -> bool:
    """Whether the process `owner` names ("PID START_TIME") still runs; an unreadable one
    is taken to (a folder is never removed on a guess)."""
    try:
        pid, started = owner.split()
        proc = psutil.Process(int(pid))
        # (another process given its pid since started later: its owner had run a while)
        same = abs(proc.create_time() - float(started)) < 0.5
        return same and proc.status() != psutil.STATUS_ZOMBIE
    except (ValueError, psutil.AccessDenied):
        return True
    except psutil.Error:  # (NoSuchProcess)
        return False


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
