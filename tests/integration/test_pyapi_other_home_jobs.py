"""A job handle of another home's daemon (another `gpuherd.connect(home=...)`) given where a
job is named, `after=`, `after_any=`, `after_fail=` (of submit, a sweep, `job.edit`) and
`job.move(before=, swap=)`, is refused in one line, as `wait()` refuses it: it was sent as its
bare id, so the job depended on (or moved next to) this daemon's job of that number, or was
told `no job N`. A handle of the same home named another way (a link) is taken. Two real
daemons (fake GPUs); every wait has a timeout."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import Herd, started_once
from gpuherd.client import Client
from gpuherd.pyapi import connect
from gpuherd.pyapi_types import WrongValue


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Herd, Herd]]:
    with (
        started_once(tmp_path_factory, "--fake-gpus", "1") as mine,
        started_once(tmp_path_factory, "--fake-gpus", "1") as theirs,
    ):
        yield mine, theirs


@pytest.fixture
def herds(homes: tuple[Herd, Herd]) -> tuple[gpuherd.Herd, gpuherd.Herd]:
    mine, theirs = homes
    return connect(home=mine.home, start=False), connect(home=theirs.home, start=False)


def refusal(herd: gpuherd.Herd, job: gpuherd.Job, key: str) -> str:
    """The line that refuses `job`, of another daemon, as `key` of a job of `herd`'s."""
    homes = f"{job.herd.client.home}, not of {herd.client.home}"
    return rf"^job {job.id} is of the daemon of {re.escape(homes)}: {key}= takes only jobs of "


def test_a_dependency_on_another_daemon_s_job_is_refused(
    herds: tuple[gpuherd.Herd, gpuherd.Herd],
) -> None:
    herd, other = herds
    own = herd.submit("true", gpus=0, hold=True)
    theirs = other.submit("true", gpus=0, hold=True)  # (its id is own's too: 1 in both homes)
    before = [job.id for job in herd.jobs(all=True)]
    given: list[dict[str, Any]] = [
        {"after": theirs},
        {"after_any": [own, theirs]},
        {"after_fail": (theirs,)},
    ]
    for options in given:
        key = next(iter(options))
        with pytest.raises(WrongValue, match=refusal(herd, theirs, key)):
            herd.submit("true", gpus=0, **options)
        with pytest.raises(WrongValue, match=refusal(herd, theirs, key)):
            herd.sweep("echo {x}", {"x": [1, 2]}, gpus=0, dry_run=True, **options)
        with pytest.raises(WrongValue, match=refusal(herd, theirs, key)):
            own.edit(**options)
    assert [job.id for job in herd.jobs(all=True)] == before  # nothing was submitted
    assert own.info()["after"] == [] and own.state() == "held"  # nor edited


def test_a_move_next_to_another_daemon_s_job_is_refused(
    herds: tuple[gpuherd.Herd, gpuherd.Herd],
) -> None:
    herd, other = herds
    first, second = herd.submit("true", gpus=0, hold=True), herd.submit("true", gpus=0, hold=True)
    theirs = other.job(first.id)  # (a handle of their home: its number names first here)
    with pytest.raises(WrongValue, match=refusal(herd, theirs, "before")):
        second.move(before=theirs)
    with pytest.raises(WrongValue, match=refusal(herd, theirs, "swap")):
        second.move(swap=theirs)
    order = [job.id for job in herd.jobs(state="held")]
    assert order.index(first.id) < order.index(second.id)  # not moved


def test_a_handle_of_the_same_home_named_through_a_link_is_taken(
    herds: tuple[gpuherd.Herd, gpuherd.Herd], tmp_path: Path
) -> None:
    herd, _ = herds
    (tmp_path / "link").symlink_to(herd.client.home)
    linked = gpuherd.Herd(Client(tmp_path / "link"))
    first, second = herd.submit("true", gpus=0, hold=True), herd.submit("true", gpus=0, hold=True)
    waiter = herd.submit("true", gpus=0, hold=True, after=linked.job(first.id))
    assert waiter.info()["after"] == [first.id]
    assert "moved" in second.move(before=linked.job(first.id))
