"""What a job's page shows (dashboard.py serves it): its facts, the tails of the attempt's logs
the page starts from (its stream goes on from there: dashboard_streams.py), the last lines of a
failure, and a sweep point's metrics."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from gpuherd import log_text
from gpuherd.api import log_cursor
from gpuherd.api.jobs import missing_log
from gpuherd.core.idspec import format_ids
from gpuherd.core.int64 import holds
from gpuherd.core.log_names import chosen_file
from gpuherd.core.run_time import ran_for
from gpuherd.core.states import OutcomeKind
from gpuherd.core.text import drop_escapes
from gpuherd.errors import Forbidden
from gpuherd.service import Service
from gpuherd.service_jobs import no_job
from gpuherd.sweep_files import read_metrics
from gpuherd.sweep_folders import own_run

_WHOLE_NUMBER = re.compile(r"-?[0-9]+")
"""An attempt asked for by number (ASCII digits: int() takes other scripts' digits too)."""

LOG_TAIL_BYTES = 64 * 1024
FAILURE_LINES, FAILURE_LINE_CHARS = 6, 500
"""A failed attempt's stderr lines at the top of its page, a longer line shown by its end: a
line of 7 KB (an exception's message with a batch in it) filled the screen there."""


def log_tail(path: Path, most: int = LOG_TAIL_BYTES) -> tuple[str, int, bool]:
    """The end of a log as (text, size in bytes, cut): the page starts; the stream goes on.
    Its first line, begun before, as `gpuherd show` shows it (log_text): a redrawn line's
    last drawing, else its end after `…`. Raises FileNotFoundError (no log) and Forbidden (no
    plain file: `--output /dev/null`, a folder in its place), which _log_start says."""
    data, size, begun = log_text.read_end(path, most)
    cut = log_cursor.escapes_complete(data[: log_text.utf8_complete(data)])
    if data[:cut].endswith(b"\r"):
        # Left for the stream to send: a line being redrawn (a progress bar) is overwritten
        # by what comes next, which the page must know (the text shown has no \r left).
        cut -= 1
    text = drop_escapes(data[:cut].decode(errors="replace"))
    return log_text.as_a_terminal_shows(text, begun), size - (len(data) - cut), size > most


def job_view(service: Service, job_id: int, asked: str, with_logs: bool = True) -> dict[str, Any]:
    """The page of job `job_id` at attempt `asked` (the query's `attempt`, '' for the latest);
    `with_logs`: with its logs' tails (the page's), not for its head alone."""
    if not holds(job_id):  # SQLite refuses to look it up: the page said "no such page"
        raise no_job(job_id)
    job = service.show(job_id)
    asked = asked.strip()
    try:  # (a negative number is a number too: `no attempt -1`, as `no attempt 0`, unquoted)
        wanted = int(asked) if _WHOLE_NUMBER.fullmatch(asked) else None
    except ValueError:  # more digits than Python converts
        wanted = None
    number = wanted if wanted and 1 <= wanted <= job["attempt"] else job["attempt"]
    # An attempt the job does not have (a link kept from another job, a URL typed), or no
    # number at all (`?attempt=x`, shown silently as if asked for): the latest is shown, as
    # a page past the last points to the last, and the page says so.
    missing = None
    if wanted is None and asked:
        missing = _no_such_attempt(job, asked)
    elif wanted is not None and wanted != number:
        missing = _no_such_attempt(job, wanted)
    logs: dict[str, dict[str, Any]] = {}
    for stream in ("stdout", "stderr"):
        if number and with_logs:
            text, offset, cut, note = _log_start(service, job_id, stream, number)
        else:
            text, offset, cut, note = "", 0, False, None
        file = _chosen_file(job, stream, number)
        logs[stream] = {"text": text, "offset": offset, "cut": cut, "note": note, "file": file}
    return {
        "job": job,
        "number": number,
        "logs": logs,
        "failure": _failure(service, job, number),
        "job_dir": job["job_dir"],
        "missing": missing,
        "empty_log": _empty_log(job, number),
        "running_for": _running_for(job),
        "metrics": point_metrics(job),
    }


def _log_start(
    service: Service, job_id: int, stream: str, number: int
) -> tuple[str, int, bool, str | None]:
    """Attempt `number`'s `stream` as its page starts it: log_tail's (text, offset, cut), and
    why it has nothing to show, as `gpuherd log` says it (None: empty, or yet to come). A log
    gone or no plain file showed `(empty)` by a download link that answered 404 or 403."""
    path = service.log_path(job_id, stream, number)
    try:
        text, offset, cut = log_tail(path)
    except FileNotFoundError:  # gone, or not written yet (a running job's: no note)
        error = missing_log(service, job_id, stream, number, path)
        return "", 0, False, str(error) if error else None
    except Forbidden as refused:  # `--output /dev/null` said as such, else why not served
        return "", 0, False, service.no_log(job_id, stream, number) or str(refused)
    return text, offset, cut, None  # (a plain file there, empty or not: nothing to explain)


def _running_for(job: dict[str, Any]) -> float | None:
    """Seconds a running job has run (its pauses left out) as its page is drawn, from which
    logs.js counts on: the page's head is drawn again only when the job changes, and its
    run time stood still. None for a job not running (its time does not grow)."""
    times = ran_for(job, time.time()) if job["state"] == "running" else None
    return round(times[0], 1) if times else None


def point_metrics(job: dict[str, Any]) -> dict[str, Any]:
    """A sweep point's metrics, as its row on the sweep's page has them (sweep_files'
    read_metrics of its folder), of this job's own run: a later run of the point has the
    folder now, and this one's files are in previous-runs/<n>/ (sweep_folders.own_run).
    {} for a job of no sweep, or not run yet."""
    if not job.get("sweep") or not job["attempt"]:
        return {}
    found: dict[str, Any] = read_metrics(str(own_run(Path(job["job_dir"]), job["id"])))
    return dict(found["metrics"])


def _empty_log(job: dict[str, Any], number: int) -> str:
    """What attempt `number`'s log box says while it is empty (an empty black box said
    nothing): the job not started, the attempt going on, or over with nothing written."""
    ran = next((a for a in job["attempts"] if a["number"] == number), None)
    if ran is None:
        return "nothing yet: the job has not started"
    return "(empty)" if ran["ended_at"] else "nothing yet"


def _failure(service: Service, job: dict[str, Any], number: int) -> str:
    """The last lines of attempt `number`'s stderr if it failed ('' if not, or if it wrote
    none), which its page shows at the top: below the facts, at 700 px, they were two screens
    down. An attempt stopped on request (kill) is no failure to explain. Read as `gpuherd
    show` reads its tail (a last line of 7 KB, longer than the 4 KiB read here, left none)."""
    ran = next((a for a in job["attempts"] if a["number"] == number), None)
    if ran is None or not ran["ended_at"] or ran["outcome"] == OutcomeKind.KILLED:
        return ""
    if ran["outcome"] == OutcomeKind.EXIT and ran["exit_code"] == 0:
        return ""
    path = service.log_path(job["id"], "stderr", number)
    lines = log_text.tail_lines(path, FAILURE_LINES, FAILURE_LINE_CHARS)
    return drop_escapes("\n".join(lines))


def _chosen_file(job: dict[str, Any], stream: str, number: int) -> str | None:
    """The file of the user's choosing (--output, --error) that attempt `number`'s `stream`
    went to, named above its log as `show` names it (the log box alone did not say where the
    output is); before the first start, where the first one's will go. None: in its folder."""
    ran = next((a for a in job["attempts"] if a["number"] == number), None)
    if ran is None:  # (not begun: the job's files as they are now)
        chosen = job["output"] if stream == "stdout" else job["error"] or job["output"]
        return job["log_files"][stream] if chosen else None
    return chosen_file(ran, stream)


def _no_such_attempt(job: dict[str, Any], wanted: int | str) -> str:
    """`job 3 has no attempt 99: it has attempts 1-2, showing attempt 2`; for a `wanted`
    that is no number, `job 3 has no attempt 'x': ...`."""
    if isinstance(wanted, str):
        wanted = repr(wanted[:40])  # (a URL typed: its text, cut; bidi shown: job.html)
    numbers = [int(a["number"]) for a in job["attempts"]]
    if not numbers:
        return f"job {job['id']} has no attempt {wanted}: it has not started yet"
    has = f"attempt {numbers[0]}" if len(numbers) == 1 else f"attempts {format_ids(numbers)}"
    return (
        f"job {job['id']} has no attempt {wanted}: it has {has}, showing attempt {job['attempt']}"
    )
