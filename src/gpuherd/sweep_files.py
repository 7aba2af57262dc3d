"""The JSON files of a sweep point's folder (params.json, metrics.json, job.json), read safely
and, for a sweep of thousands of points, quickly.

A job can write anything into its folder: files are opened as plain files only, never
through a link (jobfiles.open_job_file), and never more than JSON_MAX_BYTES of them.

`sweep status` and a resubmission read every point's params.json and metrics.json: 5,000
points took the daemon a second and a half of opening and parsing, each time. A file read
is kept (its parsed value) with what identifies its version: device, inode, size and both
times in nanoseconds. The next read stats the file and takes the kept value when none of
these changed. A file changed within SETTLED seconds is never kept: a file system stamps
times from a clock that ticks every few milliseconds, so a file rewritten twice within a
tick, at the same size, would look unchanged (git's "racily clean" entries, the same
reasoning). Only small files are kept, CACHE_MAX_BYTES of them in all.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from gpuherd.errors import Forbidden
from gpuherd.jobfiles import open_job_file

PARAMS_FILE = "params.json"
METRICS_FILE = "metrics.json"
JSON_MAX_BYTES = 1024 * 1024
"""Largest params.json, job.json or metrics.json read from a point's folder."""
SETTLED = 2.0
"""A file changed less than this many seconds ago is read again each time, not kept."""
KEEP_MAX_BYTES = 64 * 1024
CACHE_MAX_BYTES = 64 * 1024 * 1024
"""Files kept: each at most KEEP_MAX_BYTES, together at most this (then all are dropped)."""

_Version = tuple[int, int, int, int, int]
_kept: dict[str, tuple[_Version, Any]] = {}
_kept_bytes = 0


class NotJson(ValueError):
    """A file that is not valid JSON: says where the parser stopped."""


def read_json(path: str | Path) -> Any:
    """A JSON file of a point's folder; None when it is missing, a link, too large (a job
    can write anything there: the table must stay quick) or not JSON."""
    try:
        return load_json(str(path))
    except (OSError, ValueError, Forbidden):
        return None


def load_json(path: str, found: os.stat_result | None = None) -> Any:
    """The parsed file, from what was kept when it has not changed since. `found`: its
    lstat, when the caller has it. Raises OSError, Forbidden (a link, not a plain file),
    ValueError (too large) or NotJson."""
    global _kept_bytes
    found = found or os.lstat(path)
    if stat.S_ISLNK(found.st_mode) or not stat.S_ISREG(found.st_mode):
        raise Forbidden(f"{path} is not a plain file: not read")
    version = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
    kept = _kept.get(path)
    if kept is not None and kept[0] == version:
        return kept[1]
    with open_job_file(path) as f:
        data = f.read(JSON_MAX_BYTES + 1)
    if len(data) > JSON_MAX_BYTES:
        raise ValueError(f"{path}: more than {JSON_MAX_BYTES} bytes")
    try:
        value = json.loads(data)
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        raise NotJson(_where(exc)) from None
    # The version is the one seen before the read: a change during the read gives the file a
    # newer time, so the next read reads it again.
    changed = max(found.st_mtime_ns, found.st_ctime_ns) / 1e9
    if len(data) <= KEEP_MAX_BYTES and time.time() - changed > SETTLED:
        if _kept_bytes + len(data) > CACHE_MAX_BYTES:
            _kept.clear()
            _kept_bytes = 0
        _kept[path] = (version, value)
        _kept_bytes += len(data)
    return value


def _where(exc: ValueError) -> str:
    """Why a file is not JSON, with the line and column where the parser gave up."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    return f"not valid JSON: {exc}"


def marker(run_dir: str) -> str:
    """ "done", "failed" or "missing": what the point's folder says of its last run."""
    if os.path.exists(os.path.join(run_dir, "SUCCESS")):
        return "done"
    return "failed" if os.path.exists(os.path.join(run_dir, "FAILURE")) else "missing"
