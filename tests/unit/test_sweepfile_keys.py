"""A sweep file's mapping keys that are not text (YAML `1:`, `0.5:`, `null:`, a date) were sent
on as text without a word (`{1: a}` reached the command and params.json as {"1": "a"}, and
`{1: a, "1": b}` as one of them): refused now, naming the key path and its line, as the
Python API refuses a task's parameters with such keys (tasks_params.py)."""

from __future__ import annotations

import pytest

from gpuherd.core.sweep_config import SweepFileError
from gpuherd.sweepfile import parse_sweep

NOT_TEXT = "not text: a mapping's keys must be text; quote it to keep it as text"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("grid:\n  x:\n    - {1: a}\n    - b\n", "s.yaml:4: grid.x[0]: key 1 is a number"),
        ("grid:\n  x: [a]\nfixed:\n  opts:\n    0.5: y\n", "s.yaml:6: fixed.opts: key 0.5 is"),
        ("grid:\n  x: [a, {1: a, '1': b}]\n", "s.yaml:3: grid.x[1]: key 1 is a number"),
        ("grid:\n  x: [{~: a}]\n", "s.yaml:3: grid.x[0]: key None is null (YAML reads"),
        ("grid:\n  x: [{2024-01-01: a}]\n", "s.yaml:3: grid.x[0]: key 2024-01-01 is a date"),
        ("grid:\n  x: [[{b: {3: c}}]]\n", "s.yaml:3: grid.x[0][0].b: key 3 is a number"),
    ],
)
def test_a_key_that_is_not_text_is_refused_naming_its_path(text: str, said: str) -> None:
    with pytest.raises(SweepFileError) as caught:
        parse_sweep("command: echo {x} {opts} {7}\n" + text, "s.yaml")
    message = str(caught.value)
    assert message.startswith(said) and message.endswith(NOT_TEXT), message
    assert "\n" not in message


@pytest.mark.parametrize("where", ["grid:\n  7: [a]\n", "grid:\n  - 7: [a]\n", "fixed:\n  7: a\n"])
def test_a_parameter_named_by_a_number_is_told_to_be_named(where: str) -> None:
    """A parameter's name of digits alone is refused quoted too (`{7}` is a position): told
    to quote it, then refused again, it took two steps; one now."""
    with pytest.raises(SweepFileError) as caught:
        parse_sweep("command: echo {x} {7}\n" + where, "s.yaml")
    message = str(caught.value)
    assert " key 7 is a number, not text: " in message
    assert message.endswith("a mapping's keys must be text; name the parameter, e.g. p7"), message


def test_quoted_keys_are_text_and_kept() -> None:
    loaded = parse_sweep("command: echo {x}\ngrid:\n  x: [{'1': a}]\n", "s.yaml")
    assert loaded.spec.grids == ({"x": ({"1": "a"},)},)
