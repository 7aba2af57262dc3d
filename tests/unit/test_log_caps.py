"""--max-log-size's pure core (core/log_caps.py), its outcome in the job life (core/lifecycle),
and the engine's look at the logs (log_cap_watch.LogCapWatch.check), on files of a tmp folder."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuherd.core.lifecycle import Ended, after_attempt, classify
from gpuherd.core.log_caps import log_too_large, over_cap, parse_log_cap, show_log_cap
from gpuherd.core.model import Job, JobSpec
from gpuherd.core.states import JobState, OutcomeKind
from gpuherd.log_cap_watch import LogCapWatch, log_sizes, recorded_bases

MiB = 2**20


def test_a_log_may_reach_its_cap_not_pass_it() -> None:
    sizes = [("stdout", 2 * MiB), ("stderr", 2 * MiB + 1)]
    assert over_cap(sizes, 2 * MiB) == [("stderr", 2 * MiB + 1)]
    assert over_cap(sizes, 3 * MiB) == []


def test_the_reason_names_the_log_its_size_and_the_cap() -> None:
    assert log_too_large([("stdout", 10 * 2**30 + 1)], 10 * 2**30) == (
        "its stdout log reached 10.0 GiB, over --max-log-size 10 GiB (stopped)"
    )
    assert log_too_large([("stdout", 3 * MiB), ("stderr", 5 * MiB)], 2 * MiB) == (
        "its stdout log reached 3.0 MiB and its stderr log 5.0 MiB, "
        "over --max-log-size 2 MiB (stopped)"
    )
    # Its logs moved or emptied since the stop: the cap is still said.
    assert log_too_large([], 2 * MiB) == "a log grew over --max-log-size 2 MiB (stopped)"


@pytest.mark.parametrize(
    ("typed", "cap"), [("10G", 10 * 2**30), ("500MiB", 500 * MiB), ("1.5GiB", 3 * 2**29)]
)
def test_sizes_are_read_as_the_rest_of_gpuherd_reads_them(typed: str, cap: int) -> None:
    assert parse_log_cap(typed) == cap
    assert parse_log_cap(show_log_cap(cap)) == cap  # `config get` shows what `set` takes


def test_none_is_no_cap_and_mistakes_say_what_to_give() -> None:
    assert parse_log_cap(" None ") is None
    assert show_log_cap(None) == "none"
    for typed in ("10", "x", "-1G", "0", "9" * 30 + "TiB"):
        with pytest.raises(ValueError, match=r"; or none \(no cap\)$"):
            parse_log_cap(typed)


def test_it_ends_as_a_stop_and_is_retried_as_a_timeout_is() -> None:
    ended = Ended(exit_code=None, signal=15, stop_reason=OutcomeKind.LOG_TOO_LARGE)
    outcome = classify(ended)
    assert (outcome.kind, outcome.signal) == (OutcomeKind.LOG_TOO_LARGE, 15)
    job = Job(1, JobSpec("true", "/", retries=1, max_log_size=MiB), JobState.RUNNING, attempt=1)
    assert after_attempt(job, ended, outcome).state is JobState.QUEUED
    last = Job(1, job.spec, JobState.RUNNING, attempt=2)
    assert after_attempt(last, ended, outcome).state is JobState.FAILED


def _live(job_id: int, logs: list[Path], cap: int | None, **state: Any) -> Any:
    named = tuple(zip(("stdout", "stderr"), logs, strict=False))
    # (pid 0: no process holds its logs, read by their paths alone)
    fields = {"stop_reason": None, "paused": False, "log_bases": {}, "pid": 0, **state}
    return SimpleNamespace(job_id=job_id, max_log_size=cap, logs=named, **fields)


def test_the_look_stops_only_running_jobs_over_their_cap(tmp_path: Path) -> None:
    big, small = tmp_path / "big.log", tmp_path / "small.log"
    big.write_bytes(b"x" * (MiB + 1))
    small.write_bytes(b"x" * MiB)
    live = {
        1: _live(1, [small, big], MiB),  # its stderr is over
        2: _live(2, [small, small], MiB),  # at its cap
        3: _live(3, [big], None),  # no cap
        4: _live(4, [big], MiB, stop_reason=OutcomeKind.TIMEOUT),  # stopping already
        5: _live(5, [big], MiB, paused=True),  # writes nothing while paused
        6: _live(6, [tmp_path / "none-yet.log"], MiB),
        7: _live(7, [big], MiB, log_bases={"stdout": 1}),  # wrote its cap, no more
    }
    stopped: list[int] = []
    assert LogCapWatch(live, stopped.append).check() == [1]
    assert stopped == [1]
    assert log_sizes(live[6].logs) == []


def test_a_log_that_held_earlier_attempts_output_counts_what_this_one_wrote() -> None:
    sizes = [("output", 5 * MiB)]
    assert over_cap(sizes, 2 * MiB, {"output": 3 * MiB}) == []
    assert over_cap(sizes, 2 * MiB, {"output": 3 * MiB - 1}) == sizes
    assert log_too_large(sizes, 2 * MiB, {"output": 2 * MiB}) == (
        "its output log grew 3.0 MiB in this attempt (to 5.0 MiB), "
        "over --max-log-size 2 MiB (stopped)"
    )


@pytest.mark.parametrize(
    ("info", "bases"),
    [
        ({"log_bases": {"output": 7}}, {"output": 7}),
        (None, {}),  # no record (the daemon died in the attempt's first second)
        ({"pid": 3}, {}),
        ({"log_bases": [7]}, {}),
        ({"log_bases": {"stdout": "7", "stderr": True}}, {}),
    ],
)
def test_a_re_attached_attempt_takes_the_bases_its_start_record_kept(
    info: dict[str, Any] | None, bases: dict[str, int]
) -> None:
    assert recorded_bases(info) == bases


def test_a_stop_that_cannot_be_stored_leaves_no_other_job_running(tmp_path: Path) -> None:
    """A full disk fails every store: the look still stops each job over its cap."""
    big = tmp_path / "big.log"
    big.write_bytes(b"x" * (MiB + 1))
    live = {job_id: _live(job_id, [big], MiB) for job_id in (1, 2)}
    tried: list[int] = []

    def stop(job_id: int) -> None:
        tried.append(job_id)
        raise OSError(28, "No space left on device")

    assert LogCapWatch(live, stop).check() == [1, 2]
    assert tried == [1, 2]
