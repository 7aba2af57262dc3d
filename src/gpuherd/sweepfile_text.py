"""A sweep file's text read into data (YAML, TOML or JSON, by its suffix), for sweepfile.py.

Each problem is one line, `file:line: what is wrong` where the format tells the line. A key
given twice in one mapping is refused, as TOML itself does: YAML and JSON would keep the last
one without a word (`grid: {x: [1, 2], x: [3]}` would run x=3 only).

YAML is read as YAML 1.1 (PyYAML's), but for its numbers and booleans, read as YAML 1.2 reads
them: `1e-5` is a number, and `22:00` is the text it shows (1.1 read it as 1320, base 60:
`--at 22:00` ran as `--at 1320`); only `true` and `false` (or True, TRUE, False, FALSE) are
booleans, and `yes`, `no`, `on`, `off` the text written (1.1 made `grid: {flag: [on, off]}`
run `--flag True` and `--flag False`). A `true` or `false` key is refused: a name was meant.
A whole number is one in plain decimal digits only, that reads back as written (`12`, `-3`),
as `sweep -p` takes one: the values become a command's arguments, and `mode: 0755`, `id:
007`, `mask: 0x1F`, `n: 1_000` or `shift: +5` mean the text written (1.1 ran `--mode 493` and
`--id 7`; 1.2 would run `--id 7` and `--shift 5`).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from gpuherd.core.sweep import FILE_SUFFIXES
from gpuherd.core.sweep_config import SweepFileError
from gpuherd.core.sweep_values import MAX_DEPTH, TOO_DEEP
from gpuherd.json_parse import too_many_digits

MAX_FILE_BYTES = 1024 * 1024
"""Larger sweep files are refused before they are parsed (YAML reads ~300 KB a second)."""
_MERGE = "tag:yaml.org,2002:merge"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"


class _Refused(yaml.MarkedYAMLError):
    """What Loader refuses itself, at its place in the text."""


class _DuplicateJSON(ValueError):
    pass


def _twice(key: str, mapping: str = "mapping") -> str:
    return f"key {key!r} is given twice in one {mapping}: give each key once (with all its values)"


def _bool_key(node: yaml.ScalarNode, value: bool) -> str:
    return (
        f"key {node.value!r} is read as {str(value).lower()}, not as a name (unquoted, YAML"
        f" reads true and false as booleans): quote it: '{node.value}':"
    )


class Loader(yaml.SafeLoader):
    """SafeLoader that reads numbers and booleans as YAML 1.2 does (`_YAML_1_2`), stops at
    MAX_DEPTH levels of lists and mappings (its composer recurses once a level), and refuses
    a key given twice in a mapping, or read as true or false."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH and self.check_event(
                yaml.SequenceStartEvent, yaml.MappingStartEvent
            ):
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _Refused(problem=TOO_DEEP, problem_mark=mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:  # (a name; typed amiss)
        """Checked as composed, before `<<` merges join other mappings' keys (which a mapping
        may override) into it. Keys compared as constructed: `0.5` and `.5` are one key."""
        node: yaml.MappingNode = super().compose_mapping_node(anchor)
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node)
            if key_node.tag == _BOOL:  # `true:`, which would reach the checks as True
                raise _Refused(problem=_bool_key(key_node, key), problem_mark=key_node.start_mark)
            if key in seen:
                raise _Refused(problem=_twice(key_node.value), problem_mark=key_node.start_mark)
            seen.add(key)
        return node


_YAML_1_2 = {
    # YAML 1.2's core schema: yes, no, on, off, y and n (1.1's booleans too) are text.
    _BOOL: re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    # Decimal digits that read back as written (no leading zero, no `+`, no `-0`), as
    # `sweep -p` takes a number. The rest is the text written, as the command gets it: 1.1
    # read `0755` as 493 (octal) and `007` as 7, `0x1F` as 31, `0b11` as 3, `1_000` as 1000,
    # `1:30` as 90 (base 60); 1.2 reads `007` as 7, `0o17` as 15 and `+5` as 5.
    _INT: re.compile(r"^(?:0|-?[1-9][0-9]*)$"),
    # YAML 1.2's: with a point or an exponent (`1e-5`, `.5`, `-.5`, `1.`); no `_` (1.1's
    # `1_000.5`), no base 60 (1.1's `1:30.5`). (PyYAML tries float before int: digits
    # alone must not match.) A float's value is what the file means: `1e-3` runs as 0.001.
    _FLOAT: re.compile(
        r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][-+]?[0-9]+)?$"
        r"|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"
    ),
}
"""How Loader tells a number or a boolean from text, where it reads them as YAML 1.2 does."""
Loader.yaml_implicit_resolvers = {
    first: [(tag, _YAML_1_2.get(tag, regexp)) for tag, regexp in resolvers]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateJSON(_twice(key, "object"))
        data[key] = value
    return data


_SPACE = re.compile(r"[ \t\n\r]*")


def _second_key(text: str) -> int | None:
    """Where in `text`, JSON that holds a key twice in one object, the key _json_object
    refused is given again: the first repeated in the first object to close, as json.loads
    calls the hook (an inner object before the one holding it). Walked with a list of the
    objects and arrays open, not by recursion; each key and plain value read by json itself
    (a key written with escapes, `"\\u0078"`, is the `x` it is to the hook too)."""
    read = json.JSONDecoder().raw_decode
    open_: list[tuple[set[str], list[int]] | None] = []  # an object's keys and repeats
    key_next = False
    at = _skip_space(text, 0)
    while at < len(text):
        char = text[at]
        if char in "{[":
            open_.append((set(), []) if char == "{" else None)
            key_next, at = char == "{", at + 1
        elif char in "}]":
            closed = open_.pop() if open_ else None
            if closed is not None and closed[1]:
                return closed[1][0]
            at += 1
        elif char in ",:":
            key_next, at = char == "," and bool(open_) and open_[-1] is not None, at + 1
        else:
            try:
                value, end = read(text, at)
            except ValueError:  # (not the JSON json.loads read: not looked for further)
                return None
            if key_next and open_ and (keys := open_[-1]) is not None:
                if value in keys[0]:
                    keys[1].append(at)
                keys[0].add(value)
            key_next, at = False, end
        at = _skip_space(text, at)
    return None


def _skip_space(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found else at


def _suffix(text: str, path: str) -> str:
    """The file's suffix; SweepFileError for a file of another type, or too large."""
    suffix = Path(path).suffix.lower()
    if suffix not in FILE_SUFFIXES:
        raise SweepFileError(f"{path}: unknown sweep file type: use .yaml, .yml, .toml or .json")
    if len(text) > MAX_FILE_BYTES:
        raise too_large(path)
    return suffix


def too_large(path: str) -> SweepFileError:
    """The refusal of a sweep file larger than MAX_FILE_BYTES."""
    return SweepFileError(
        f"{path}: larger than {MAX_FILE_BYTES // 1024 // 1024} MiB: a sweep file lists"
        " parameters and their values; narrow it, or split it into sweeps"
    )


def parse_text(text: str, path: str) -> Any:
    """The file's data, by its suffix; SweepFileError for what cannot be read."""
    suffix = _suffix(text, path)
    try:
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix == ".json":
            return json.loads(text, object_pairs_hook=_json_object)
        return yaml.load(text, Loader=Loader)  # a SafeLoader
    except _Refused as exc:
        line = f":{exc.problem_mark.line + 1}" if exc.problem_mark else ""
        raise SweepFileError(f"{path}{line}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise SweepFileError(_yaml_problem(path, exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepFileError(_toml_problem(path, exc)) from None
    except json.JSONDecodeError as exc:
        raise SweepFileError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except _DuplicateJSON as exc:  # (the hook is not told where the object is: looked for)
        at = _second_key(text)
        line = "" if at is None else ":" + str(text.count("\n", 0, at) + 1)
        raise SweepFileError(f"{path}{line}: {exc}") from None
    except RecursionError:  # tomllib and json recurse once a level
        raise SweepFileError(f"{path}: {TOO_DEEP}") from None
    except ValueError as exc:  # a YAML date 2024-13-45, a number of 5000 digits
        if said := too_many_digits(exc):
            raise SweepFileError(f"{path}: {said}") from None
        raise SweepFileError(f"{path}: invalid value: {' '.join(str(exc).split())}") from None


def _toml_problem(path: str, exc: tomllib.TOMLDecodeError) -> str:
    """`file:line: invalid TOML: ... (column N)`, as YAML's and JSON's errors name their line;
    tomllib tells it only at the end of its text, `(at line 2, column 6)`."""
    found = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", str(exc), re.DOTALL)
    if found is None:  # `(at end of document)`: no line to name
        return f"{path}: invalid TOML: {exc}"
    what, line, column = found.groups()
    return f"{path}:{line}: invalid TOML: {what} (column {column})"


def _yaml_problem(path: str, exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    text = f"{context}: {problem}" if context else problem
    if "'\\t'" in str(problem):  # PyYAML's "found character '\t' that cannot start any token"
        column = f" (column {mark.column + 1})" if mark is not None else ""
        text = f"a tab{column}: YAML indents and separates with spaces only; replace it with spaces"
    line = f":{mark.line + 1}" if mark is not None else ""
    return f"{path}{line}: invalid YAML: {' '.join(str(text).split())}"
