"""`ls --json`'s text (cli/json_text.py) is json.dumps(indent=1)'s, byte for byte, whatever
the items hold: the fast path takes only flat objects, and text that looks like structure
(brackets, braces, newlines inside strings) must not fool it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gpuherd.cli.json_text import indented

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
JOBISH = st.dictionaries(
    st.sampled_from(["id", "name", "gpus", "after", "command", "reason", "{", "[]"]),
    SCALARS | st.lists(st.integers(), max_size=2) | st.just({}),
)


@given(st.lists(JOBISH | VALUES, max_size=5))
def test_the_text_is_json_dumps_indent_1(items: list[Any]) -> None:
    assert indented(items) == json.dumps(items, indent=1)


def test_text_that_looks_like_structure() -> None:
    job = {"id": 1, "gpus": [], "command": "echo '[]' '{' \"\n\" [1", "after": [2]}
    cases: list[Any] = [
        [],
        [{}],
        [job],
        [{**job, "after": []}],
        [{"a": "[]"}, {"a": "[", "b": []}],
        [{"a": {}}, {"a": {"b": [1]}}, 3, "x", [[]], [1, [2]]],
        {"jobs": [job]},
        [float("nan"), {"x": float("inf")}],
        [{"ü": "é", "n": None, "t": True}],
    ]
    for value in cases:
        assert indented(value) == json.dumps(value, indent=1), value
