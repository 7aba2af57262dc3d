"""Detail views for people (`show`), and what the job tables share: states' styles, INFO,
run time (`ls`'s table is ls_table.py).

Every table is plain text (cli/plain.py: its columns, cuts and no trailing blanks, one
place); only `--watch` (of `gpus` and `ls`) imports rich, to redraw a table in place
(watching.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from gpuherd.cli import plain
from gpuherd.core.idspec import format_ids
from gpuherd.core.log_caps import cap_said
from gpuherd.core.log_names import chosen_file
from gpuherd.core.run_time import run_time_text
from gpuherd.core.text import visible
from gpuherd.core.units import format_duration, format_given, format_size, plural
from gpuherd.core.when import format_moment

STATE_STYLE = {
    "running": "green",
    "paused": "yellow",
    "queued": "cyan",
    "held": "magenta",
    "succeeded": "green",
    "failed": "red",
    "killed": "red",
    "lost": "red",
    "cancelled": "dim",
}


def id_ranges(ids: Sequence[int]) -> str:
    return format_ids(list(ids))


def runtime(job: dict[str, Any], now: float | None = None, paused_too: bool = False) -> str:
    return run_time_text(job, now or time.time(), paused_too)


def info(job: dict[str, Any]) -> str:
    """The one phrase that says why a job is where it is."""
    if job["state"] in ("queued", "held") or job.get("reason"):
        return _local_moment(job, str(job.get("reason") or ""))
    if job.get("outcome") and job["state"] not in ("running", "paused"):
        outcome = job["outcome"]
        if outcome == "exit":
            return f"exit {job['exit_code']}"
        if outcome == "signal":
            return f"signal {job['signal']}"
        return str(outcome)
    return ""


_MOMENTS = (("held", "held until ", "begin"), ("queued", "retrying at ", "retry_at"))
"""The reasons that name a moment (state, its words before it, the field that holds it)."""


def _local_moment(job: dict[str, Any], reason: str) -> str:
    """`reason` with the moment it names (`held until 02:00 (--begin)`, `retrying at 14:05
    (--retry-delay 30m)`) in this shell's time zone: the daemon wrote it in its own (a
    systemd one: UTC), which said 01:00 of a `--begin 02:00` given in Berlin. The moment
    itself comes with the job (`begin`, `retry_at`); the rest of the words stay the
    daemon's."""
    for state, words, key in _MOMENTS:
        at = job.get(key)
        if job["state"] == state and at and reason.startswith(words):
            _, sep, rest = reason[len(words) :].partition(" (")
            return f"{words}{format_moment(at, time.time())}{sep}{rest}"
    return reason


def _retries(job: dict[str, Any]) -> str:
    """The retries a job may have: --retries, and with --oom-retry the out-of-memory ones
    (at least OOM_RETRIES, each with more --mem), which `retries allowed: 0` hid."""
    allowed = f"retries allowed: {job['retries']}"
    left = job.get("retries_left")  # (None: ended, or from an older daemon)
    if left is not None and left != job["retries"]:  # some used: counted from the last retry
        allowed += f", {left} left"  # by hand, which gives them anew
    if not job.get("oom_retries"):
        return allowed
    return f"{allowed}; after out of memory: {job['oom_retries']}, with more --mem"


def _attempt(job: dict[str, Any]) -> str:
    """`3 (retries allowed: 2)`; of a job waiting to run again (a retry, automatic or by
    hand), the attempt to come, and when a --retry-delay lets it: `2 next, in 45s (...)`."""
    number = job["attempt"]
    if not number:  # (it said `attempt  0`, as if a run numbered 0 had been)
        waiting = job["state"] in ("queued", "held")
        return f"{'not run yet' if waiting else 'none: it never ran'} ({_retries(job)})"
    if job["state"] not in ("queued", "held") or job["started_at"]:
        return f"{number} ({_retries(job)})"  # (started_at: a held run's, not a wait)
    left = (job.get("retry_at") or 0) - time.time()
    when = f", in {format_duration(left)}" if left > 0 else ""
    return f"{number + 1} next{when} ({_retries(job)})"


def _ended(attempt: dict[str, Any]) -> str:
    """`, ended 06:02:03` (the date too, on another day than its start): an attempt's end,
    the only place it is shown once the job runs again, or waits to."""
    end, start = attempt.get("ended_at"), attempt.get("started_at")
    if not end:
        return ""
    same_day = start and _when(start)[:10] == _when(end)[:10]
    return f", ended {_when(end)[11:] if same_day else _when(end)}"


def _limits(job: dict[str, Any]) -> list[tuple[str, str]]:
    """The rows of the times a job was given, as they were typed (`edit` changes them)."""
    rows = []
    if job.get("begin"):
        rows.append(("begins", _when(job["begin"]) + " (--begin: held until then)"))
    if job.get("timeout"):
        rows.append(("timeout", format_given(job["timeout"]) + _stops_at(job.get("timeout_at"))))
    if job.get("max_log_size"):
        rows.append(("max log size", f"{cap_said(job['max_log_size'])} (stdout, stderr each)"))
    if job.get("retry_delay"):
        rows.append(("retry delay", format_given(job["retry_delay"])))
    if job.get("no_output_timeout"):
        then = "killed" if job.get("kill_on_no_output") else "flagged stalled"
        rows.append(("no output", f"{format_given(job['no_output_timeout'])}, then {then}"))
    if job.get("grace") is not None:  # (from an older daemon: none)
        rows.append(("grace", f"{format_given(job['grace'])} (SIGTERM, then SIGKILL)"))
    return rows


def _stops_at(due: float | None) -> str:
    """When a running job's --timeout stops it (`timeout_at`, from the daemon): ` (stops at
    2026-11-30 14:05:00, in 1h12m)`; one past it is being stopped. "" without one."""
    if due is None:
        return ""
    left = due - time.time()
    if left <= 0:
        return f" (due at {_when(due)}: stopping)"
    return f" (stops at {_when(due)}, in {format_duration(left)})"


def job_detail(job: dict[str, Any], term: plain.Terminal | None = None) -> None:
    term = term or plain.Terminal()
    rows = [
        ("job", f"{job['id']}" + (f" ({job['name']})" if job["name"] else "")),
        ("state", _state_line(job)),
        ("command", job["command"]),
        ("cwd", job["cwd"]),
        ("gpus", _gpus_line(job)),
        ("requested", requested_text(job)),
        ("priority", str(job["priority"])),
        ("project", job["project"] or "-"),
        ("sweep", job.get("sweep") or "-"),
        ("git", job.get("git") or "-"),
        ("pid", str(job["pid"] or "-")),
        # A waiting job's host, start and end were its last run's (a retry's wait): none.
        ("host", job["attempts"][-1]["host"] if job.get("attempts") and job["started_at"] else "-"),
        ("attempt", _attempt(job)),
        ("created", _when(job["created_at"])),
        ("started", _when(job["started_at"])),
        ("ended", _when(job["ended_at"])),
        ("run time", runtime(job, paused_too=True) or "-"),
        ("folder", job["job_dir"]),
        *_output_files(job),
    ]
    if job.get("message"):
        rows.insert(2, ("message", job["message"]))
    if job.get("after"):
        rows.append(("after", id_ranges(job["after"])))
    if job.get("after_any"):
        rows.append(("after any end of", id_ranges(job["after_any"])))
    if job.get("after_fail"):
        rows.append(("after a failure of", id_ranges(job["after_fail"])))
    rows += _limits(job)
    for key, value in job.get("env_overrides", {}).items():
        rows.append(("env", f"{key}={value}"))
    width = max(len(k) for k, _ in rows)
    lines = []
    for key, value in rows:  # a multi-line command keeps its lines, aligned under the first
        first, *more = value.split("\n")
        lines.append(f"{term.style(f'{key:<{width}}', 'bold')}  {plain.clean(first)}")
        lines += [" " * (width + 2) + plain.clean(line) for line in more]
    attempts = job.get("attempts", [])
    usage = [_host_usage(a, job.get("ram")) for a in attempts]
    # An attempt that ran has its host usage line (measured or not): one alone is shown too.
    if len(attempts) > 1 or any(a.get("peak_mem") for a in attempts) or any(usage):
        lines.append(term.style("attempts", "bold"))
        for a, used in zip(attempts, usage, strict=True):
            outcome = info({**a, "state": "ended"}) or _unended(job)
            # None recorded (a CPU-only job): said by its rows above, not as `on GPU -`.
            gpus = f" on GPU {','.join(str(g) for g in a['gpus'])}" if a["gpus"] else ""
            mem = _memory(a.get("mem"), a.get("peak_mem"), a.get("over_mem", False))
            lines.append(
                f"  {a['number']}: {plain.clean(outcome)}{gpus}, pid {a['pid']}, "
                f"started {_when(a['started_at'])}{_ended(a)}"
                + (f", GPU memory: {mem}" if mem else "")
            )
            indent = " " * len(f"  {a['number']}: ")
            if used:
                lines.append(indent + used)
            # Under its line: an edit between attempts can change where the output goes.
            files = _file_rows(chosen_file(a, "stdout"), chosen_file(a, "stderr"))
            lines += [f"{indent}{key}  {plain.clean(path)}" for key, path in files]
    lines += _history(job.get("events", []), term)
    if job.get("stderr_tail") and job["state"] not in ("succeeded", "running", "queued"):
        lines.append(term.style("last lines of stderr", "bold"))
        # As `gpuherd run`'s failure tail: a NUL as ^@, not a blank that hides it.
        lines += ["  " + visible(line) for line in job["stderr_tail"]]
    term.write(lines)


def _output_files(job: dict[str, Any]) -> list[tuple[str, str]]:
    """The files of the user's choosing its output goes to (--output, --error), if any."""
    files = job.get("log_files", {})
    out = files["stdout"] if job.get("output") else None
    return _file_rows(out, files["stderr"] if job.get("output") or job.get("error") else None)


def _file_rows(stdout: str | None, stderr: str | None) -> list[tuple[str, str]]:
    """`stdout FILE`, `stderr FILE (with stdout)`: the rows naming the files of the user's
    choosing (None: a stream in its folder's own log, not named)."""
    rows = [("stdout", stdout)] if stdout else []
    if stderr:
        rows.append(("stderr", stderr + (" (with stdout)" if stderr == stdout else "")))
    return rows


_GONE = {
    ("lost", "running"): "lost: the probe no longer sees it; the job runs on, but its work there"
    " may fail",
    ("lost", "paused"): "lost: the probe no longer sees it; the job stays paused there, and its"
    " work there may fail once resumed",
    ("removed", "running"): "removed (gpuherd gpus remove): the job finishes there, nothing new"
    " starts there",
    ("removed", "paused"): "removed (gpuherd gpus remove): the job, paused, finishes there once"
    " resumed; nothing new starts there",
    ("unconfigured", "running"): "not configured (not among the GPUs the daemon started with):"
    " the job finishes there, nothing new starts there",
    ("unconfigured", "paused"): "not configured (not among the GPUs the daemon started with):"
    " the job, paused, finishes there once resumed; nothing new starts there",
}
"""What `show` says of a running (or paused: it does not run on) job's GPU that is lost,
removed, or not among the GPUs of a later start (`gpus_gone`)."""


def _gpus_line(job: dict[str, Any]) -> str:
    """`1,2`; a GPU lost or removed while the job runs, said: `1 (GPU 1 lost: ...)`."""
    said = ",".join(str(g) for g in job["gpus"]) or "-"
    now = _unended(job)
    # (a state a newer daemon says, unknown here, is said by its name: an older CLI of a
    # daemon that added `unconfigured` failed with a KeyError)
    gone = [
        f"GPU {g['index']} {_GONE.get((g['state'], now), g['state'])}"
        for g in job.get("gpus_gone", [])
    ]
    return said + (f" ({'; '.join(gone)})" if gone else "")


def _state_line(job: dict[str, Any]) -> str:
    """`failed — exit 1`; the detail only where it adds something (not `killed — killed`)."""
    state, detail = str(job["state"]), info(job)
    return state + (f" — {detail}" if detail and detail != state else "")


def _unended(job: dict[str, Any]) -> str:
    """What an attempt that has not ended does: runs, or is paused with its job."""
    return "paused" if job["state"] == "paused" else "running"


HISTORY_SHOWN = 20
"""The newest events `show` lists (a job retried many times has hundreds; --json has all)."""


def _history(events: list[dict[str, Any]], term: plain.Terminal) -> list[str]:
    """One line per change of the job: when, what, the state it moved to, the detail."""
    if not events:
        return []
    lines = [term.style("history", "bold")]
    if len(events) > HISTORY_SHOWN:
        lines.append(f"  … {plural(len(events) - HISTORY_SHOWN, 'earlier event')} (--json)")
    width = max(len(e["event"]) for e in events[-HISTORY_SHOWN:])
    for e in events[-HISTORY_SHOWN:]:
        moved = f"-> {e['to_state']}" if e["to_state"] and e["to_state"] != e["from_state"] else ""
        text = "  ".join(part for part in (moved, plain.clean(e["detail"] or "")) if part)
        lines.append(f"  {_when(e['at'])}  {e['event']:<{width}}  {text}".rstrip())
    return lines


def _memory(mem: int | None, peak: int | None, over: bool) -> str:
    parts = []
    if mem:
        parts.append(f"asked {format_size(mem)}")
    if peak:
        parts.append(f"peak {format_size(peak)}")
    return ", ".join(parts) + (" (more than declared)" if over else "")


def _host_usage(attempt: dict[str, Any], ram: int | None) -> str:
    """`host memory: asked 16.0 GiB, peak 3.1 GiB; CPU 2m13s` of an ended attempt: its
    largest process's resident memory and its processes' CPU time; "not measured" where the
    daemon did not wait for its shell itself (re-attached, on Ray, or begun before) or a
    signal killed that shell (executors/local_records.reap). "": one running, or one that
    never started (nothing ran to measure)."""
    if not attempt.get("ended_at") or attempt.get("outcome") == "spawn_error":
        return ""
    peak, cpu = attempt.get("peak_rss"), attempt.get("cpu_time")
    if cpu is None:
        return "host memory, CPU: not measured"
    if peak is None:  # (measured, but no larger than the daemon's own: executors/local.py)
        memory = ", ".join(part for part in (_memory(ram, None, False), SMALL_PEAK) if part)
    else:
        memory = _memory(ram, peak, attempt.get("over_ram", False))
    return f"host memory: {memory}; CPU {format_duration(cpu)}"


SMALL_PEAK = "peak too small to measure"
"""An attempt's host memory peak no larger than what the daemon itself uses (docs/gpus.md)."""


def requested_text(job: dict[str, Any]) -> str:
    """What a job asks for, as `show` and the dashboard's job page say it."""
    text = plural(job["gpus_requested"], "GPU")
    if only := job.get("only_gpus"):  # (`1 GPU of GPU 2,3 only` read as a typo)
        listed = ",".join(map(str, only))
        text += f", GPU {listed} only" if len(only) == 1 else f", of GPUs {listed} only"
    if job.get("mem"):
        text += f", {format_size(job['mem'])} each"
    if job.get("exclusive"):
        text += ", exclusive"
    if job.get("ram"):
        text += f", {format_size(job['ram'])} host memory"
    mem = _memory(None, job.get("peak_mem"), job.get("over_mem", False))
    return text + (f"; {mem}" if mem else "")


def _when(ts: float | None) -> str:
    if not ts:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
