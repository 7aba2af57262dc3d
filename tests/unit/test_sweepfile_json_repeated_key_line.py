"""A key given twice in one object of a JSON sweep file is refused naming the line of its
second one, as YAML's is, and as JSON's other errors name theirs (it named the file alone:
json's object_pairs_hook is not told where the object is)."""

from __future__ import annotations

import pytest

from gpuherd.core.sweep_config import SweepFileError
from gpuherd.sweepfile_text import parse_text

TWICE = "is given twice in one object: give each key once (with all its values)"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '{\n "command": "echo {x}",\n "grid": {"x": [1, 2],\n          "x": [3]}\n}\n',
            "4: key 'x'",
        ),
        ('{"grid": {"x": [1]},\n\n "grid": {}}', "3: key 'grid'"),
        # The first object to close is refused first, as json.loads calls the hook.
        ('{"a": 1, "a": {"b": 1,\n"b": 2}}', "2: key 'b'"),
        ('{"b": 1,\n"b": {"b": 1, "c": [{"b": 0}],\n "b": 2}}', "3: key 'b'"),
        # Escapes and brackets inside text are read as json reads them.
        ('{"x": "{[,:\\"", "grid": {"\\u0078": 1,\n "x": 2}}', "2: key 'x'"),
        ('[{"a": 1}, {"a": 1},\n {"a": 1, "a": 2}]', "2: key 'a'"),
    ],
)
def test_the_line_of_the_second_one_is_named(text: str, said: str) -> None:
    with pytest.raises(SweepFileError) as refused:
        parse_text(text, "sweep.json")
    assert str(refused.value) == f"sweep.json:{said} {TWICE}"
