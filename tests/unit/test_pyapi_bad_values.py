"""The Python API's calls given values of the wrong kind, as a notebook's user gives them: each
refused at the call in one line, as the API's own WrongType (a TypeError) or WrongValue (a
ValueError), both HerdErrors, which a notebook shows without gpuherd's frames; never Python's
plain TypeError from deep inside, nor a handle that fails only when used. None of these asks a
daemon: the Herd is of a home where none runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gpuherd
from gpuherd.client import Client
from gpuherd.errors import HerdError
from gpuherd.pyapi import Herd
from gpuherd.pyapi_types import WrongType, WrongValue


@pytest.fixture
def herd(tmp_path: Path) -> Herd:
    return Herd(Client(tmp_path / "home"))


def train(lr: float, run_dir: str | None = None) -> float:  # a task sweep_from_config imports
    return lr


def one_line(refusal: BaseException) -> str:
    assert isinstance(refusal, HerdError)
    text = str(refusal)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("bad", [1.5, None, True, [7], b"7"])
def test_a_job_id_of_another_kind_is_the_api_s_wrong_type(herd: Herd, bad: Any) -> None:
    # It was Python's plain TypeError (1.5, None), traceback and all in a notebook.
    with pytest.raises(WrongType) as refused:
        herd.job(bad)
    said = f"a job id is a whole number (herd.job(7)), got {bad!r} ({type(bad).__name__})"
    assert one_line(refused.value) == said


@pytest.mark.parametrize("bad", ["abc", "last", "-1", "", "²", -1, 0])
def test_a_job_id_that_is_no_id_is_the_api_s_wrong_value(herd: Herd, bad: Any) -> None:
    # "abc" was a plain TypeError; -1, 0 and 2**70 made a handle, refused only when used
    # ("no job -1"), and "²" (digits to str.isdigit) raised int()'s own ValueError. (2**70
    # is said too large: test_pyapi_spelling_and_ids.py.)
    with pytest.raises(WrongValue) as refused:
        herd.job(bad)
    assert one_line(refused.value) == (
        f"a job id is a whole number from 1 up (herd.job(7)), or its digits as text ('7'), "
        f"got {bad!r}"
    )


@pytest.mark.parametrize("good", [7, "7", " 7 ", 2**63 - 1])
def test_a_job_id_as_a_number_or_its_digits_is_taken(herd: Herd, good: Any) -> None:
    assert herd.job(good).id == int(good)


def test_a_numpy_job_id_is_taken(herd: Herd) -> None:
    np = pytest.importorskip("numpy")
    assert herd.job(np.int64(7)).id == 7  # (an id out of a DataFrame's column)


def test_a_job_id_in_a_wait_and_in_as_completed_is_refused_so(herd: Herd) -> None:
    with pytest.raises(WrongValue, match=r"^a job id is a whole number from 1 up .*got -1$"):
        herd.wait([-1])
    with pytest.raises(WrongValue, match=r"^as_completed\(\) takes jobs: .*-3 \(int\) is not"):
        list(herd.as_completed([-3]))  # (it made a handle on job -3, refused when asked)
    with pytest.raises(WrongType, match=r"^as_completed\(\) takes jobs: .*'abc' \(str\)"):
        list(herd.as_completed(["abc"]))
    with pytest.raises(WrongType, match=r"^as_completed\(\) takes jobs: .*1.5 \(float\)"):
        list(herd.as_completed([1.5]))


@pytest.mark.parametrize(
    ("call", "kind", "said"),
    [
        (lambda h: h.wait(7), WrongType, r"^wait\(\) takes a list of jobs or ids .*got 7 \(int\)$"),
        (lambda h: h.wait([7], timeout="5"), WrongType, r"^timeout is a number of seconds"),
        (lambda h: h.wait([7], timeout=-1), WrongValue, r"^timeout must be 0 or more seconds"),
        (lambda h: h.submit(123), WrongType, r"^the command is text \('python train.py"),
        (lambda h: h.submit(["echo", 0.1]), WrongType, r"^the command's words are text"),
        # A function, or Herd() as a class is made, raised the plain TypeError of the command
        # ("got <function train at 0x...>") or of __init__ ("missing 1 required argument").
        (
            lambda h: h.submit(train, 0.1),
            WrongType,
            r"^the command is text or a list of words, got the function 'train': .* then "
            r"train\.submit\(\.\.\.\) with its arguments \(docs/python\.md\)$",
        ),
        (lambda h: h.submit(lambda: 1), WrongType, r"got the function 'f': .* f\.submit\("),
        (
            lambda h: gpuherd.Herd(),
            WrongType,
            r"^a Herd is made by gpuherd\.connect\(\) .*Herd\(\)$",
        ),
        (lambda h: h.submit("echo", priorty=1), WrongType, r"^unknown option 'priorty' \(did"),
        (lambda h: h.submit("echo", max_parallel=2), WrongType, r"^max_parallel is a sweep's"),
        (lambda h: h.sweep(42), WrongType, r"^give a command template, .*got 42 \(int\)$"),
        (lambda h: h.sweep("echo {a}", params=[1]), WrongType, r"^params must be a dict of"),
        (lambda h: h.get_sweep(7), WrongType, r"^a sweep's name is text"),
        (lambda h: h.job(7).edit(gpu=2), WrongType, r"^'gpu' cannot be edited \(did you"),
        (
            lambda h: h.job(7).edit(name="a", clear=5),
            WrongType,
            r"^clear is the fields to .*\(int\)$",
        ),
        (lambda h: h.job(7).move(), WrongType, r"^move\(\) takes first=True"),
        (lambda h: gpuherd.task(2), WrongType, r"^gpuherd.task\(\) takes its options by name"),
    ],
)
def test_checks_raise_the_api_s_own_errors(herd: Herd, call: Any, kind: Any, said: str) -> None:
    # Each raised Python's plain TypeError (or ValueError): a traceback through gpuherd in a
    # notebook, and not caught by `except HerdError` as the API's other refusals are.
    with pytest.raises(kind, match=said) as refused:
        call(herd)
    one_line(refused.value)


@pytest.mark.parametrize("key", ["test_config_string_separator", "test_config_string_indicator"])
@pytest.mark.parametrize("bad", [1, 1.5, None])
def test_a_gts_separator_that_is_not_text_is_refused_as_the_wrong_type(
    herd: Herd, key: str, bad: Any
) -> None:
    # It was made text first: `test_config_string_separator: 1` was refused as the character
    # '1', under the name separators.item, which a GTS config does not have.
    config = {"scheduler_config": {"gpu": ["0"], key: bad}, "test_config": {"lr": [1, 2]}}
    with pytest.raises(WrongType) as refused:
        gpuherd.sweep_from_config(config, train, herd=herd, dry_run=True)
    default = "','" if key.endswith("separator") else "'-'"  # (GTS's defaults)
    assert one_line(refused.value) == (
        f"scheduler_config.{key} is one punctuation character as text ({default}), "
        f"got {bad!r} ({type(bad).__name__})"
    )


def test_a_gts_separator_refused_is_named_as_the_config_names_it(herd: Herd) -> None:
    scheduler: dict[str, Any] = {"gpu": ["0"], "test_config_string_separator": "ab"}
    config = {"scheduler_config": scheduler, "test_config": {"lr": [1, 2]}}
    with pytest.raises(HerdError) as refused:
        gpuherd.sweep_from_config(config, train, herd=herd, dry_run=True)
    assert one_line(refused.value).startswith(
        "config: scheduler_config.test_config_string_separator: 'ab' must be one punctuation"
    )
    scheduler["test_config_string_separator"] = "-"  # as the indicator's default
    with pytest.raises(HerdError) as refused:
        gpuherd.sweep_from_config(config, train, herd=herd, dry_run=True)
    assert one_line(refused.value) == (
        "config: scheduler_config.test_config_string_separator, "
        "scheduler_config.test_config_string_indicator are both '-'"
    )
