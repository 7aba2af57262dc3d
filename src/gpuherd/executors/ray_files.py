"""The files of a Ray attempt's folder on the daemon's machine (executors/ray.py): the logs
pulled from the node, `ray.json` (where it ran) and `exit_status`, whose modification time
is when the job ended on its node (read back after a daemon restart, as the local executor's
is)."""

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
