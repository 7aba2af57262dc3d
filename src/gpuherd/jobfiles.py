"""A job's folder on disk: what is in it (the job's environment, job.json, the outcome markers,
the logs); where it is, is layout.py's; the logs' text as shown, log_text.py's."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from gpuherd import attempt_folder
from gpuherd.attempt_folder import planted
from gpuherd.core.model import Attempt, HostUsage, Job, Outcome
from gpuherd.core.run_time import RAN_ITS_COURSE
from gpuherd.core.text import ascii_digits
from gpuherd.errors import Forbidden
from gpuherd.job_environment import HOOK_VARIABLE as HOOK_VARIABLE
from gpuherd.job_environment import KEY_VARIABLE as KEY_VARIABLE
from gpuherd.job_environment import RAY_NODE_VARIABLE as RAY_NODE_VARIABLE
from gpuherd.job_environment import job_env as job_env
from gpuherd.layout import Layout
from gpuherd.log_lines import start_of_last_lines as start_of_last_lines
from gpuherd.own_files import write_whole
from gpuherd.stop_signals import SIGTERM_NOTE

LOGS = ("stdout.log", "stderr.log")
MARKERS = ("SUCCESS", "FAILURE")


def prepare(folder: str | Path) -> None:
    """Create an attempt's folder, leaving no marker of an earlier run in it, nor the logs
    of one that began there (the job's shell appends: two runs' output in one log would
    mislead). An attempt that never started (its Ray node left) keeps the note it logged.
    A new attempt-N (N > 1) moves the job folder's metrics.json into attempt-(N-1). One found
    there that is not a folder of the user's (a planted link) is moved aside (attempt_folder)."""
    job_folder = os.path.dirname(folder)  # (a sweep point's, in a folder others can write)
    if os.path.basename(folder).startswith("attempt-") and (what := planted(job_folder)):
        attempt_folder.replace_planted(job_folder, what, folder)
        return
    try:
        os.mkdir(folder)
        _set_aside_metrics(str(folder))
    except FileNotFoundError:  # the daemon's jobs/<id>/attempt-1: the job's folder first
        parent = os.path.dirname(folder)
        try:
            os.mkdir(parent)  # one call; os.makedirs only when more is missing
        except FileNotFoundError:  # (never a daemon job's removed cwd: engine_spawns)
            os.makedirs(parent, exist_ok=True)
        except FileExistsError:
            pass
        os.mkdir(folder)
    except FileExistsError:  # a rerun into the same folder: clear what the last run left
        if what := attempt_folder.not_ours(folder):  # (a link planted in a shared folder)
            attempt_folder.replace_planted(folder, what)
            _set_aside_metrics(str(folder))
            return
        # A run began there if it left a marker, or the `process` file its start makes (a
        # `gpuherd run` killed outright left no marker, and its rerun appended to its logs).
        began = False
        for name in (*MARKERS, "process", "exit_status", "pid", SIGTERM_NOTE):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))
                began = began or name in (*MARKERS, "process")
        for name in LOGS:  # (a link: an --output's, or one planted, which `>>` would follow)
            with contextlib.suppress(FileNotFoundError):
                if began or os.path.islink(os.path.join(folder, name)):
                    os.unlink(os.path.join(folder, name))
        if not os.path.basename(folder).startswith("attempt-"):
            _remove_later_attempts(str(folder))


def _remove_later_attempts(job_folder: str) -> None:
    """`gpuherd run` starts a job's first attempt in the job's folder itself: there, the
    attempt-N folders are an earlier run's retries, and would be taken for this run's."""
    for entry in os.scandir(job_folder):
        number = entry.name.removeprefix("attempt-")
        numbered = ascii_digits(number)  # (not `attempt-²`: none of ours)
        if number != entry.name and numbered and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)


METRICS = "metrics.json"


def _set_aside_metrics(attempt_folder: str) -> None:
    """A retry (by `gpuherd retry` or --retries) must not show the metrics.json the attempt
    before it wrote in the job's folder (a sweep point's) as its own: move it into that
    attempt's folder, where it stays findable (beside its own, if it kept one there). Each
    attempt's start moves what was there, so what is there was the attempt before's."""
    parent, name = os.path.split(attempt_folder)
    number = name.removeprefix("attempt-")
    if not ascii_digits(number) or int(number) < 2:
        return
    before = os.path.join(parent, f"attempt-{int(number) - 1}")
    if os.path.islink(before) or not os.path.isdir(before):
        return  # `gpuherd run` runs attempt 1 in the job's folder itself: nothing to mix up
    target = os.path.join(before, METRICS)
    if os.path.lexists(target):
        target = os.path.join(before, "metrics.job.json")
    with contextlib.suppress(OSError):  # none there; or a folder it cannot write
        os.rename(os.path.join(parent, METRICS), target)


def start_info(job: Job, attempt: Attempt) -> dict[str, object]:
    """What job.json and attempt.json say of a started attempt (its pid once known)."""
    return {
        "id": job.id,
        "name": job.spec.name,
        "project": job.spec.project,
        "sweep": job.spec.sweep,
        "git": job.spec.git,
        "command": job.spec.command,
        "cwd": job.spec.cwd,
        "env_overrides": dict(job.spec.env_overrides),
        "attempt": attempt.number,
        "gpus": list(attempt.gpus),
        "gpu_uuids": list(attempt.gpu_uuids),
        "host": attempt.host,
        "pid": attempt.pid,
        "started_at": attempt.started_at,
    }


def record_start(attempt_dir: Path, job_dir: Path, info: Mapping[str, object]) -> None:
    """Write attempt.json in the attempt's folder and job.json (the latest attempt) beside it."""
    _write_copies(_info_files(str(attempt_dir), str(job_dir)), info)


def clear_job_marker(job_dir: str | Path) -> None:
    """Remove the job folder's SUCCESS or FAILURE as an attempt above the first starts: it is
    the attempt before's, and a script or a sweep's resume reading it would take the running
    retry for that end. (A first attempt's job folder holds none: prepare, sweep_folders.)"""
    for name in MARKERS:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(job_dir, name))


def unrecord_start(attempt_dir: str, job_dir: str, before: str | None) -> None:
    """Undo what an attempt's start wrote (record_start, clear_job_marker), once it is found
    not to have started after all (a Ray actor that could not be created): the folders as a
    launch that failed at once leaves them. Its attempt.json goes (the folder would count as
    a run's: attempt_numbers.ran_there), and job.json and the marker are again the attempt
    before's (`before`: its folder; None: no attempt before, no job.json)."""
    earlier = None if before is None else _info_files(before, job_dir)[0]
    record = None if earlier is None else _read_info(earlier)  # (read before it may go)
    for path in _info_files(attempt_dir, job_dir):
        with contextlib.suppress(OSError):
            os.unlink(path)
    job_file = os.path.join(job_dir, "job.json")
    if earlier is not None and record is not None and not _link(earlier, job_file):
        _write_info(job_file, record)  # (`gpuherd run`'s attempt 1: job.json)
    if before is not None:
        restore_job_marker(before, job_dir)


def restore_job_marker(before: str | Path, job_dir: str | Path) -> None:
    """Put back what clear_job_marker took (an attempt that did not start after all), from
    the attempt before's folder `before` (not the job's: `gpuherd run`'s never gets here)."""
    for name in MARKERS if os.fspath(before) != os.fspath(job_dir) else ():
        if _link(os.path.join(before, name), os.path.join(job_dir, name)):
            return


def record_end(
    layout: Layout,
    job: Job,
    outcome: Outcome,
    ended_at: float,
    started: Mapping[str, object],
    latest: bool = True,
    usage: HostUsage | None = None,
    requeued: bool = False,
) -> OSError | None:
    """Write attempt.json and job.json with the attempt's start (`started`: start_info) and
    end (`usage` null where not measured; `requeued` by a `retry` of it running); mark both
    folders SUCCESS or FAILURE; not `latest` (its next attempt began), the job's neither.
    The first failure to write them (a full disk, the folder gone): the daemon's record is
    herd.db, but a `gpuherd run`'s is these files, which `--skip-succeeded` reads."""
    end = {
        "ended_at": ended_at,
        "outcome": outcome.kind.value,
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "message": outcome.message,
        "peak_rss": usage.peak_rss if usage else None,
        "cpu_time": usage.cpu_time if usage else None,
        "requeued": requeued,  # (as a restored herd.db learns it: engine_recovery.py)
    }
    folder, job_folder = str(layout.attempt_dir(job, job.attempt)), str(layout.job_dir(job))
    # (job.json last; `gpuherd run`'s attempt 1 runs in the job's folder: not latest, no file)
    failed = None
    if files := _info_files(folder, job_folder)[: None if latest else -1]:
        failed = _write_copies(files, {**started, **end})
    marker, other = MARKERS if outcome.success else MARKERS[::-1]
    first = None
    targets = (folder, job_folder) if latest else () if folder == job_folder else (folder,)
    for target in dict.fromkeys(targets):
        try:
            os.unlink(os.path.join(target, other))  # never both markers in one folder
        except FileNotFoundError:
            pass
        except OSError as exc:
            failed = failed or exc  # the folder may be gone or read-only
            continue
        path = os.path.join(target, marker)
        if first is None or not _link(first, path):
            failed = failed or _touch(path)
        first = path
    return failed


def record_commit(
    attempt_dir: str, job_dir: str, job_id: int, attempt: int, git: str
) -> OSError | None:
    """Put `git`, a commit that came once the job had ended, in the job.json (and
    attempt.json) its end wrote without one. Nothing when job.json is not that record (gone
    with its folder: `clean`; a next attempt's; one with a commit); the error when it could
    not be written (a full disk: the files stay as they were)."""
    files = _info_files(attempt_dir, job_dir)
    info = _read_info(files[-1])
    if info is None or [info.get(k) for k in ("id", "attempt", "git")] != [job_id, attempt, None]:
        return None
    return _write_copies(files, {**info, "git": git})


def earlier_run_times(folder: Path) -> dict[str, float]:
    """How long each command ran, from the job.json files of the job folders in `folder` (an
    earlier `gpuherd run`'s output, or the daemon's jobs folder), its longest run if several."""
    times: dict[str, float] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                with open_job_file(os.path.join(entry.path, "job.json")) as f:
                    info = json.loads(f.read())
                command, seconds = info["command"], info["ended_at"] - info["started_at"]
                measured = info.get("outcome", "exit") in RAN_ITS_COURSE  # (not killed, lost)
            except (OSError, ValueError, KeyError, TypeError, Forbidden):
                continue  # not a job folder, or a job that has not ended
            if measured and isinstance(command, str) and isinstance(seconds, float | int):
                times[command] = max(float(seconds), times.get(command, 0.0))
    return times


def attempt_info(folder: str) -> dict[str, Any] | None:
    """What an attempt folder's attempt.json says; None: none there (a start stopped within
    its first second left none), unreadable, or not a JSON object."""
    return _read_info(os.path.join(folder, "attempt.json"))


def _read_info(path: str) -> dict[str, Any] | None:
    try:
        with open_job_file(path) as f:
            info = json.loads(f.read(1 << 20))
    except (OSError, ValueError, Forbidden):
        return None
    return info if isinstance(info, dict) else None


def _info_files(attempt_folder: str, job_folder: str) -> list[str]:
    """The attempt's attempt.json (none when it runs in the job's folder), then job.json."""
    own = [] if attempt_folder == job_folder else [os.path.join(attempt_folder, "attempt.json")]
    return [*own, os.path.join(job_folder, "job.json")]


def open_job_file(path: str | Path) -> BinaryIO:
    """Open a file of a job's folder (a log, metrics.json, `process`) for reading, refusing
    anything but a plain file in its place.

    A job can write to its own folder: a link planted there must not make the daemon (which
    serves logs and metrics over its API and dashboard) read any file it can read, such as
    /etc/shadow; and a named pipe must not leave the daemon waiting for ever for a writer.
    """
    folder = os.path.dirname(path)
    if os.path.islink(folder):  # the attempt's folder, swapped for a link by the job
        raise Forbidden(f"{folder} is a symbolic link, not the attempt's folder: not served")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Forbidden(f"{path} is a symbolic link, not the job's file: not served") from None
        if exc.errno == errno.ENOTDIR:  # a file where its folder would be: no file there either
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path)) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Forbidden(f"{path} is not a plain file: not served")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _json_text(data: Mapping[str, object]) -> str:
    """One key per line: readable, and made by json's C encoder (indent= falls back to the
    pure-Python one, which costs more than the file write). Lists break lines too."""
    return "{\n  " + json.dumps(data, separators=(",\n  ", ": "))[1:-1] + "\n}\n"


_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
"""Never through a link a job planted in its own folder; a named pipe planted there fails at
once (ENXIO) instead of holding the daemon until someone reads it."""


def _write_copies(paths: list[str], info: Mapping[str, object]) -> OSError | None:
    """Write `info` to the first path and make the others hard links to it: the same content
    without another file to create (creating files is the slow part on some file systems).
    The first failure, if any."""
    failed = _write_info(paths[0], info)
    for path in paths[1:]:
        tmp = path + ".tmp"
        if _link(paths[0], tmp):
            try:
                os.replace(tmp, path)
                continue
            except OSError:
                pass
        failed = failed or _write_info(path, info)
    return failed


def _link(source: str, target: str) -> bool:
    try:
        os.unlink(target)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        return False
    return True


def _touch(path: str) -> OSError | None:
    try:
        os.close(os.open(path, _WRITE_FLAGS, 0o644))
    except OSError as exc:
        return exc
    return None


def _write_info(path: str, info: Mapping[str, object]) -> OSError | None:
    """Write a job.json or attempt.json. One that records --env values is its user's alone
    (0600): they may be secrets (API keys), and the job's folder may be one others can read
    (a sweep's results, `gpuherd run --output-dir`); the others are made as the umask says."""
    return _write_text(path, _json_text(info), 0o600 if info.get("env_overrides") else 0o644)


def _write_text(path: str, text: str, mode: int) -> OSError | None:
    """Replace a file at once (readers never see half of it); the error, if it could not
    (the file before stays as it was)."""
    tmp = path + ".tmp"
    try:
        fd = os.open(tmp, _WRITE_FLAGS | os.O_TRUNC, mode)
        try:
            if mode == 0o600:  # (a .tmp left by a crash keeps its mode through O_TRUNC)
                os.fchmod(fd, mode)
            write_whole(fd, text.encode())
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # (a full disk's part of it: the file before stays as it was)
        return exc
    return None
