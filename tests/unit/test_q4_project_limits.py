"""`config set project-limits a=1=2` was taken as project `a=1` with a limit of 2 (the last
`=` split): a typo became a limit no job's project matches. A project name with `=` in it is
refused now, in one line; a value saved before is still read as it was taken."""

from __future__ import annotations

import pytest

from gpuherd.config import SETTINGS


@pytest.mark.parametrize("value", ["a=1=2", "eval=1,b=2=3", "x=y=3"])
def test_a_project_name_with_an_equals_sign_is_refused(value: str) -> None:
    with pytest.raises(ValueError) as refused:
        SETTINGS["project-limits"].parse(value)
    said = str(refused.value)
    assert "a project name cannot contain '='" in said
    assert said.startswith("invalid limit '") and "\n" not in said


def test_a_value_saved_before_the_refusal_is_still_read() -> None:
    load = SETTINGS["project-limits"].load
    assert load is not None
    assert load("x=y=3,b=1") == (("b", 1), ("x=y", 3))
