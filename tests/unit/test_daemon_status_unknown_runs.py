"""`gpuherd daemon status`' lines of runs herd.db does not know (a restored backup), from the
daemon's answer: one line each, naming the run, its folder, its start where its folder
recorded one, and the GPUs held for it; nothing where none runs, or from an older daemon
(tests/reliability/test_restored_unknown_run_ids.py checks them with a real daemon)."""

from __future__ import annotations

from typing import Any

from gpuherd.cli.daemon_status_text import status_lines

STATUS: dict[str, Any] = {
    "pid": 4242,
    "version": "0.2.0",
    "uptime": 12.0,
    "home": "/h",
    "socket": "/h/run/herd.sock",
    "gpus": [0, 1, 2],
    "probe": "fake: 3 GPUs",
    "queue_paused": False,
    "counts": {"running": 1},
}


def run(**changes: Any) -> dict[str, Any]:
    said = {"job_id": 7, "attempt": 2, "pid": 900, "gpus": [1, 2]}
    return {**said, "folder": "/r/x=1/attempt-2", "started_at": None, **changes}


def test_each_run_is_a_line_and_none_says_nothing() -> None:
    plain = status_lines(STATUS)
    assert status_lines({**STATUS, "unknown_runs": []}) == plain  # (none: as an older daemon)
    lines = status_lines({**STATUS, "unknown_runs": [run(), run(job_id=8, gpus=[0])]})
    assert lines[: len(plain)] == plain
    assert lines[len(plain) :] == [
        "unknown to herd.db: job 7 attempt 2 (pid 900) runs unwatched in /r/x=1/attempt-2; "
        "GPUs 1-2 are held for it until it ends",
        "unknown to herd.db: job 8 attempt 2 (pid 900) runs unwatched in /r/x=1/attempt-2; "
        "GPU 0 is held for it until it ends",
    ]


def test_a_run_on_no_gpu_holds_none() -> None:
    (line,) = status_lines({**STATUS, "unknown_runs": [run(gpus=[])]})[-1:]
    assert line.endswith("runs unwatched in /r/x=1/attempt-2; no GPU held")
