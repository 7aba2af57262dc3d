"""The HTTP API's refusals where a client was told less than the CLI and the Python API tell
(a bug hunt of docs/api.md), over the Unix socket of a real daemon (2 fake GPUs, its queue
paused): a listing's filter that picks no job, an unknown key of a sweep's spec, an edit's
value no job can have (422, as a submission's), and `only_gpus` sent as text."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

import gpuherd
from conftest import Herd, paused_with_a_held_job
from gpuherd.core.sweep_spec import SweepSpec, spec_to_dict
from gpuherd.errors import Conflict, InvalidValue


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with paused_with_a_held_job(tmp_path_factory) as herd:
        yield herd


def send(herd: Herd, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """The status and JSON answer of a request to /api/v1`path`."""
    sent = None if body is None else json.dumps(body)
    status, _, answer = herd.request(method, "/api/v1" + path, sent)
    return status, json.loads(answer)


# ---- F1: a listing's filter that picks no job ----------------------------------------------

EMPTY_FILTERS = [  # each was a 200 and an empty list, as if no job were of that project
    ("project=", "project (--project) is empty: give a project, or leave it out"),
    (
        "sweep=",
        "sweep (--sweep) is empty: give a sweep's name (gpuherd sweep ls lists them), or "
        "leave it out",
    ),
    (
        "name=",
        "name (--name) is empty: give a name or a pattern like 'resnet-*', or leave it out",
    ),
    (
        "name=%20%20",
        "name (--name) '  ' is only white space: give a name or a pattern like 'resnet-*', "
        "or leave it out",
    ),
]


@pytest.mark.parametrize(("query", "says"), EMPTY_FILTERS)
@pytest.mark.parametrize("more", ["", "&all=true&ids_only=true"])
def test_an_empty_text_filter_is_refused_not_matched(
    herd: Herd, query: str, says: str, more: str
) -> None:
    assert send(herd, "GET", f"/jobs?{query}{more}") == (422, {"error": says})


def test_a_filter_that_names_no_such_project_still_lists_nothing(herd: Herd) -> None:
    """Only a filter that names nothing is refused: one that matches no job is an answer."""
    status, answer = send(herd, "GET", "/jobs?project=nope&all=true&ids_only=true")
    assert (status, answer["ids"]) == (200, [])


def test_a_window_no_job_can_be_in_is_refused_as_ls_refuses_it(herd: Herd) -> None:
    """A future `since` listed every job not finished; `since` after `until` an empty list."""
    status, answer = send(herd, "GET", f"/jobs?since={time.time() + 86400}&all=true")
    assert status == 422
    assert answer["error"].startswith("since ")
    assert answer["error"].endswith(
        " is in the future: give a past moment (2d: 2 days ago, yesterday, 23:30: the last 23:30)"
    )
    status, answer = send(herd, "GET", "/jobs?since=1500000000&until=1000000000")
    assert status == 422
    assert " is after until " in answer["error"]
    assert answer["error"].endswith(": give the earlier moment to since")
    # A window that can hold a job is taken: the held job of the fixture is in it.
    status, answer = send(herd, "GET", f"/jobs?since={time.time() - 3600}&ids_only=true")
    assert status == 200
    assert 1 in answer["ids"]


def test_the_cli_and_python_refuse_a_blank_filter_in_their_own_names(herd: Herd) -> None:
    """Each refuses a blank name itself, as it refuses '', in the daemon's words with its own
    name for the filter (they passed it on, and the daemon's `name (--name)` came back)."""
    said = "' ' is only white space: give a name or a pattern like 'resnet-*', or "
    refused = herd.cli("ls", "--name", " ", check=False)
    assert (refused.returncode, refused.stderr.splitlines()) == (
        2,
        [f"gpuherd: error: --name {said}leave --name out (see gpuherd ls --help)"],
    )
    with pytest.raises(
        InvalidValue, match=f"^{re.escape(f'name {said}None for jobs of any name')}$"
    ):
        gpuherd.connect(home=herd.home, start=False).jobs(name=" ")


# ---- F2: a sweep spec's unknown key --------------------------------------------------------

KNOWN = ", ".join(spec_to_dict(SweepSpec(name="x")))


def test_a_sweep_specs_unknown_key_is_told_the_keys_and_the_closest(herd: Herd) -> None:
    """It said `invalid sweep: spec: unknown key 'grid'` alone: `grid` is the sweep file's."""
    spec = {"command": "echo {a}", "grid": {"a": [1, 2]}, "name": "api1"}
    status, answer = send(herd, "POST", "/sweeps", {"spec": spec, "cwd": "/tmp"})
    said = f"invalid sweep: spec: unknown key 'grid' (did you mean 'grids'?); known keys: {KNOWN}"
    assert (status, answer) == (422, {"error": said})
    status, answer = send(herd, "GET", "/sweeps")
    assert (status, answer["sweeps"]) == (200, [])  # nothing was submitted


def test_openapi_lists_the_keys_of_a_sweeps_spec(herd: Herd) -> None:
    """It said `"type": "object"` alone; the keys are those spec_from_dict takes."""
    schema = json.loads(herd.request("GET", "/openapi.json")[2])
    spec = schema["components"]["schemas"]["SweepRequest"]["properties"]["spec"]
    assert ", ".join(spec["properties"]) == KNOWN
    assert (spec["required"], spec["additionalProperties"]) == (["name"], False)


# ---- F3: an edit's value no job can have: 422, as a submission's ---------------------------


def test_an_edits_value_no_job_can_have_carries_422_as_a_submissions(herd: Herd) -> None:
    job = herd.submit("--hold", "--", "true")
    status, answer = send(herd, "POST", "/jobs/edit", {"ids": [job], "gpus": 3})
    assert status == 200
    [result] = answer["results"]
    assert (result["ok"], result["status"]) == (False, 422)  # was 409, a state's conflict
    assert result["message"].startswith(f"job {job} would never run: asks for 3 GPUs")
    status, answer = send(
        herd, "POST", "/jobs", {"jobs": [{"command": "x", "cwd": "/", "gpus": 3}]}
    )
    assert status == 422  # the same value, submitted
    status, answer = send(herd, "POST", "/jobs/edit", {"ids": [job], "after": [job]})
    assert answer["results"] == [
        {
            "id": job,
            "ok": False,
            "message": f"job {job} cannot wait for itself: name other jobs",
            "status": 422,
        }
    ]


def test_a_cycle_stays_a_conflict_with_the_queue(herd: Herd) -> None:
    """Two jobs that would wait for each other: the queue's state, not the value, is at fault."""
    first = herd.submit("--hold", "--", "true")
    second = herd.submit("--hold", "--after", str(first), "--", "true")
    _, answer = send(herd, "POST", "/jobs/edit", {"ids": [first], "after": [second]})
    [result] = answer["results"]
    assert (result["ok"], result["status"]) == (False, 409)
    assert "already waits for it" in result["message"]


def test_python_edit_raises_what_submit_raises_for_a_gpu_count(herd: Herd) -> None:
    api = gpuherd.connect(home=herd.home, start=False)
    job = api.submit("true", gpus=0, hold=True)
    with pytest.raises(InvalidValue, match="can never run: asks for 3 GPUs"):
        api.submit("true", gpus=3, hold=True)
    with pytest.raises(InvalidValue, match="would never run: asks for 3 GPUs") as raised:
        job.edit(gpus=3)
    assert not isinstance(raised.value, Conflict)  # it was a Conflict
    with pytest.raises(InvalidValue, match="cannot wait for itself"):
        job.edit(after=job)
    assert job.info()["gpus_requested"] == 0


# ---- F5: only_gpus sent as text ------------------------------------------------------------

GPU_LIST = (
    "give GPU indices in a JSON list, like [0], [0, 1, 2, 3] or [0, 2] (--only-gpus 0, 0-3 or 0,2)"
)
JOB = {"command": "true", "cwd": "/tmp"}


@pytest.mark.parametrize(
    ("sent", "says"),
    [
        ("", f"no GPU given: {GPU_LIST}"),  # was `Input should be a valid list`
        (" ", f"no GPU given: {GPU_LIST}"),
        ("0,1", '"0,1" is text: give GPU indices in a JSON list, [0, 1]'),
        ("gpu0", f'"gpu0" is text: {GPU_LIST}'),
    ],
)
def test_only_gpus_as_text_is_told_what_to_send(herd: Herd, sent: str, says: str) -> None:
    before = send(herd, "GET", "/jobs?all=true&ids_only=true")
    status, answer = send(herd, "POST", "/jobs", {"jobs": [{**JOB, "only_gpus": sent}]})
    said = f"invalid request: jobs.0.only_gpus (--only-gpus): {says}"
    assert (status, answer) == (422, {"error": said})
    status, answer = send(herd, "POST", "/jobs/edit", {"ids": [1], "only_gpus": sent})
    assert (status, answer) == (422, {"error": f"invalid request: only_gpus (--only-gpus): {says}"})
    assert send(herd, "GET", "/jobs?all=true&ids_only=true") == before
