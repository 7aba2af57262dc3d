"""Values of the wrong kind given to a sweep from Python and over HTTP, refused as such in one
line: `sweep.status(sort=5)` was "cannot sort by '5'" (an InvalidValue, as a misspelt
column), `state=5` Python's bare "'int' object is not iterable"; a request's `"item_sep": 1`
was taken for the character '1'. Real daemon, 4 fake GPUs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect
from gpuherd.pyapi_types import WrongType

SORT = "sort is a column's name as text ('-val_acc': descending; None: the points' order)"
STATE = (
    "state is a state's name or a list of them ('failed', ['failed', 'missing']; (): every point)"
)


CASES = [
    ({"sort": 5}, f"{SORT}, got 5 (int)"),
    ({"sort": ["-a"]}, f"{SORT}, got ['-a'] (list)"),
    ({"state": 5}, f"{STATE}, got 5 (int)"),
    ({"state": [5]}, f"{STATE}, got [5] (list)"),
    ({"state": b"failed"}, f"{STATE}, got b'failed' (bytes)"),
]


def test_status_s_sort_and_state_of_another_kind_are_wrong_types(
    shared_daemon: Herd, shared_work: Path
) -> None:
    api = connect(shared_daemon.home, start=False)
    sweep = api.sweep("echo {a}", {"a": [1, 2]}, name="kinds", gpus=0, cwd=shared_work)
    for given, said in CASES:
        for call in (sweep.status, sweep.results):
            with pytest.raises(WrongType) as refused:
                call(**given)
            assert str(refused.value) == said
    # What they take goes on working: a name alone, a tuple of names, a column.
    sweep.wait(timeout=30)
    assert [row["params"]["a"] for row in sweep.results("-a", state="succeeded")] == [2, 1]
    assert len(sweep.results(state=("succeeded", "failed"))) == 2


def test_a_request_s_separator_of_another_kind_is_refused_by_its_name(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    spec = {"name": "seps", "command": "echo {x}", "grids": [{"x": [1]}], "item_sep": 1}
    with pytest.raises(InvalidValue) as refused:  # 422, as its other bad values
        herd.client.post("/sweeps", {"spec": spec, "cwd": str(work), "options": {"gpus": 0}})
    assert str(refused.value) == "invalid sweep: item_sep: must be a string, got a number"
    body = {"spec": {**spec, "item_sep": None, "kv_sep": None}, "cwd": str(work)}
    answer = herd.client.post("/sweeps", {**body, "options": {"gpus": 0}, "dry_run": True})
    assert answer["points"] == 1  # null: the default, as results_dir's (was refused as 'None')
