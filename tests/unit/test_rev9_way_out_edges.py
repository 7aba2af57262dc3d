"""The ways out that refusals and warnings name must work when taken: the size `--mem` may
ask for, the number a sweep's format spec can format, `drop --env NAME` only where the
command sets NAME, and a task's sweep is "another command" only when it is (a review of
2026-12-02 found `give it as 1000.0` for `{n:d}`, which fails again, `at most 0 B` for a GPU
reporting no memory, `drop --env LR` for `echo LR={i}`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuherd.core.model import Device
from gpuherd.core.reasons import never_fits
from gpuherd.core.sweep import SweepError
from gpuherd.core.sweep_names import render
from gpuherd.core.units import BARE_LEAST, format_size_down, parse_size
from gpuherd.same_command import same_command
from gpuherd.submission_text import field
from gpuherd.sweep_checks import sets_variable

GIB = 2**30


@given(st.integers(min_value=1024, max_value=2**50))
def test_the_most_that_fits_is_never_more_than_there_is_once_read_back(room: int) -> None:
    assert parse_size(format_size_down(room).replace(" ", "")) <= room


def test_a_gpu_a_little_under_24_gib_says_a_size_that_fits() -> None:
    assert format_size_down(24564 * 2**20) == "23.9 GiB"  # "24.0 GiB" would not fit


def test_the_mem_refusal_names_the_field_as_submit_refusals_do() -> None:
    said = never_fits(1, 100 * GIB, [Device(0, memory_total=24 * GIB)])
    assert said is not None and said.endswith(f"give a smaller {field('mem')}, at most 24.0 GiB")


def test_a_gpu_reporting_no_memory_gets_no_size_to_ask_for() -> None:
    said = never_fits(1, BARE_LEAST, [Device(0, memory_total=0)])
    assert said is not None and said.endswith(f"give a smaller {field('mem')}"), said


@pytest.mark.parametrize(
    ("spec", "text", "given_as"),
    [
        (".1e", "1e-3", "0.001"),  # a float
        ("d", "1e3", "1000"),  # whole: an int, which `d` formats (1000.0 it does not)
        (",d", "1_000", "1000"),
        ("03d", "007", "7"),
        (".1f", "-0", "0"),
        ("x", "1.5", None),  # no number `x` formats
        (".1q", "1e-3", None),  # a spec no type takes
        (".1f", "nan", None),
        (".1f", "inf", None),
        ("d", "0x10", None),  # (not a number int() or float() reads)
    ],
)
def test_a_format_spec_on_text_names_a_number_only_when_that_number_formats(
    spec: str, text: str, given_as: str | None
) -> None:
    with pytest.raises(SweepError) as refused:
        render(f"echo {{v:{spec}}}", {"v": text}, "d", "s", 0)
    said = str(refused.value)
    assert said.endswith("drop the format spec ({v})"), said
    if given_as is None:
        assert "give it as" not in said, said
    else:
        assert f"give it as {given_as}, or " in said, said
        number = float(given_as) if "." in given_as else int(given_as)
        render(f"echo {{v:{spec}}}", {"v": number}, "d", "s", 0)  # as said: it formats


@pytest.mark.parametrize(
    ("command", "sets"),
    [
        ("GFLOW_ARRAY_TASK_ID={i} ./task.sh", True),
        ("  LR={i} python train.py", True),
        ("A=1 LR={i} python train.py", True),  # after other assignments
        ("cd run && LR={i} python train.py", True),
        ("export LR={i}; python train.py", True),
        ("env LR={i} python train.py", True),
        ("(LR={i} ./a) | tee log", True),
        ("echo LR={i}", False),  # an argument: the environment does not get it
        ("python train.py LR={i}", False),  # Hydra's overrides
        ("python train.py --x A=1 LR={i}", False),
        ("XLR={i} ./a", False),  # another variable
        ("cd ~/p\nLR={i} ./task.sh", True),  # a sweep file's `command: |`
        ("if true; then LR={i} ./a; fi", True),
        ("for x in 1; do LR={i} ./a; done", True),
        ("{ LR={i} ./a; }", True),
        ('A="x y" LR={i} ./a', True),  # after a quoted value
        ("cd ~/p\necho LR={i}", False),
    ],
)
def test_an_env_placeholder_is_said_set_by_the_command_only_where_it_assigns_it(
    command: str, sets: bool
) -> None:
    assert sets_variable(command, "LR" if "LR" in command else "GFLOW_ARRAY_TASK_ID") is sets


def test_a_tasks_line_is_the_same_command_under_another_name_of_its_python_only(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python3").symlink_to(sys.executable)
    (venv / "python").symlink_to("python3")
    other = tmp_path / "other" / "bin"
    other.mkdir(parents=True)
    (other / "python").symlink_to(sys.executable)
    task = " -m gpuherd.worker demo:train --lr 0.1"
    assert same_command(f"{venv}/python3{task}", f"{venv}/python{task}")
    assert not same_command(f"{venv}/python3{task}", f"{other}/python{task}")  # other packages
    assert not same_command(f"{venv}/python3{task}", f"{venv}/python{task[:-1]}2")
    assert not same_command(f"{venv}/python3 x.py", f"{venv}/python x.py")  # not a task's
    assert not same_command(f"env A=1 {venv}/python3{task}", f"{venv}/python{task}")
