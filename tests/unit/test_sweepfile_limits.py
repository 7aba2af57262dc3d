"""Sweep files that are too deep, too large, or hold values JSON cannot carry: refused as
they are read, in one line naming the place; and the point-count refusals of each surface."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuherd.core.sweep import CONFIRM_POINTS, MAX_POINTS, is_sweep_name, size_refusal
from gpuherd.core.sweep_values import MAX_DEPTH, MAX_VALUES
from gpuherd.sweepfile import MAX_FILE_BYTES, SweepFileError, load_sweep, parse_sweep

ALLOWED = "values must be strings, numbers, booleans, or lists or mappings of them"


def refused(text: str, path: str) -> str:
    with pytest.raises(SweepFileError) as caught:
        parse_sweep(text, path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(path), message
    return message


def laughs(levels: int) -> str:
    """YAML's "billion laughs": each anchor is a list of nine aliases of the one before."""
    lines = ["command: echo {x}", "fixed:", "  a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    for i in range(1, levels):
        lines.append(f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join([*lines, "grid: {x: [1]}", ""])


@pytest.mark.parametrize(
    ("path", "text", "where"),
    [
        ("deep.yaml", "command: echo {x}\ngrid:\n  x: " + "[" * 100_000 + "]" * 100_000, ":3: "),
        ("deep.toml", 'command = "echo {x}"\n[grid]\nx = ' + "[" * 5000 + "]" * 5000, ": "),
        ("deep.json", '{"grid": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}", ": "),
        # Under the parsers' recursion: the value check finds it, with the key path.
        ("deep.toml", 'command = "echo {x}"\n[grid]\nx = ' + "[" * 40 + "]" * 40, ": grid.x"),
    ],
)
def test_deep_nesting_is_one_line_not_a_recursion_error(path: str, text: str, where: str) -> None:
    message = refused(text, path)
    assert message.startswith(path + where), message
    assert "nested too deeply" in message and f"at most {MAX_DEPTH} levels" in message


def test_nesting_up_to_the_limit_is_read() -> None:
    # top-level mapping, fixed, then lists: MAX_DEPTH levels in all
    value = "[" * (MAX_DEPTH - 2) + "1" + "]" * (MAX_DEPTH - 2)
    loaded = parse_sweep(
        f"command: echo {{x}}\nfixed: {{v: {value}}}\ngrid: {{x: [1]}}\n", "s.yaml"
    )
    assert json.dumps(loaded.spec.fixed["v"]) == value
    message = refused(f"command: echo\nfixed: {{v: [{value}]}}\n", "s.yaml")
    assert message.startswith("s.yaml:2: nested too deeply"), message


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (
            "types.toml",
            'command = "echo {x}"\n[grid]\nx = [1, 1979-05-27T07:32:00Z]\n',
            "types.toml: grid.x[1]: 1979-05-27T07:32:00+00:00 is a date and time: ",
        ),
        (
            "types.toml",
            'command = "echo {x}"\n[fixed]\nday = 1979-05-27\n[grid]\nx = [1]\n',
            "types.toml: fixed.day: 1979-05-27 is a date: ",
        ),
        (
            "types.yaml",
            "command: echo {x}\ngrid:\n  x:\n    - 1\n    - 2024-01-01\n",
            "types.yaml:5: grid.x[1]: 2024-01-01 is a date: ",
        ),
        (
            "types.yaml",
            "grid:\n  x: [!!binary aGk=]\n",
            "types.yaml:2: grid.x[0]: b'hi' is binary data",
        ),
        (
            "types.yaml",
            "grid:\n  x: [!!set {a}]\n",
            "types.yaml:2: grid.x[0]: {'a'} is a set",
        ),
    ],
)
def test_values_json_cannot_carry_are_refused_naming_the_key(
    path: str, text: str, expected: str
) -> None:
    message = refused(text, path)
    assert message.startswith(expected) and ALLOWED in message, message


def test_dates_say_to_quote_them_and_quoted_dates_are_text() -> None:
    assert "(quote it to keep it as text)" in refused("grid: {x: [2024-01-01]}\n", "s.yaml")
    loaded = parse_sweep("command: echo {x}\ngrid: {x: ['2024-01-01']}\n", "s.yaml")
    assert loaded.spec.grids == ({"x": ("2024-01-01",)},)


def test_a_self_referencing_anchor_is_refused() -> None:
    message = refused("command: echo {x}\nfixed: &f {y: *f}\ngrid: {x: [1]}\n", "circ.yaml")
    assert message.startswith("circ.yaml:2: fixed.y: holds itself"), message
    assert ALLOWED in message


def test_billion_laughs_are_refused_after_a_bounded_walk() -> None:
    message = refused(laughs(9), "laughs.yaml")
    assert message == (
        f"laughs.yaml: more than {MAX_VALUES:,} values (an alias counts each time it is used):"
        " a sweep file lists parameters and their values; narrow it, or split it into sweeps"
    )
    small = parse_sweep(laughs(3), "laughs.yaml")  # 9 * 9 * 9 strings: fine
    assert len(small.spec.fixed["a2"]) == 9 and small.spec.fixed["a2"][0][0][0] == "lol"


def test_a_file_larger_than_the_limit_is_refused_unparsed(tmp_path: Path) -> None:
    values = ",".join(["1"] * (MAX_FILE_BYTES // 2))
    path = tmp_path / "flat.yaml"
    path.write_text(f"command: echo {{x}}\ngrid:\n  x: [{values}]\n")
    with pytest.raises(SweepFileError, match=r"flat\.yaml: larger than 1 MiB: .*narrow it"):
        load_sweep(path)
    with pytest.raises(SweepFileError, match="larger than 1 MiB"):
        parse_sweep(path.read_text(), "flat.yaml")


def test_unreadable_values_are_one_line() -> None:
    huge = "9" * 5000
    for path, text in [
        ("n.yaml", f"grid: {{x: [{huge}]}}\n"),
        ("n.toml", f"[grid]\nx = [{huge}]\n"),
        ("n.json", f'{{"grid": {{"x": [{huge}]}}}}'),
    ]:
        message = refused(text, path)
        assert "more than 4300 digits: quote it" in message, message
    assert "invalid value: month must be in 1..12" in refused("grid: {x: [2024-13-01]}\n", "d.yaml")


def test_a_json_file_gives_the_same_sweep_as_yaml(tmp_path: Path) -> None:
    data = {"command": "echo {x} {y}", "fixed": {"y": {"a": [1, None]}}, "grid": {"x": [1, "b"]}}
    (tmp_path / "s.json").write_text(json.dumps(data))
    (tmp_path / "s.yaml").write_text(json.dumps(data))  # JSON is YAML
    from_json, from_yaml = load_sweep(tmp_path / "s.json"), load_sweep(tmp_path / "s.yaml")
    assert from_json.spec == from_yaml.spec
    assert from_json.spec.name == "s" and from_json.spec.grids == ({"x": (1, "b")},)
    message = refused('{"command": "echo {x}",\n "grid": {"x": [1,]}}', "s.json")
    assert message.startswith("s.json:2: invalid JSON: "), message
    assert refused('{"grid": {"x": [1]}, "gpu": 2}', "s.json").startswith(
        "s.json:1: unknown key 'gpu'"
    )


def test_each_surface_spells_its_own_way_past_the_point_limits() -> None:
    cli = size_refusal(
        "big",
        CONFIRM_POINTS + 1,
        yes=False,
        action="pass --yes to submit them all",
        samples="--samples N",
    )
    assert cli == (
        "sweep 'big' has 10,001 points, more than 10,000: pass --yes to submit them all,"
        " or narrow it (--samples N)"
    )
    assert size_refusal("big", CONFIRM_POINTS + 1, yes=True, action="x", samples="y") is None
    assert size_refusal("big", CONFIRM_POINTS, yes=False, action="x", samples="y") is None
    for yes in (False, True):  # past MAX_POINTS, --yes does not help: not offered
        too_many = size_refusal("big", 3_200_000, yes=yes, action="pass --yes", samples="-s")
        assert too_many == (
            f"sweep 'big' has 3,200,000 points, more than {MAX_POINTS:,} (the most a sweep may"
            " have): narrow it, or draw some of them (-s)"
        )


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("digits", True),
        ("a b", True),
        ("..", False),  # results/.. is the working folder itself
        (".", False),
        ("..x", True),
        ("", False),
        ("../../etc", False),
        (" x", False),
        ("x\n", False),
    ],
)
def test_sweep_names(name: str, ok: bool) -> None:
    assert is_sweep_name(name) is ok
