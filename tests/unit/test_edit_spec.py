"""core.edit: which fields an edit may touch, the spec it makes, and how its event reads."""

from __future__ import annotations

import pytest

from gpuherd.core.edit import check_edit, describe_edit, edit_spec
from gpuherd.core.model import JobSpec

SPEC = JobSpec(command="python train.py", cwd="/w", gpus=1, mem=10 * 2**30, timeout=3600.0)


@pytest.mark.parametrize(
    ("changes", "clear", "message"),
    [
        ({"cwd": "/x"}, [], "cwd cannot be edited: edit one of command, name, gpus"),
        ({}, ["gpus"], "gpus cannot be cleared: clear one of name, only_gpus, mem, ram"),
        ({"mem": 1}, ["mem"], "mem is both set and cleared: give one"),
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
