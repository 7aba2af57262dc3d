"""What sweep values become: non-finite numbers, booleans and null, values that print alike,
and the results folder a sweep file gives when it names none."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from gpuherd.api.views_sweeps import metric_text as cell
from gpuherd.cli.sweep_args import typed
from gpuherd.core.sweep import SweepError, SweepSpec, expand, folder_name, render, value_text
from gpuherd.core.sweep_values import alike_values, check_finite, json_safe, metric_text
from gpuherd.sweepfile import SweepFileError, parse_sweep


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "True"), (False, "False"), (None, "None"), (1, "1"), (1.0, "1.0"), ("x", "x")],
)
def test_values_read_as_python_spells_them_as_gpu_task_scheduler_names_folders(
    value: Any, text: str
) -> None:
    assert value_text(value) == text
    assert render("run {v}", {"v": value}, "/r", "s", 0) == f"run {text}"
    assert render("run {v!s}", {"v": value}, "/r", "s", 0) == f"run {text}"
    assert folder_name({"v": value}, ["v"]) == f"v={text}"


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "NaN", "Infinity"])
def test_typed_keeps_non_finite_numbers_as_the_text_given(text: str) -> None:
    assert typed(text) == text
    assert (typed("0.5"), typed("-1"), typed("1e-3")) == (0.5, -1, "1e-3")


def test_check_finite_names_the_key_of_a_non_finite_number() -> None:
    check_finite({"grids": [{"lr": [0.1, "nan", 1e308]}], "fixed": {"a": None}})
    for value, shown in ((math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")):
        with pytest.raises(SweepError) as err:
            check_finite({"grids": [{"lr": [0.1, value]}]})
        assert str(err.value) == (
            f"grids[0].lr[1]: {shown} is not a finite number (JSON has no NaN or Infinity):"
            f" quote it ('{shown}') to pass it as text"
        )
        assert err.value.loc == ("grids", 0, "lr", 1)


@pytest.mark.parametrize(
    ("suffix", "text", "line"),
    [
        (".yaml", "command: echo {x}\ngrid:\n  x: [1, .inf]\n", ":3"),
        (".toml", 'command = "echo {x}"\n[grid]\nx = [1, inf]\n', ""),
        (".json", '{"command": "echo {x}",\n "grid": {"x": [1, Infinity]}}', ":2"),
    ],
)
def test_a_sweep_file_with_a_non_finite_number_is_refused(
    suffix: str, text: str, line: str
) -> None:
    with pytest.raises(SweepFileError) as err:
        parse_sweep(text, f"s{suffix}")
    assert str(err.value) == (
        f"s{suffix}{line}: grid.x[1]: inf is not a finite number (JSON has no NaN or Infinity):"
        " quote it ('inf') to pass it as text"
    )


def test_json_safe_spells_non_finite_numbers_as_text() -> None:
    data = {"a": [math.nan, math.inf, -math.inf, 1.5, True, None], "b": {"c": math.nan}}
    safe = json_safe(data)
    assert safe == {"a": ["nan", "inf", "-inf", 1.5, True, None], "b": {"c": "nan"}}
    json.dumps(safe, allow_nan=False)
    same = {"x": [1, "y"]}
    assert json_safe(same) == same


def test_values_that_read_alike_are_named_in_a_warning() -> None:
    spec = SweepSpec(
        name="s",
        command="echo {x} {y}",
        grids=({"x": (1, "1", True, "True", 2, 2), "y": (None, "None")}, {"x": (1.0, 1), "y": [0]}),
    )
    assert alike_values(spec) == [
        "grid[0].x: value 2 is given twice: a value given more than once is one point",
        'grid[0].x: 1 and "1" both read 1; true and "True" both read True: values that read'
        " the same are one point (the first one runs)",
        'grid[0].y: null and "None" both read None: values that read the same are one point'
        " (the first one runs)",
    ]
    assert [p.command for p in expand(spec)][:2] == ["echo 1 None", "echo True None"]
    plain = SweepSpec(name="s", command="echo {x}", grids=({"x": (1, 1.0, "a")},))
    assert alike_values(plain) == []


def test_a_sweep_files_default_results_folder_follows_its_name(tmp_path: Path) -> None:
    loaded = parse_sweep("command: echo {x} {run_dir}\ngrid: {x: [1]}\n", "sw2.yml")
    assert loaded.spec.results_dir == "results/{sweep}"
    assert loaded.spec.results_path == "results/sw2"
    renamed = dataclasses.replace(loaded.spec, name="varB")
    assert renamed.results_path == "results/varB"
    assert [p.run_dir for p in expand(renamed)] == ["results/varB/x=1"]
    assert expand(renamed)[0].command == "echo 1 results/varB/x=1"
    own = parse_sweep("command: echo {x}\nresults_dir: out\ngrid: {x: [1]}\n", "o.yml")
    assert dataclasses.replace(own.spec, name="other").results_path == "out"


def test_a_metric_that_is_not_a_number_shows_as_text_or_json() -> None:
    assert [metric_text(v) for v in (None, "x y", True, [2, 3], {"a": 1})] == [
        "",
        "x y",
        "true",
        "[2, 3]",
        '{"a": 1}',
    ]
    assert [cell(v) for v in (True, [0.5], 0.123456789, 3)] == ["true", "[0.5]", "0.123457", "3"]
