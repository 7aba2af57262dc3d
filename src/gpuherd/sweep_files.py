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

import errno
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpuherd.core.sweep import Point
from gpuherd.core.units import format_size
from gpuherd.errors import Forbidden
from gpuherd.jobfiles import open_job_file
from gpuherd.json_parse import NotJson, NotText, PastParser, parse_json

PARAMS_FILE = "params.json"
METRICS_FILE = "metrics.json"
PREVIOUS_DIR = "previous-runs"
"""Where a point's earlier runs are, one numbered folder each (sweep_folders.move_previous_run)."""
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
    value = parse_json(data)
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


def marker(run_dir: str) -> str:
    """ "done", "failed" or "missing": what the point's folder says of its last run."""
    if os.path.exists(os.path.join(run_dir, "SUCCESS")):
        return "done"
    return "failed" if os.path.exists(os.path.join(run_dir, "FAILURE")) else "missing"


def moved_run(run_dir: str) -> str | None:
    """The newest previous-runs/<n>/ of a point's folder that holds no run of its own (no
    marker, which the caller has looked for, nor job.json), else None: the point's last run,
    which a submission moved there, its job cancelled or removed before it started (`--force`,
    then `kill`). The point is judged by it, as before that submission: it was said `missing`
    (once its jobs were cleaned), and its next submission ran it again however it had ended.
    Two lookups where there is no previous-runs/, as for most points."""
    previous = os.path.join(run_dir, PREVIOUS_DIR)
    if not os.path.isdir(previous) or os.path.lexists(os.path.join(run_dir, "job.json")):
        return None
    try:
        numbers = [int(n) for n in os.listdir(previous) if n.isascii() and n.isdigit()]
    except OSError:
        return None
    return os.path.join(previous, str(max(numbers))) if numbers else None


def points_there(points: Sequence[Point]) -> list[Point]:
    """Those of `points` whose folder may exist, by one listing of each folder they are in (a
    sweep's results folder, most often the only one), for a look into each point's folder: a
    resubmission's (its markers: sweep_plan, which passes the listing on to its look for runs
    herd.db does not know: unknown_ended.ended_runs) and the table's of the points no job ran
    (sweep_table): a look per point cost a failed lookup for each new one (40,000 new points:
    80,000 for the markers alone). A name listed is kept, link or not, as what is read in it
    is read through it. A folder that cannot be listed (searchable, not readable) keeps all
    its points: their files may be opened all the same."""
    by_parent: dict[str, list[tuple[str, Point]]] = {}
    for point in points:
        # (Not os.path.split: 5 times as long, the most of this for 40,000 points.)
        parent, sep, name = point.run_dir.rpartition("/")
        by_parent.setdefault(parent or sep or ".", []).append((name, point))
    there = []
    for parent, named in by_parent.items():
        try:
            names = set(os.listdir(parent))
        except (FileNotFoundError, NotADirectoryError):
            continue  # (none of them there)
        except OSError:
            names = None
        there += [point for name, point in named if names is None or name in names]
    return there


def read_metrics(run_dir: str) -> dict[str, Any]:
    """`metrics`: what the point's metrics.json holds (empty when it is missing: a program
    need write none); and `metrics_error` when it was not read: one line, what is wrong with
    the file and what to write instead (`sweep status` prints the first)."""
    path = os.path.join(run_dir, METRICS_FILE)
    try:
        found = os.lstat(path)
    except OSError:
        return {"metrics": {}}
    if error := _unread(path, found):
        return {"metrics": {}, "metrics_error": f"{path}: {error}"}
    try:
        data = load_json(path, found)
    except FileNotFoundError:  # removed since its lstat: as missing
        return {"metrics": {}}
    except (NotText, PastParser) as exc:  # (each says what to write instead)
        return {"metrics": {}, "metrics_error": f"{path}: {exc}"}
    except NotJson as exc:  # most often cut off: its job killed while writing it, or writing
        advice = _WRITE_WHOLE if exc.cut_off else _WRITE_OBJECT
        return {"metrics": {}, "metrics_error": f"{path}: {exc}; {advice}"}
    except OSError as exc:
        return {"metrics": {}, "metrics_error": f"{path}: {_cannot_read(exc)}"}
    except Forbidden:  # a plain file at its lstat, something else at its open
        error = f"replaced while read (by a link, a folder?); {_WRITE_OBJECT}"
        return {"metrics": {}, "metrics_error": f"{path}: {error}"}
    except ValueError:  # grown over the cap since its lstat
        return {"metrics": {}, "metrics_error": f"{path}: {too_large(JSON_MAX_BYTES + 1)}"}
    if not isinstance(data, dict):
        error = f"valid JSON, but {_kind(data)}, not an object; {_WRITE_OBJECT}"
        return {"metrics": {}, "metrics_error": f"{path}: {error}"}
    # Values as the job wrote them (a true stays true, a list a list): the renderers show
    # what is not a number or text as JSON text (metric_text).
    return {"metrics": {str(k): v for k, v in data.items()}}


_WRITE_OBJECT = 'write one JSON object in it, {"name": value, ...}'
_WRITE_WHOLE = "write it whole: to a temporary file, then rename that to metrics.json"


def _unread(path: str, found: os.stat_result) -> str | None:
    """Why the file `found` is not read (before its text is), or None."""
    if stat.S_ISLNK(found.st_mode):  # a job could point the daemon at any file of its user's
        return "a symbolic link, which the daemon does not follow; write a plain metrics.json"
    if stat.S_ISDIR(found.st_mode):
        return f"a folder, not a file; remove it and {_WRITE_OBJECT}"
    if not stat.S_ISREG(found.st_mode):
        return f"not a plain file (a pipe, a device?); remove it and {_WRITE_OBJECT}"
    if found.st_size > JSON_MAX_BYTES:
        return too_large(found.st_size)
    if found.st_size == 0:  # (json's "Expecting value: line 1 column 1" said nothing of it)
        return f"empty (cut off, or still being written?); {_WRITE_WHOLE}"
    return None


def _cannot_read(exc: OSError) -> str:
    """An open or read that failed, without Python's "[Errno 13] ... 'path'" around it."""
    why = exc.strerror or str(exc)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"cannot be read ({why}); make it readable by the daemon's user (chmod a+r)"
    return f"cannot be read ({why}); check the disk it is on, then run gpuherd sweep status again"


def too_large(size: int) -> str:
    """Why a file of `size` bytes is not read, its size and the cap in numbers that differ:
    a file a byte over 1 MiB was said "1.0 MiB, more than the 1.0 MiB read"."""
    cap = format_size(JSON_MAX_BYTES)
    shown = format_size(size)
    if shown == cap:
        shown, cap = f"{size:,} bytes", f"{JSON_MAX_BYTES:,}-byte ({cap})"
    return f"{shown}, over the {cap} limit; keep final values in it, curves in a file of their own"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "text" if isinstance(value, str) else "a list"
