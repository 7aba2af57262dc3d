"""What `@gpuherd.task` and the Python API refuse at once, in the caller's process, before
anything is sent: a function no job can run as a task (tasks_checks.py), job options no
submission takes, and arguments of the wrong kind (a count as text, `fake_gpus=2.5`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from gpuherd.client import Client
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.pyapi import Herd
from gpuherd.pyapi_types import WrongType, WrongValue


def numbers(n: int) -> Iterator[int]:
    yield from range(n)


async def stream(n: int) -> AsyncIterator[int]:
    yield n


async def fetch(n: int) -> int:
    return n


def by_position(a: int, b: int, /, c: int = 0) -> int:
    return a + b + c


def by_position_with_defaults(a: int = 1, /, b: int = 2) -> int:
    return a + b


def test_a_generator_function_is_refused_at_decoration() -> None:
    # It was taken, and each job succeeded storing '<generator object numbers ...>'.
    for fn, kind in ((numbers, "a generator"), (stream, "an async generator")):
        with pytest.raises(HerdError) as refused:
            gpuherd.task(gpus=0)(fn)
        assert str(refused.value) == (
            f"{fn.__name__} is {kind} function (it yields), which cannot run as a task: a job "
            "keeps what the function returns, and a generator returns its values only as it "
            "is iterated; collect them and return a list instead"
        )
    assert gpuherd.task(gpus=0)(fetch).fn is fetch  # (async def: its job runs it)


def test_parameters_taken_by_position_alone_are_refused_at_decoration() -> None:
    # A task's parameters are given by name: no submit could give `a` (each was refused).
    with pytest.raises(HerdError) as refused:
        gpuherd.task(gpus=0)(by_position)
    assert str(refused.value) == (
        "by_position() takes 'a', 'b' by position only (the / in its signature), and a task is "
        "called with its parameters by name (by_position.submit(a=..., b=...)): drop the / "
        "from by_position's signature"
    )
    # With defaults they are never given, and the function runs: taken.
    assert gpuherd.task(gpus=0)(by_position_with_defaults).fn is by_position_with_defaults


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"gpus": -1}, "gpus (--gpus) must be between 0 and 64, got -1"),
        ({"retries": -1}, "retries (--retries) must be 0 or more, got -1"),
        ({"timeout": 0}, "timeout (--timeout) must be positive, at most 100 years"),
        ({"gpus": 0, "mem": "1GiB"}, "mem (--mem) with gpus 0 (--gpus 0): a CPU-only job gets"),
    ],
)
def test_job_options_no_submission_takes_are_refused_at_decoration(
    options: dict[str, Any], said: str
) -> None:
    # Each was taken, and every submit of the task refused.
    with pytest.raises(InvalidValue) as refused:
        gpuherd.task(**options)(fetch)
    assert str(refused.value).startswith(said)
    cpu = gpuherd.task(gpus=0)(fetch)
    with pytest.raises(InvalidValue, match=r"^mem \(--mem\) with gpus 0"):
        gpuherd.task(mem="1GiB")(cpu)  # (the task's own options and those given, together)
    assert gpuherd.task(gpus=2, mem="1GiB", timeout="1h")(fetch).options["gpus"] == 2


def test_a_count_given_as_text_is_a_type_error_and_still_an_invalid_value(
    tmp_path: Path,
) -> None:
    # limit="5" raised InvalidValue alone, where every other option of the wrong kind is a
    # WrongType (a TypeError); it is both now. Nothing is asked of a daemon (none runs).
    herd = Herd(Client(tmp_path / "home"))
    for call in (
        lambda: herd.jobs(limit="5"),  # type: ignore[arg-type]
        lambda: herd.job(1).logs(lines="5"),  # type: ignore[arg-type]
    ):
        with pytest.raises(WrongType) as refused:
            call()
        assert isinstance(refused.value, TypeError) and isinstance(refused.value, InvalidValue)
    with pytest.raises(InvalidValue) as below_one:
        herd.jobs(limit=0)
    assert not isinstance(below_one.value, TypeError)  # (a number, of the right kind)


@pytest.mark.parametrize("value", [2.5, [1], b"2", True])
def test_fake_gpus_of_the_wrong_kind_is_refused_before_any_daemon(
    tmp_path: Path, value: Any
) -> None:
    # It raised DaemonError (`fake_gpus: invalid item '2.5': use a count ...`), as if a daemon
    # had refused it.
    home = tmp_path / "home"
    with pytest.raises(WrongType) as refused:
        gpuherd.connect(home, fake_gpus=value)
    assert str(refused.value) == (
        "fake_gpus is how many fake GPUs (4), their sizes ('2x24GiB,1x80GiB') or a .json state "
        f"file, got {value!r} ({type(value).__name__})"
    )
    assert not home.exists()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"output": 5}, "output is a file name (text or a Path), got 5 (int)"),
        ({"error": b"err.txt"}, "error is a file name (text or a Path), got b'err.txt' (bytes)"),
        ({"cwd": ["a"]}, "cwd is a folder (text or a Path), got ['a'] (list)"),
    ],
)
def test_output_error_and_cwd_of_the_wrong_kind_are_a_wrong_type(
    tmp_path: Path, given: dict[str, Any], said: str
) -> None:
    # They raised a plain TypeError, not the API's WrongType (a HerdError too) that every
    # other option of the wrong kind raises. No daemon runs: refused before anything is sent.
    herd = Herd(Client(tmp_path / "home"))
    for call in (
        lambda: herd.submit("true", gpus=0, **given),
        lambda: herd.sweep("echo {x}", {"x": [1]}, **given),
        lambda: herd.job(1).edit(**given),
    ):
        with pytest.raises(WrongType) as refused:
            call()
        assert str(refused.value) == said


def test_hold_with_begin_is_refused_in_the_apis_words(tmp_path: Path) -> None:
    # It was sent, and the daemon refused it naming the CLI's --hold and --begin (an
    # InvalidValue, not the API's WrongValue); a task took it, each submit refused.
    herd = Herd(Client(tmp_path / "home"))  # (no daemon: refused before anything is sent)
    said = "give hold=True (held until a release) or begin='+1h' (held until then), not both"
    for call in (
        lambda: herd.submit("true", gpus=0, begin="+1h", hold=True),
        lambda: herd.sweep("echo {x}", {"x": [1]}, begin="+1h", hold=True),
        lambda: gpuherd.task(gpus=0, begin="+1h", hold=True)(fetch),
        lambda: gpuherd.task(begin="+1h")(gpuherd.task(gpus=0, hold=True)(fetch)),
    ):
        with pytest.raises(WrongValue) as refused:
            call()
        assert (str(refused.value), isinstance(refused.value, ValueError)) == (said, True)
    assert gpuherd.task(gpus=0, begin="+1h", hold=False)(fetch).options["hold"] is False


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            ["A=1", "B=x=y"],
            "env is a dict of names to values (env={'A': '1', 'B': 'x=y'}), "
            "got ['A=1', 'B=x=y'] (list)",
        ),
        (
            "A=1 B=2",
            "env is a dict of names to values (env={'A': '1', 'B': '2'}), got 'A=1 B=2' (str)",
        ),
        (5, "env is a dict of names to values (env={'NAME': 'value'}), got 5 (int)"),
        ({3: "x"}, "env: the name 3 (int) is not text"),
        ({"A": None}, "env: A=None: give the value as a string (or a number)"),
    ],
)
def test_env_of_the_wrong_kind_is_a_wrong_type(tmp_path: Path, env: Any, said: str) -> None:
    # It was a plain TypeError, not the API's WrongType (a HerdError too) that every other
    # option of the wrong kind raises; a list of NAME=VALUE is answered with its dict.
    herd = Herd(Client(tmp_path / "home"))
    with pytest.raises(WrongType) as refused:
        herd.submit("true", gpus=0, env=env)
    assert str(refused.value) == said
    sweep_file = tmp_path / "sweep.yaml"  # (its env and the one given were merged by dict())
    sweep_file.write_text("command: echo {x}\ngrid:\n  x: [1]\nenv:\n  B: '2'\n")
    for sweep in (
        lambda: herd.sweep("echo {x}", {"x": [1]}, env=env),
        lambda: herd.sweep(sweep_file, env=env),
    ):
        with pytest.raises(WrongType, match=r"^env"):
            sweep()
