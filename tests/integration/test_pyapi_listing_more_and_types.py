"""The Python API: `herd.jobs()` says how many jobs its `limit` left out (`more`), and an
option of the wrong kind is refused before anything is sent, naming the keyword, the kind
given and the kind wanted (the daemon answered in pydantic's words). A real daemon (4 fake
GPUs); every job is held, so nothing runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("pyapi-more"), "pyapi_more_mod", ""):
        yield connect(start=False)


def test_jobs_says_how_many_more_matched(api: gpuherd.Herd) -> None:
    held = [api.submit("true", gpus=0, project="more", hold=True) for _ in range(3)]
    cut = api.jobs(state="held", project="more", limit=1)
    assert [job.id for job in cut] == [held[0].id]
    assert cut.more == 2
    whole = api.jobs(state="held", project="more")
    assert [job.id for job in whole] == [job.id for job in held] and whole.more == 0
    # Still a list, as code written before `more` uses it.
    assert isinstance(cut, list) and cut == cut[:] and len(cut + whole) == 4
    assert api.jobs(project="none-such").more == 0


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"name": 5}, "name is text (a str), got 5 (int)"),
        ({"name": b"x"}, "name is text (a str), got b'x' (bytes)"),
        ({"project": 5}, "project is text (a str), got 5 (int)"),
        ({"priority": "5"}, "priority is a whole number (an int), got '5' (str)"),
        ({"priority": 1.5}, "priority is a whole number (an int), got 1.5 (float)"),
        ({"gpus": True}, "gpus is a whole number (an int), got True (bool)"),
        ({"retries": "x"}, "retries is a whole number (an int), got 'x' (str)"),
        ({"hold": "yes"}, "hold is True or False, got 'yes' (str)"),
        ({"exclusive": 1}, "exclusive is True or False, got 1 (int)"),
        ({"mem": 2e9}, "mem is a size: bytes (an int) or text ('10GiB'), got 2000000000.0 (float)"),
        (
            {"timeout": [1]},
            "timeout is seconds (an int or a float), text ('2h') or a timedelta, got [1] (list)",
        ),
    ],
)
def test_a_wrong_kind_is_refused_before_it_is_sent(
    api: gpuherd.Herd, given: dict[str, Any], words: str
) -> None:
    before = len(api.jobs(all=True))
    options = {"gpus": 0, "hold": True, **given}
    calls: list[Callable[[], Any]] = [lambda: api.submit("true", **options)]
    if "gpus" not in given:  # a sweep takes the same options (its gpus= is an option too)
        calls.append(lambda: api.sweep("true {x}", {"x": [1]}, **{"name": "kinds", **options}))
    held = api.submit("true", gpus=0, hold=True)
    before += 1
    if "hold" not in given and "priority" not in given:  # (edit changes neither)
        calls.append(lambda: held.edit(**given))
    for call in calls:
        with pytest.raises(HerdError) as refused:
            call()
        assert str(refused.value) == words
        assert isinstance(refused.value, TypeError)  # as Python's own for a wrong argument
    assert len(api.jobs(all=True)) == before  # nothing reached the queue
    assert held.info()["name"] is None  # nor changed the held job


def test_names_of_the_wrong_kind_elsewhere(api: gpuherd.Herd) -> None:
    with pytest.raises(HerdError, match=r"^name is text \(a str\), got 3 \(int\)$"):
        api.jobs(name=3)  # type: ignore[arg-type]
    with pytest.raises(HerdError, match=r"^name is text \(a str\), got \['a'\] \(list\)$"):
        api.sweep("true {x}", {"x": [1]}, name=["a"], hold=True)  # type: ignore[arg-type]
    assert api.sweeps() == []
