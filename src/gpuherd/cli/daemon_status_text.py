"""`gpuherd daemon status`' lines, from the daemon's answer (GET /daemon)."""

from __future__ import annotations

import time
from typing import Any

from gpuherd.core.idspec import format_ids, listed_ids
from gpuherd.core.units import format_duration, plural
from gpuherd.typed_name import typed_name


def status_lines(status: dict[str, Any]) -> list[str]:
    counts = ", ".join(f"{n:,} {state}" for state, n in sorted(status["counts"].items())) or "empty"
    mode, running = status.get("stopping"), status.get("running_jobs") or 0
    queue = "paused" if status["queue_paused"] else "dispatching"
    if mode is not None:
        queue = "draining" if mode == "drain" else "stopping"
    lines = [
        f"running: pid {status['pid']}, version {status['version']}",
        f"up: {format_duration(max(status['uptime'], 0.1))}",
        f"home: {status['home']}",
        f"socket: {status['socket']}",
        f"gpus: {listed_ids(status['gpus']) or 'none'} ({status['probe']})" + _gpus_apart(status),
        f"queue: {queue}; jobs: {counts}",
    ]
    if failing := status.get("scheduler_failing"):  # (absent from an older daemon)
        lines.append(failing)
    if replaced := status.get("database_replaced"):  # (absent from an older daemon)
        lines.append(f"warning: {replaced}")
    lines += [_unknown_run(run) for run in status.get("unknown_runs") or ()]  # (as above)
    jobs = plural(running, "running job")
    if mode == "drain":
        lines.append(
            f"draining: the daemon stops once {jobs} {'ends' if running == 1 else 'end'}; "
            f"nothing new starts (queued jobs start after the next `{typed_name()} daemon start`)"
        )
    elif mode == "kill":
        lines.append(f"stopping: killing {jobs}")
    return lines


def _unknown_run(run: dict[str, Any]) -> str:
    """`unknown to herd.db: job 2 attempt 1 (pid 4242) runs unwatched since 2026-12-06
    03:39:29 in …/jobs/2/attempt-1; GPU 1 is held for it until it ends`: a run a restored (or
    moved aside) herd.db does not know, whose GPUs no job gets meanwhile."""
    since = run.get("started_at")
    when = f" since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}" if since else ""
    gpus = run["gpus"]
    return (
        f"unknown to herd.db: job {run['job_id']} attempt {run['attempt']} (pid {run['pid']}) "
        f"runs unwatched{when} in {run['folder']}; "
        + (f"{_gpus(gpus, 'is', 'are')} held for it until it ends" if gpus else "no GPU held")
    )


def _gpus_apart(status: dict[str, Any]) -> str:
    """`; draining: 1; lost: 2 (...)`: GPUs nothing new starts on, and configured ones the
    probe does not see now (docs/gpus.md); "" for none, or from an older daemon."""
    draining, missing = status.get("draining"), status.get("missing")
    said = f"; draining: {format_ids(draining)}" if draining else ""
    if missing:
        said += f"; lost: {format_ids(missing)} (configured but not seen by the probe now)"
    return said


def start_notes(status: dict[str, Any]) -> list[str]:
    """What `daemon start` says after its first line, of the GPU changes a start keeps or
    undoes. A drain outlives a start with other GPUs (--fake-gpus 3), which drops the rest
    of what `gpuherd gpus` changed: said, so a GPU drained long ago is not a surprise. So is
    a GPU removed (`gpuherd gpus remove`) that the start keeps out (a start as the last one,
    with its options or none), or that its other --gpus or --fake-gpus use again."""
    notes = []
    if str(status.get("probe", "")).startswith("static: "):  # (--gpus, NVML not there)
        gpus = str(status["probe"]).removeprefix("static: ")
        notes.append(
            f"NVML could not be used (no NVIDIA driver here?): GPUs {gpus} are taken as named, "
            "unchecked, and none of their memory or use is seen; on a machine without GPUs, "
            f"--fake-gpus {len(status.get('gpus') or ()) or 4} tries gpuherd as if it had them"
        )
    if back := status.get("gpus_back"):  # (absent from an older daemon)
        notes.append(
            f"{_gpus(back, 'was', 'were')} removed (gpuherd gpus remove) before this start, "
            f"whose GPUs name {_it(back)}: in use again; `gpuherd gpus remove "
            f"{format_ids(back)}` takes {_it(back)} out again"
        )
    if removed := status.get("removed"):
        notes.append(
            f"{_gpus(removed, 'is', 'are')} removed, as before this start: `gpuherd gpus add "
            f"{removed[0]}` uses {'it' if len(removed) == 1 else 'one'} again"
        )
    if drained := status.get("draining"):
        notes.append(
            f"{_gpus(drained, 'is', 'are')} draining, as before this start: `gpuherd gpus "
            f"enable {format_ids(drained)}` uses {_it(drained)} again"
        )
    return notes


def _gpus(indices: list[int], one: str, several: str) -> str:
    if len(indices) == 1:
        return f"GPU {indices[0]} {one}"
    return f"GPUs {format_ids(indices)} {several}"


def _it(indices: list[int]) -> str:
    return "it" if len(indices) == 1 else "them"
