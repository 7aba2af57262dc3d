"""What a task refuses when it is made, or before anything is sent, in the words its submit
and herd.sweep use: options read at each submit (cwd=5, env=['A=1'], begin='whenever', ...),
`herd=` of the wrong kind (it was ignored), a sweep's own options of the wrong kind (raw
Python errors), and parameters JSON cannot carry (unnamed). No daemon runs: each is refused
before one is looked for."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from gpuherd.errors import HerdError
from gpuherd.pyapi_types import WrongType, WrongValue


def train(lr: float, data: Any = None) -> float:
    return lr


task = gpuherd.task(gpus=0)(train)


@pytest.fixture(autouse=True)
def no_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUHERD_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("options", "kind", "said"),
    [
        ({"cwd": 5}, WrongType, "cwd is a folder (text or a Path), got 5 (int)"),
        ({"cwd": ""}, HerdError, "cwd is empty: give the folder the job runs in, or leave cwd out"),
        (
            {"env": ["A=1"]},
            WrongType,
            "env is a dict of names to values (env={'A': '1'}), got ['A=1'] (list)",
        ),
        ({"env": {"A": None}}, WrongType, "env: A=None: give the value as a string (or a number)"),
        ({"begin": "whenever"}, WrongValue, "invalid begin 'whenever': use now, +DURATION"),
        ({"after": "soon"}, WrongValue, "after: invalid job id 'soon': use ids like 5"),
        ({"after_any": [3, "x"]}, WrongValue, "after_any: invalid job id 'x'"),
        ({"output": 5}, WrongType, "output is a file name (text or a Path), got 5 (int)"),
        ({"on_no_output": "explode"}, WrongValue, "on_no_output 'explode': give 'flag' or 'kill'"),
        (
            {"max_parallel": -1},
            WrongValue,
            "max_parallel -1: no point of the sweep could ever start; give 1 or more",
        ),
    ],
)
def test_options_read_at_submit_are_refused_at_decoration(
    options: dict[str, Any], kind: type[Exception], said: str
) -> None:
    # Each was taken, and every submit of the task refused, in these words.
    with pytest.raises(kind) as refused:
        gpuherd.task(gpus=0, **options)(train)
    assert str(refused.value).startswith(said)
    with pytest.raises(kind):  # (a task of a task too)
        gpuherd.task(**options)(task)


def test_options_read_at_submit_are_taken_as_submit_takes_them() -> None:
    made = gpuherd.task(
        gpus=0,
        cwd=".",
        env={"A": 1},
        begin="+1h",
        after="last",
        after_fail=[3, "5-7"],
        output=Path("out.log"),
        on_no_output="kill",
        max_parallel=2,
    )(train)
    assert made.options["begin"] == "+1h" and made.options["after"] == "last"  # (as given)


@pytest.mark.parametrize("herd", [5, b"/tmp/h", ["/tmp/h"]])
def test_herd_of_the_wrong_kind_is_refused(herd: Any) -> None:
    # It was ignored, the jobs sent to GPUHERD_HOME's daemon.
    with pytest.raises(WrongType) as refused:
        gpuherd.task(gpus=0, herd=herd)(train)
    assert str(refused.value) == (
        "herd is a connection (herd=gpuherd.connect(...)) or a home's folder (text or a Path, "
        f"as gpuherd.connect(home) takes it), got {herd!r} ({type(herd).__name__})"
    )
    with pytest.raises(HerdError, match=r"^herd is empty"):
        gpuherd.task(gpus=0, herd="")(train)


def test_herd_as_a_folder_is_the_home_connected_to_at_submit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was ignored without a word: the job went to GPUHERD_HOME's daemon.
    from gpuherd import tasks_options

    connected: list[Any] = []
    monkeypatch.setattr(tasks_options, "connect", lambda home: connected.append(home))
    other = gpuherd.task(herd="other")(task)  # (relative: from the folder it was made in)
    assert other._home() == tmp_path / "other"
    assert repr(other).endswith(f"gpus=0, herd={tmp_path / 'other'}>")
    monkeypatch.chdir("/")
    other._herd()
    assert connected == [tmp_path / "other"]
    task._herd()  # (none given: GPUHERD_HOME's)
    assert connected[1:] == [None]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"name": 5}, "name is text (a str), got 5 (int)"),
        ({"sweep_name": 5}, "sweep_name is text (a str), got 5 (int)"),
        ({"fixed": 5}, "fixed is a dict of names to values ({'epochs': 10}), got 5 (int)"),
        ({"fixed": "x"}, "fixed is a dict of names to values ({'epochs': 10}), got 'x' (str)"),
        (
            {"fixed": ["lr"]},
            "fixed is a dict of names to values ({'epochs': 10}), got ['lr'] (list)",
        ),
        ({"results_dir": 5}, "results_dir is a folder (text or a Path), got 5 (int)"),
        ({"sweep_seed": [1, 2]}, "sweep_seed is a whole number (an int), got [1, 2] (list)"),
        ({"samples": "2"}, "samples is a whole number (an int), got '2' (str)"),
        ({"dry_run": "yes"}, "dry_run is True or False, got 'yes' (str)"),
        ({"cwd": 5}, "cwd is a folder (text or a Path), got 5 (int)"),
    ],
)
def test_a_sweeps_own_options_of_the_wrong_kind_are_refused_as_herd_sweep_refuses_them(
    given: dict[str, Any], said: str
) -> None:
    # `name=5` raised "argument of type 'int' is not iterable" (a traceback), `fixed=5`
    # "Value after * must be an iterable", `fixed="x"` "train() takes no parameter 'x'".
    with pytest.raises(WrongType) as refused:
        task.sweep(lr=[0.1], **given)
    assert str(refused.value) == said
    with pytest.raises(gpuherd.TaskArgumentError, match="by name, not"):
        task.sweep([0.1, 0.2])  # type: ignore[arg-type]  # (its positional one: the folder)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            Path("/data/train"),
            "data: PosixPath('/data/train') (PosixPath) cannot reach train (parameters travel "
            "as JSON: numbers, text, True, False, None, and lists and dicts of them): pass it "
            "as text: str(path)",
        ),
        ({1, 2}, "data: {1, 2} (set) cannot reach train (parameters travel as JSON: numbers, "),
        ({"a": [1, object]}, "data['a'][1]: <class 'object'> (type) cannot reach train"),
    ],
)
def test_a_parameter_json_cannot_carry_is_named_with_what_to_give(data: Any, said: str) -> None:
    # It was `HerdError: task parameters must be JSON values: Object of type PosixPath is not
    # JSON serializable`: no parameter named, and no TypeError.
    for call in (
        lambda: task.submit(lr=0.1, data=data),
        lambda: task.sweep(lr=[0.1], data=[data]),
        lambda: task.sweep(lr=[0.1], fixed={"data": data}),
    ):
        with pytest.raises(WrongType) as refused:
            call()
        assert str(refused.value).replace("data[0]", "data").startswith(said)
    with pytest.raises(WrongType, match=r"pass a list: sorted\(\.\.\.\) or list\(\.\.\.\)$"):
        task.submit(lr=0.1, data={1})


def test_an_int_longer_than_a_job_reads_is_refused_with_advice_that_works() -> None:
    # Refused with "use sys.set_int_max_str_digits()", which let the submit pass and the
    # job fail reading its parameters; it is refused whatever this process's limit is.
    import sys

    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # (the old refusal's advice)
    try:
        with pytest.raises(WrongValue) as refused:
            task.submit(lr=0.1, data=[1, 10**5000])
    finally:
        sys.set_int_max_str_digits(before)
    assert str(refused.value) == (
        "data[1]: an int of more than 4300 digits cannot reach train (the job reads its "
        "parameters as JSON, and Python reads no int of more than 4300 digits from text): "
        "pass it as hex text, hex(n), and read it with int(text, 16)"
    )
    with pytest.raises(WrongValue, match=r"^data: an int of more than 4300 digits"):
        task.submit(lr=0.1, data=-(10**4300))  # (4301 digits, under this process's own limit)
    assert int(hex(10**5000), 16) == 10**5000  # (the advice: hex text reads back, any length)


@gpuherd.task(gpus=0)
def decorated(x: int) -> int:
    return x


def made_task() -> Any:
    return gpuherd.task(gpus=3, retries=2)(task)


def test_a_task_pickles_as_a_reference_to_itself() -> None:
    # "Can't pickle <function train>: it's not the same object as ...train".
    assert pickle.loads(pickle.dumps(decorated)) is decorated
    again = pickle.loads(pickle.dumps(task))  # (found by its function's name: train)
    assert (again.fn, again.options) == (train, {"gpus": 0})
    other = pickle.loads(pickle.dumps(made_task()))  # (a task of it: its options kept)
    assert (other.fn, other.options) == (train, {"gpus": 3, "retries": 2})
    plain = pickle.loads(pickle.dumps(gpuherd.task(gpus=0)(made_task)))
    assert plain.fn is made_task
