"""Three things the Python API took where it should have refused them in one line: a negative
timeout (it waited not at all, then raised `TimeoutError: after -1s, jobs [31] still not
finished`), a misspelt keyword of `herd.jobs()` (Python's bare "unexpected keyword
argument"), and `job.edit(name="")` (the name quietly cleared, where the CLI refuses `edit
--name ''` and `clear=["name"]` is the way to unset it). Real daemon, 4 fake GPUs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import InvalidValue


@pytest.fixture
def api(shared_daemon: Herd) -> gpuherd.Herd:
    return gpuherd.connect(shared_daemon.home, start=False)


@pytest.mark.parametrize(("timeout", "name"), [(-1, "minus1"), (-0.5, "half"), (math.nan, "nan")])
def test_a_negative_timeout_is_refused_at_once(
    api: gpuherd.Herd, shared_work: Path, timeout: float, name: str
) -> None:
    job = api.submit("true", gpus=0, hold=True, cwd=shared_work)
    sweep = api.sweep("echo {x}", {"x": [1]}, name=name, gpus=0, cwd=shared_work)
    said = rf"^timeout must be 0 or more seconds \(None waits for ever\), got {timeout!r}$"
    for wait in (
        lambda: job.result(timeout=timeout),
        lambda: job.wait(timeout),
        lambda: api.wait([job], timeout=timeout),
        lambda: sweep.wait(timeout=timeout),
    ):
        with pytest.raises(ValueError, match=said):
            wait()
    assert job.state() == "held"


def test_a_wait_of_no_time_is_no_mistake(api: gpuherd.Herd, shared_work: Path) -> None:
    job = api.submit("true", gpus=0, hold=True, cwd=shared_work)
    with (
        pytest.warns(gpuherd.WaitWarning, match=f"job {job.id} is held"),
        pytest.raises(
            TimeoutError, match=rf"^after 0s, 1 of 1 job still unfinished \(job {job.id}\)$"
        ),
    ):
        job.wait(0)


def test_a_misspelt_keyword_of_jobs_names_the_closest(api: gpuherd.Herd) -> None:
    with pytest.raises(TypeError) as refused:
        api.jobs(sttate="failed")  # type: ignore[arg-type]
    assert str(refused.value) == (
        "jobs() takes no keyword 'sttate' (did you mean 'state'?); it takes: all, limit, name,"
        " project, since, state, sweep, until"
    )


@pytest.mark.parametrize("key", ["name", "project"])
def test_an_empty_name_or_project_is_refused_and_clear_unsets_it(
    api: gpuherd.Herd, shared_work: Path, key: str
) -> None:
    job = api.submit("true", gpus=0, hold=True, cwd=shared_work, **{key: "kept"})
    with pytest.raises(
        InvalidValue, match=rf'^{key} is empty: give a {key}, or clear=\["{key}"\] to unset it$'
    ):
        job.edit(**{key: ""})
    assert job.info()[key] == "kept"
    job.edit(clear=[key])
    assert job.info()[key] is None
