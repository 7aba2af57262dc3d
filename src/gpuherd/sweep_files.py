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

from gpuherd.core.units import format_size
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


class NotText(NotJson):
    """A file that is not UTF-8 text (nor UTF-16 or 32, which JSON may be in): binary data,
    or text in another encoding."""


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
    if len(data) > JSON_MAX_BYTES:  # (grown since its lstat: read_metrics says the size)
        raise ValueError(f"grown over the {format_size(JSON_MAX_BYTES)} read while read")
    try:
        value = json.loads(data)
    except UnicodeDecodeError as exc:
        # Python's own words named the codec it guessed ("'utf-16-le' codec can't decode
        # bytes in position 4-5"), which the file was never meant to be in.
        raise NotText(f"not UTF-8 text (at byte {exc.start:,}): write it as UTF-8 JSON") from None
    except ValueError as exc:  # JSONDecodeError
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


def read_metrics(run_dir: str) -> dict[str, Any]:
    """`metrics`: what the point's metrics.json holds (empty when it is missing); and
    `metrics_error`, why it was not read, when it was not."""
    path = os.path.join(run_dir, METRICS_FILE)
    try:
        found = os.lstat(path)
    except OSError:
        return {"metrics": {}}
    if stat.S_ISLNK(found.st_mode):
        return {"metrics": {}, "metrics_error": f"{path}: a symbolic link, not read"}
    if found.st_size > JSON_MAX_BYTES:
        return {"metrics": {}, "metrics_error": f"{path}: {too_large(found.st_size)}"}
    try:
        data = load_json(path, found)
    except NotText as exc:
        return {"metrics": {}, "metrics_error": f"{path}: {exc}"}
    except NotJson as exc:  # most often a job cut off while writing it, or writing it now
        return {"metrics": {}, "metrics_error": f"{path}: {exc} (cut off mid-write?)"}
    except (OSError, ValueError, Forbidden) as exc:
        return {"metrics": {}, "metrics_error": f"{path}: not read ({exc})"}
    if not isinstance(data, dict):
        error = f'{path}: valid JSON, but {_kind(data)}, not an object ({{"name": value, ...}})'
        return {"metrics": {}, "metrics_error": error}
    # Values as the job wrote them (a true stays true, a list a list): the renderers show
    # what is not a number or text as JSON text (metric_text).
    return {"metrics": {str(k): v for k, v in data.items()}}


def too_large(size: int) -> str:
    """Why a file of `size` bytes is not read, its size and the cap in numbers that differ:
    a file a byte over 1 MiB was said "1.0 MiB, more than the 1.0 MiB read"."""
    cap = format_size(JSON_MAX_BYTES)
    shown = format_size(size)
    if shown == cap:
        shown, cap = f"{size:,} bytes", f"{JSON_MAX_BYTES:,}-byte ({cap})"
    return f"{shown}, over the {cap} read: not read (keep curves in a file of their own)"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "text" if isinstance(value, str) else "a list"
