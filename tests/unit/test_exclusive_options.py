"""`--exclusive` from every way in to the JobSpec: the CLI's submit, run and sweep declare it
alike, the daemon's submission check takes and refuses it, the Python API passes it, and
`edit` changes it."""

from __future__ import annotations

import pytest
from test_cli_options import commands, option, shape

from gpuherd.client import Client
from gpuherd.core.edit import check_edit, describe_edit, edit_spec
from gpuherd.core.model import JobSpec
from gpuherd.errors import HerdError
from gpuherd.pyapi_values import submit_options
from gpuherd.submission import spec_from_item
from gpuherd.wire import SubmitItem
from gpuherd.wire_requests import EditRequest


def test_submit_run_and_sweep_take_exclusive_alike() -> None:
    declared = [option(command, "exclusive") for command in commands().values()]
    assert {shape(o) for o in declared} == {shape(declared[0])}
    assert declared[0].opts == ["--exclusive"] and declared[0].is_flag
    assert declared[0].default is False


def test_a_submitted_item_asks_for_its_gpus_to_itself() -> None:
    assert spec_from_item(SubmitItem(command="true", cwd="/", exclusive=True)).exclusive
    assert not spec_from_item(SubmitItem(command="true", cwd="/")).exclusive
    with pytest.raises(HerdError) as refused:
        spec_from_item(SubmitItem(command="true", cwd="/", gpus=0, exclusive=True))
    assert str(refused.value) == (
        "exclusive (--exclusive) with gpus 0 (--gpus 0): a CPU-only job gets no GPU to itself; "
        "drop one of them"
    )


class _NoJob:
    """No job handle is given here (`after` takes handles of this type)."""


def test_the_python_api_passes_exclusive_on() -> None:
    options = submit_options({"gpus": 2, "exclusive": True}, _NoJob, Client())
    assert options["exclusive"] is True
    item = SubmitItem(command="true", cwd="/", **options)
    assert spec_from_item(item).exclusive


def test_edit_turns_exclusive_on_and_off() -> None:
    request = EditRequest(ids=[3], exclusive=False)
    assert request.changes() == {"exclusive": False}
    check_edit({"exclusive": True}, [])
    spec = JobSpec("true", "/")
    on, fields = edit_spec(spec, {"exclusive": True}, [])
    assert on.exclusive and fields == ["exclusive"]
    assert describe_edit(spec, on, fields) == "exclusive no -> yes"
    off, fields = edit_spec(on, {"exclusive": False}, [])
    assert describe_edit(on, off, fields) == "exclusive yes -> no"
    assert edit_spec(on, {"exclusive": True}, [])[1] == []  # already so: unchanged


def test_a_misspelt_python_option_is_named_with_the_one_it_is_close_to() -> None:
    with pytest.raises(TypeError) as err:
        submit_options({"max_paralel": 2}, _NoJob, Client(), sweep=True)
    assert str(err.value).startswith(
        "unknown option 'max_paralel' (did you mean 'max_parallel'?); options: after,"
    )
    # submit() refuses max_parallel (a sweep's cap): its list of options does not name it.
    with pytest.raises(TypeError) as err:
        submit_options({"timout": 2}, _NoJob, Client())
    assert "max_parallel" not in str(err.value) and "timeout" in str(err.value)
    with pytest.raises(TypeError) as err:  # nothing close: no guess
        submit_options({"zzz": 2}, _NoJob, Client())
    assert str(err.value).startswith("unknown option 'zzz'; options: after,")
