"""core.edit: which fields an edit may touch, the spec it makes, and how its event reads."""

from __future__ import annotations

import pytest

from gpuherd.core.edit import begin_edit, check_edit, dependency_cycle, describe_edit, edit_spec
from gpuherd.core.model import JobSpec
from gpuherd.core.states import JobState

SPEC = JobSpec(command="python train.py", cwd="/w", gpus=1, mem=10 * 2**30, timeout=3600.0)


@pytest.mark.parametrize(
    ("changes", "clear", "message"),
    [
        ({"priority": 1}, [], "priority cannot be edited: edit one of command, name, gpus"),
        ({"begin": float("nan")}, [], r"^begin \(--begin\) must be a time"),
        ({}, ["gpus"], "gpus cannot be cleared: clear one of name, only_gpus, mem, ram"),
        ({"mem": 1}, ["mem"], "mem is both set and cleared: give one"),
        # Named as the HTTP API's field, the one its client sent: the CLI and the Python API
        # refuse it first, as `--env` and `env` (test_edit_max_log_size).
        ({"env_overrides": {"A": "1"}}, ["env_overrides"], "^env_overrides is both set and"),
        ({}, [], "nothing to change"),
    ],
)
def test_check_edit_names_what_is_wrong(
    changes: dict[str, object], clear: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        check_edit(changes, clear)


def test_edit_spec_sets_clears_and_reports_only_what_differs() -> None:
    edited, fields = edit_spec(SPEC, {"gpus": 2, "command": "  python train.py  "}, ["mem"])
    assert (edited.gpus, edited.mem, edited.command, edited.timeout) == (
        2,
        None,
        "python train.py",
        3600.0,
    )
    assert fields == ["gpus", "mem"]  # the command, once stripped, is the same
    assert edit_spec(SPEC, {"gpus": 1}, [])[1] == []
    assert edited.cwd == SPEC.cwd and edited.env == SPEC.env


def test_describe_edit_shows_sizes_durations_and_unset_values() -> None:
    edited, fields = edit_spec(SPEC, {"command": "true", "timeout": 90.0}, ["mem"])
    assert (
        describe_edit(SPEC, edited, fields) == "command, mem 10.0 GiB -> none, timeout 1h -> 1m30s"
    )


def test_only_gpus_are_edited_as_a_sorted_set_and_cleared_to_any() -> None:
    edited, fields = edit_spec(SPEC, {"only_gpus": [3, 1, 3]}, [])
    assert (edited.only_gpus, fields) == ((1, 3), ["only_gpus"])
    assert describe_edit(SPEC, edited, fields) == "only_gpus any -> 1,3"
    cleared, fields = edit_spec(edited, {}, ["only_gpus"])
    assert (cleared.only_gpus, fields) == ((), ["only_gpus"])
    assert describe_edit(edited, cleared, fields) == "only_gpus 1,3 -> any"


QUEUED, HELD = JobState.QUEUED, JobState.HELD
NOW = 1000.0


@pytest.mark.parametrize(
    ("state", "release_at", "begin", "wanted"),
    [
        (QUEUED, None, 2000.0, (HELD, 2000.0)),  # a time to come holds it until then
        (HELD, None, 2000.0, (HELD, 2000.0)),
        (HELD, 1500.0, 2000.0, (HELD, 2000.0)),
        (HELD, 2000.0, 2000.0, None),
        (QUEUED, None, 500.0, None),  # one past: queued, as it is
        (QUEUED, 1200.0, None, None),  # cleared: a queued job's release_at is a retry's wait
        (HELD, 1500.0, 500.0, (QUEUED, None)),  # past: released now
        (HELD, None, 500.0, (QUEUED, None)),
        (HELD, 1500.0, None, (QUEUED, None)),  # cleared: held until a time, queued now
        (HELD, None, None, None),  # held by `hold`: no time to clear
    ],
)
def test_begin_edit_holds_until_a_time_to_come_and_queues_otherwise(
    state: JobState,
    release_at: float | None,
    begin: float | None,
    wanted: tuple[JobState, float | None] | None,
) -> None:
    assert begin_edit(state, release_at, begin, NOW) == wanted


def test_after_and_after_any_are_stored_as_a_submission_stores_them() -> None:
    spec = JobSpec(command="true", cwd="/w", after=(2,), after_any=(3, 5))
    edited, fields = edit_spec(spec, {"after": [5, 4, 4]}, [])
    assert (edited.after, edited.after_any, fields) == ((4, 5), (3,), ["after", "after_any"])
    assert describe_edit(spec, edited, fields) == "after 2 -> 4-5, after_any 3,5 -> 3"
    cleared, fields = edit_spec(spec, {}, ["after_any"])
    assert (cleared.after, cleared.after_any, fields) == ((2,), (), ["after_any"])


def test_a_job_cannot_wait_for_itself_or_for_a_job_waiting_for_it() -> None:
    assert dependency_cycle(5, [3, 4], waiting_for_job={6, 7}) is None
    assert dependency_cycle(5, [7, 5], waiting_for_job={6, 7}) == 5
    assert dependency_cycle(5, [9, 7], waiting_for_job={6, 7}) == 7


def test_an_empty_name_or_project_is_none_as_a_submission_stores_it() -> None:
    named = JobSpec(command="true", cwd="/w", name="old", project="p")
    edited, fields = edit_spec(named, {"name": "", "project": ""}, [])
    assert (edited.name, edited.project, fields) == (None, None, ["name", "project"])
