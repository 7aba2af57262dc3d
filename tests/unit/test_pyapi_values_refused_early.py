"""Values the Python API passed on, and what it then said (a review of the API): a dict of
values swept over its keys alone (its values dropped without a word); a priority or retries
past 64 bits taken by `@gpuherd.task` and refused at each submit in the HTTP API's words
(`jobs.0.priority ...`); `job.edit(name=None)` answered with the daemon's field names
(`env_overrides`); a bare `mem=1048575` told to give `1048575GiB`. None of these asks a
daemon: the Herd is of a home where none runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuherd
from gpuherd.client import Client
from gpuherd.core.int64 import LARGEST
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.pyapi import Herd, Job, make_spec


@pytest.fixture
def herd(tmp_path: Path) -> Herd:
    return Herd(Client(tmp_path / "home"))


def test_a_dict_of_values_is_refused_not_swept_over_its_keys(herd: Herd) -> None:
    values = {"lr_small": 0.01, "lr_big": 0.1}
    said = (
        "parameter 'lr': give a list of values, got a dict {'lr_small': 0.01, 'lr_big': 0.1}: "
        "to sweep its values, give list(d.values())"
    )
    with pytest.raises(HerdError) as refused:
        herd.sweep("echo {lr}", {"lr": values}, gpus=0, dry_run=True)
    assert str(refused.value) == said
    with pytest.raises(HerdError, match=r"^parameter 'lr': give a list of values, got a dict"):
        make_spec("s", "echo {lr}", {"lr": values}, None)
    spec = make_spec("s", "echo {lr}", {"lr": list(values.values())}, None)
    assert spec.grids == ({"lr": (0.01, 0.1)},)  # (what the message says to give works)


@pytest.mark.parametrize("key", ["priority", "retries"])
def test_a_number_past_64_bits_is_refused_by_its_keyword(herd: Herd, key: str) -> None:
    said = f"^{key} {LARGEST + 1} is too large \\(at most 2\\*\\*63 - 1\\)$"
    with pytest.raises(InvalidValue, match=said):
        gpuherd.task(gpus=0, **{key: LARGEST + 1})  # at decoration, not at each submit
    with pytest.raises(InvalidValue, match=said):
        herd.submit("true", gpus=0, **{key: LARGEST + 1})
    with pytest.raises(InvalidValue, match=said):
        herd.sweep("echo {x}", {"x": [1]}, gpus=0, dry_run=True, **{key: LARGEST + 1})
    if key == "retries":  # (a priority is set by job.priority(), not edited)
        with pytest.raises(InvalidValue, match=said):
            Job(herd, 7).edit(retries=LARGEST + 1)
    if key == "priority":  # (a priority may be below 0: down to -2**63)
        with pytest.raises(InvalidValue, match=f"^priority {-(2**63) - 1} is too small"):
            herd.submit("true", gpus=0, priority=-(2**63) - 1)


def test_an_edit_of_none_alone_says_so_in_the_apis_words(herd: Herd) -> None:
    with pytest.raises(InvalidValue) as refused:
        Job(herd, 7).edit(name=None)
    said = str(refused.value)
    assert said.startswith(
        "nothing to change: name=None changes nothing (clear=['name'] unsets it); give one of "
    )
    assert "env_overrides" not in said and ", env, " in said
    with pytest.raises(InvalidValue, match=r"^nothing to change: gpus=None changes nothing; "):
        Job(herd, 7).edit(gpus=None)  # (gpus cannot be cleared: no clear= offered)


@pytest.mark.parametrize(
    ("mem", "example"), [(10, "10GiB"), (1023, "1023GiB"), (1048575, "1048575MiB")]
)
def test_a_bare_number_is_offered_the_unit_likely_meant(herd: Herd, mem: int, example: str) -> None:
    with pytest.raises(
        InvalidValue, match=f"^mem={mem} is {mem} bytes: give a unit, e.g. mem='{example}'"
    ):
        herd.submit("true", gpus=1, mem=mem)


def test_a_set_of_values_is_swept_in_order() -> None:
    """A set's own order is its hashes': another at each run of the script (strings)."""
    assert make_spec("s", "echo {x}", {"x": {"b", "c", "a"}}, None).grids == (
        {"x": ("a", "b", "c")},
    )
    mixed = make_spec("s", "echo {x}", {"x": frozenset({2, "a", 1})}, None).grids
    assert mixed == ({"x": ("a", 1, 2)},)  # (by their text: "'a'" < "1" < "2")
