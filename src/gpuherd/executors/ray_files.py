"""The files of a Ray attempt's folder on the daemon's machine (executors/ray.py): the logs
pulled from the node, `ray.json` (where it ran), `exit_status`, whose modification time
is when the job ended on its node (read back after a daemon restart, as the local executor's
is), and `ray-heard`, when its actor last answered."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from gpuherd.executors.base import ExitStatus

EXIT_STATUS_FILE = "exit_status"
_MAX_SIGNAL = 64


def decode(code: int, ended_at: float) -> ExitStatus:
    """The supervisor's code (as the local executor writes it: 128 + a signal), -1: none."""
    if code < 0:
        return ExitStatus(exit_code=None, signal=None, ended_at=ended_at)
    if code > 128 and 1 <= code - 128 <= _MAX_SIGNAL:
        return ExitStatus(exit_code=None, signal=code - 128, ended_at=ended_at)
    return ExitStatus(exit_code=code, signal=None, ended_at=ended_at)


def write_exit(folder: Path, status: ExitStatus) -> None:
    """Write `status` (not a lost one) atomically, dated when the job ended."""
    code = status.exit_code if status.signal is None else 128 + status.signal
    with contextlib.suppress(OSError):
        tmp = folder / (EXIT_STATUS_FILE + ".tmp")
        tmp.write_text(f"{code}\n")
        os.utime(tmp, (status.ended_at, status.ended_at))
        tmp.replace(folder / EXIT_STATUS_FILE)


def read_exit(folder: Path) -> ExitStatus | None:
    path = folder / EXIT_STATUS_FILE
    try:
        code = int(path.read_text().strip())
        ended_at = path.stat().st_mtime
    except (OSError, ValueError):
        return None
    return decode(code, ended_at)


def size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def tail(path: Path, max_bytes: int = 4096) -> str:
    """The end of a pulled log ("" when there is none)."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, size(path) - max_bytes))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def append(path: Path, chunk: bytes) -> None:
    with path.open("ab") as f:
        f.write(chunk)


def write_json(path: Path, data: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        tmp.replace(path)


HEARD_FILE = "ray-heard"
"""The cluster (its address) whose actor of the attempt answered the daemon last, and when
(the file's modification time): what a restart knows of an attempt it finds gone. Before, it
took the last daemon's stop for the attempt's last sign of life, also after the cluster had not
answered for minutes."""
HEARD_EVERY = 5.0
"""Seconds between two notes while the actor answers: the most a sign of life is off by."""
HEARD_SLACK = 5.0
"""Seconds past HEARD_EVERY by which the last daemon's stop may follow the note, and the
attempt still count as heard until then (a pull waits up to 1 s; a busy daemon's loop lags)."""


def note_heard(folder: Path, address: str) -> None:
    """The attempt's actor on the cluster at `address` has answered now."""
    with contextlib.suppress(OSError):
        try:
            os.utime(folder / HEARD_FILE)  # (its address is the same while it is followed)
        except FileNotFoundError:
            tmp = folder / (HEARD_FILE + ".tmp")
            tmp.write_text(address)
            tmp.replace(folder / HEARD_FILE)


def last_heard(folder: Path) -> tuple[str, float] | None:
    """(the cluster's address, when) of the attempt's last answer; None: never noted."""
    try:
        path = folder / HEARD_FILE
        return path.read_text(), path.stat().st_mtime
    except OSError:
        return None


def ray_last_seen(folder: Path, stopped: float | None) -> float | None:
    """When a Ray attempt found gone was last known alive: when the last daemon stopped
    (`stopped`: it counted the attempt running) if its actor answered until then, else when
    its actor last answered. (An attempt of an older gpuherd, with no note: `stopped`.)"""
    heard = last_heard(folder)
    if heard is None:
        return stopped
    if stopped is not None and heard[1] <= stopped <= heard[1] + HEARD_EVERY + HEARD_SLACK:
        return stopped
    return heard[1]
