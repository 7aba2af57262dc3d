"""`--json`'s text of a long listing: json.dumps(value, indent=1), made faster.

With `indent`, the json module encodes in Python (its C encoder does not indent, before
Python 3.13): `ls --json` of 100,000 jobs spent 1.5 s there. A listing is a list of flat
objects (numbers, text, lists of ids), mostly with every list empty; the C encoder writes
such an object in the indented form when told to put a newline and the indent between its
members. Any other item is written by json.dumps(indent=1) itself, its lines moved one
level in: the text is the same either way (tests/unit/test_json_text.py).
"""

from __future__ import annotations

import json
from typing import Any

_MEMBERS = json.JSONEncoder(separators=(",\n  ", ": "))
"""An object's members one a line, at the depth of a list's item (the C encoder)."""


def indented(value: Any) -> str:
    """json.dumps(value, indent=1), the same text."""
    if not isinstance(value, list) or not value:
        return json.dumps(value, indent=1)
    return "[\n " + ",\n ".join(map(_item, value)) + "\n]"


def _item(item: Any) -> str:
    if type(item) is dict and item:
        text = _MEMBERS.encode(item)
        # Flat: no "{" but its own (no object inside, no text holding one), and every "["
        # followed by "]" (only empty lists): each member's value stays on its line. An
        # encoded text holds no newline of its own: only the separators put one there.
        if text.count("{") == 1 and text.count("[") == text.count("[]"):
            return "{\n  " + text[1:-1] + "\n }"
    return json.dumps(item, indent=1).replace("\n", "\n ")
