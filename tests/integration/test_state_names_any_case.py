"""A state's name is taken in any case by every way in, as `ls --state RUNNING` takes it: the
HTTP API's `?state=` and the Python API's `jobs(state=...)` refused `HELD` and `Held`."""

from __future__ import annotations

import pytest

from conftest import Herd
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.pyapi import connect


def test_the_http_and_python_apis_take_a_state_in_any_case(shared_daemon: Herd) -> None:
    herd = shared_daemon
    held = herd.submit("--hold", "--gpus", "0", "--", "true")
    api = connect(herd.home, start=False)
    for name in ("held", "HELD", "Held"):
        listed = herd.client.get("/jobs", state=[name], all="true")["jobs"]
        assert held in [job["id"] for job in listed], name
        assert held in [job.id for job in api.jobs(state=name)], name
        assert held in [job.id for job in api.jobs(state=[name, "QUEUED"])], name
    assert [job["id"] for job in herd.json("ls", "--state", "HELD")] == [held]  # as the CLI


def test_an_unknown_state_still_names_the_valid_ones(shared_daemon: Herd) -> None:
    api = connect(shared_daemon.home, start=False)
    with pytest.raises(InvalidValue, match=r"^unknown state 'HELDD': use one of queued, held, "):
        api.jobs(state="HELDD")
    with pytest.raises(HerdError, match=r"^unknown state 'Bogus': use one of queued, held, "):
        shared_daemon.client.get("/jobs", state=["Bogus"])
