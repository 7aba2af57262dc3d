"""A sweep point's folder at submit: its params.json written, and what its previous run left
(logs, markers, metrics) moved to previous-runs/<n>/ so the new run starts clean.

The daemon writes these for every point it submits (sweeps.py), before any job starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from gpuherd.core.sweep import Point, SweepSpec
from gpuherd.core.sweep_values import json_safe
from gpuherd.errors import HerdError
from gpuherd.jobfiles import write_whole
from gpuherd.sweep_files import METRICS_FILE, PARAMS_FILE

PREVIOUS_DIR = "previous-runs"
RUN_FILES = ("job.json", "SUCCESS", "FAILURE", METRICS_FILE)
"""With the attempt-N folders: what a point's run leaves; moved aside when it runs again."""


def write_params(spec: SweepSpec, point: Point, git: str | None) -> None:
    """params.json in the point's folder; clear what the point's previous run left."""
    folder = point.run_dir
    record = {
        "sweep": spec.name,
        "index": point.index,
        "folder": point.folder,
        "params": json_safe(dict(point.params)),
        "varying": list(point.varying),
        "command": point.command,
        "git": git,
        "submitted_at": time.time(),
    }
    path = os.path.join(folder, PARAMS_FILE)
    try:
        try:
            os.mkdir(folder)  # a new point's folder: no previous run to move aside
        except FileExistsError:
            _move_previous_run(folder)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        try:
            write_whole(fd, _record_text(record).encode())
        finally:
            os.close(fd)
        os.replace(path + ".tmp", path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path + ".tmp")
        raise HerdError(
            f"cannot write {path}: {exc.strerror or exc}; "
            "choose a results folder you can write (--results-dir)"
        ) from None


def _record_text(record: dict[str, Any]) -> str:
    """A key a line, each value on its own line as JSON: as readable as `indent=2` for these
    few keys, and made by json's C encoder (indent uses the Python one: 5,000 records took
    a second)."""
    lines = (f"  {json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in record.items())
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _move_previous_run(folder: str) -> None:
    """Move the logs, markers and metrics of the point's last run to previous-runs/<n>/, so
    the new run starts clean (logs are appended to) and nothing of the old one is lost.
    (One listing of the folder: a stat for each file a run may leave, 5,000 times, was most
    of a big sweep's resubmission.)"""
    names = set(os.listdir(folder))
    old = [name for name in RUN_FILES if name in names]
    old += sorted(
        n for n in names if n.startswith("attempt-") and os.path.isdir(os.path.join(folder, n))
    )
    if not old:
        return
    archive = Path(folder) / PREVIOUS_DIR
    number = 1 + max((int(p.name) for p in archive.glob("*") if p.name.isdigit()), default=0)
    target = archive / str(number)
    target.mkdir(parents=True)
    for name in old:
        os.rename(os.path.join(folder, name), target / name)
