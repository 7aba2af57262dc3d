"""Where in a sweep file a key is, for its error line (sweepfile.py): `file:line` where the
format tells it (YAML and JSON, composed again as YAML: a JSON file is YAML too), the key's
path as the user wrote it (`grid[1].lr`). TOML's keys are named by their path alone:
Python's tomllib keeps no positions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from gpuherd.sweepfile_text import Loader


def real_loc(loc: Sequence[str | int], data: Any) -> tuple[str | int, ...]:
    """The steps of pydantic's `loc` that exist in the data (drops "[key]" and type tags)."""
    out: list[str | int] = []
    node = data
    for step in loc:
        found = isinstance(node, Mapping) and step in node
        if found or (isinstance(node, list) and isinstance(step, int) and step < len(node)):
            node = node[step]
        elif isinstance(node, Mapping) and isinstance(step, int):
            continue  # `grid` written as one mapping, checked as a list of one
        else:
            break
        out.append(step)
    return tuple(out)


def dotted(loc: Sequence[str | int], data: Any) -> str:
    """`grid.lr`, `grid[1].lr`, `random.lr.int`: the key path as the user wrote it."""
    text = ""
    node = data
    for step in loc:
        if isinstance(node, Mapping):
            if isinstance(step, int):
                continue
            node = node.get(step)
        else:
            ok = isinstance(node, list) and isinstance(step, int) and step < len(node)
            node = node[step] if ok else None
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def place(path: str, text: str, loc: Sequence[str | int]) -> str:
    """`path:line` for the deepest key of `loc` that the YAML text shows; else `path`."""
    if Path(path).suffix.lower() not in (".yaml", ".yml", ".json") or not loc:
        return path
    try:
        node = yaml.compose(text, Loader=Loader)  # a SafeLoader
    except yaml.YAMLError:
        return path
    line = None
    for step in loc:
        if isinstance(node, yaml.MappingNode):
            if isinstance(step, int):
                continue
            match = [(k, v) for k, v in node.value if getattr(k, "value", None) == step]
            if not match:
                break
            line, node = match[0][0].start_mark.line + 1, match[0][1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            if step >= len(node.value):
                break
            node = node.value[step]
            line = node.start_mark.line + 1
        else:
            break
    return f"{path}:{line}" if line is not None else path
