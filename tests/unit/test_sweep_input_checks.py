"""Sweep input that used to be taken silently or refused in internal words: keys and values
given twice, a sample of a grid too large to list, an exclude that leaves no point, NaN from
Python, a broken exclude expression, a list where a distribution goes, an empty command."""

from __future__ import annotations

import dataclasses
import itertools
import math
from random import Random

import pytest

from gpuherd.cli import sweep_render
from gpuherd.core.sweep import (
    MAX_POINTS,
    Distribution,
    ResumePlan,
    SweepError,
    SweepSpec,
    count,
    expand,
)
from gpuherd.core.sweep_values import alike_values
from gpuherd.sweepfile import SweepFileError, parse_sweep

# ---- keys given twice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("s.yaml", "command: echo {x}\ngrid: {x: [1, 2], x: [3]}\n", "s.yaml:2"),
        ("s.yaml", "command: echo {x}\ngrid:\n  x: [1, 2]\n  y: [0]\n  x: [3]\n", "s.yaml:5"),
        ("s.yml", "command: echo {x}\ncommand: echo {x} {x}\ngrid: {x: [1]}\n", "s.yml:2"),
        ("s.json", '{"command": "echo {x}", "grid": {"x": [1, 2], "x": [3]}}', "s.json:1"),
    ],
)
def test_a_key_given_twice_is_refused_with_its_name(name: str, text: str, where: str) -> None:
    # YAML and JSON kept the last one: `x: [3]` alone ran, and nothing said so.
    with pytest.raises(SweepFileError) as err:
        parse_sweep(text, name)
    mapping = "object" if name.endswith(".json") else "mapping"
    key = "command" if "command: echo {x} {x}" in text else "x"
    assert str(err.value) == (
        f"{where}: key {key!r} is given twice in one {mapping}: give each key once (with all"
        " its values)"
    )


def test_keys_that_yaml_reads_as_one_are_twice_too() -> None:
    # (`yes:` and `true:` were one key too: a key read as true or false is refused now; `1:`
    # and `+1:` too, before `+1` was kept as the text written, as a value is)
    with pytest.raises(SweepFileError, match=r"s\.yaml:4: key '\.5' is given twice"):
        parse_sweep("command: echo {x}\nfixed:\n  0.5: 1\n  .5: 2\ngrid: {x: [1]}\n", "s.yaml")


def test_a_merge_key_may_still_override_what_it_merges() -> None:
    text = (
        "command: echo {x} {y}\n"
        "fixed: &base {x: 1, y: 2}\n"
        "grid:\n  <<: *base\n  x: [3, 4]\n  y: [5]\n"
    )
    spec = parse_sweep(text, "s.yaml").spec
    assert [p.command for p in expand(spec)] == ["echo 3 5", "echo 4 5"]


# ---- values given twice ---------------------------------------------------------------------


def test_a_value_given_twice_is_warned_of_as_one_point() -> None:
    spec = SweepSpec(name="s", command="echo {lr} {bs}", grids=({"lr": (1, 1, 2), "bs": (8,)},))
    assert alike_values(spec) == [
        "grid.lr: value 1 is given twice: a value given more than once is one point"
    ]
    assert [p.command for p in expand(spec)] == ["echo 1 8", "echo 2 8"]
    many = SweepSpec(name="s", grids=({"o": ("a", "b", "a", "b", "a"), "n": (None, None)},))
    assert alike_values(many) == [
        'grid.o: value "a" is given 3 times, value "b" is given twice: a value given more than'
        " once is one point",
        "grid.n: value null is given twice: a value given more than once is one point",
    ]


def test_a_choice_given_a_value_twice_weighs_it_and_is_not_warned_of() -> None:
    spec = SweepSpec(
        name="s",
        command="echo {o}",
        random={"o": Distribution("choice", values=("adam", "adam", "sgd"))},
        samples=2,
        seed=1,
    )
    assert alike_values(spec) == []


def test_a_sweep_files_repeated_value_is_warned_of_too() -> None:
    spec = parse_sweep("command: echo {x}\ngrid:\n  x: [1, 1, 2]\n", "s.yaml").spec
    assert alike_values(spec) == [
        "grid.x: value 1 is given twice: a value given more than once is one point"
    ]


# ---- a sample of a grid too large to list ---------------------------------------------------


def big(samples: int, seed: int = 3, **changes: object) -> SweepSpec:
    """101 x 100 x 100 = 1,010,000 points: more than MAX_POINTS."""
    grid = {"a": tuple(range(101)), "b": tuple(range(100)), "c": tuple(range(100))}
    spec = SweepSpec(name="big", command="echo {a} {b} {c}", grids=(grid,), samples=samples)
    return dataclasses.replace(spec, seed=seed, **changes)


def test_samples_of_a_grid_over_the_cap_are_drawn_without_listing_it() -> None:
    # It was refused: "grid: 1010000 points, more than 1000000; narrow it".
    spec = big(50)
    assert count(spec) == 50
    points = expand(spec)
    assert len(points) == 50
    combos = [(p.params["a"], p.params["b"], p.params["c"]) for p in points]
    assert len(set(combos)) == 50
    assert all(0 <= a <= 100 and 0 <= b <= 99 and 0 <= c <= 99 for a, b, c in combos)
    assert [p.folder for p in points][:1] == ["a={},b={},c={}".format(*combos[0])]
    assert [p.index for p in points] == list(range(50))
    assert expand(big(50)) == points  # the same seed, the same points, in the same order
    assert expand(big(50, seed=4)) != points
    assert len({a for a, _, _ in combos}) > 10  # drawn over the grid, not from its start


def test_a_sample_of_a_large_grid_decodes_each_index_as_the_product_orders_it() -> None:
    spec = big(20, seed=11)
    rng = Random(11)
    expected = []
    for _ in range(20):  # the draws, decoded: the last key varies fastest
        index = rng.randrange(1_010_000)
        expected.append((index // 10_000, index // 100 % 100, index % 100))
    assert [(p.params["a"], p.params["b"], p.params["c"]) for p in expand(spec)] == expected


def test_a_sample_of_a_large_grid_keeps_exclude_and_distinct_points() -> None:
    spec = big(200, exclude_expr="a % 2 == 0", exclude=({"c": 5},))
    points = expand(spec)
    assert len(points) == 200
    assert all(p.params["a"] % 2 == 1 and p.params["c"] != 5 for p in points)
    nothing = big(5, exclude_expr="a >= 0")
    with pytest.raises(SweepError, match=r"samples: found only 0 distinct points of 5 in 10,050"):
        expand(nothing)


def test_a_point_of_two_grids_is_drawn_under_the_first_ones_folder() -> None:
    # Grid 0 holds a=0 only; grid 1 all of it, with b fixed: a=0's points are grid 0's, named
    # as the listed grids would name them (a,b varying), never as grid 1's (c only).
    first = {"a": (0,), "b": (7,), "c": tuple(range(10))}
    second = {"a": tuple(range(2000)), "c": tuple(range(10)), "d": tuple(range(60))}
    spec = SweepSpec(
        name="two", fixed={"b": 7, "d": 0}, grids=(first, second), samples=3000, seed=5
    )
    assert sum(math.prod(map(len, g.values())) for g in spec.grids) > MAX_POINTS
    points = expand(spec)
    assert len({p.folder for p in points}) == 3000
    for point in points:
        if point.params["a"] == 0 and point.params["d"] == 0:
            assert point.folder == f"a=0,b=7,c={point.params['c']}"


def test_a_sample_of_a_grid_that_fits_draws_what_it_drew_before() -> None:
    spec = SweepSpec(
        name="s",
        grids=({"x": tuple(range(30)), "y": tuple(range(40))},),
        exclude_expr="x == y",
        samples=25,
        seed=9,
    )
    listed = [dict(zip("xy", v, strict=True)) for v in itertools.product(range(30), range(40))]
    kept = [p for p in listed if p["x"] != p["y"]]
    assert [dict(p.params) for p in expand(spec)] == Random(9).sample(kept, 25)


def test_more_than_the_cap_without_samples_is_still_refused_with_separators() -> None:
    with pytest.raises(SweepError, match="grid: 1,010,000 points, more than 1,000,000; narrow"):
        expand(dataclasses.replace(big(5), samples=None, seed=None))


# ---- exclude that leaves nothing ------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "what"),
    [
        ({"exclude_expr": "True"}, "expression 'True'"),
        ({"exclude_expr": "x > 0"}, "expression 'x > 0'"),
        ({"exclude": ({"x": 1}, {"x": 2})}, "the list"),
        ({"exclude": ({"x": 1},), "exclude_expr": "x == 2"}, "it"),
    ],
)
def test_an_exclude_that_removes_every_point_is_refused(
    changes: dict[str, object], what: str
) -> None:
    spec = SweepSpec(name="s", command="echo {x}", grids=({"x": (1, 2)},), **changes)  # type: ignore[arg-type]
    with pytest.raises(SweepError) as err:
        expand(spec)
    assert str(err.value) == (
        f"exclude: {what} removes every point of the grid (2 of 2); loosen it so some remain"
    )
    with pytest.raises(SweepError, match="removes every point"):
        expand(dataclasses.replace(spec, samples=1, seed=0))


# ---- plain words for bad values -------------------------------------------------------------


def test_nan_given_from_python_names_the_parameter_as_written() -> None:
    # The daemon said `grids[0].x[0]`: the key path of its own JSON, not the user's.
    with pytest.raises(SweepError) as err:
        SweepSpec(name="s", command="echo {x}", grids=({"x": (1, math.nan)},))
    assert str(err.value) == (
        "grid.x[1]: nan is not a finite number (JSON has no NaN or Infinity): quote it ('nan')"
        " to pass it as text"
    )
    with pytest.raises(SweepError, match=r"^grid\[1\]\.y\[0\]: inf is not a finite number"):
        SweepSpec(name="s", grids=({"y": (1,)}, {"y": (math.inf,)}))
    with pytest.raises(SweepError, match=r"^fixed\.e: -inf is not a finite number"):
        SweepSpec(name="s", fixed={"e": -math.inf})
    with pytest.raises(SweepError, match=r"^random\.o\.choice\[0\]: nan is not"):
        SweepSpec(name="s", random={"o": Distribution("choice", values=(math.nan,))}, samples=1)


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ("x ===", "invalid syntax at column 5"),
        ("  x ===", "invalid syntax at column 7"),
        ("(x", "'(' was never closed at column 1"),
        ("x\0", "source code string cannot contain null bytes"),
    ],
)
def test_a_broken_exclude_expression_is_one_plain_line(expr: str, problem: str) -> None:
    # It said `invalid syntax (invalid syntax (<unknown>, line 1))`.
    with pytest.raises(SweepError) as err:
        SweepSpec(name="s", grids=({"x": (1,)},), exclude_expr=expr)
    assert str(err.value) == (
        f"exclude: expression {expr!r}: not a Python expression ({problem}): write one over"
        " the parameters, as lr > 0.1 and bs == 64"
    )


@pytest.mark.parametrize(
    ("value", "given"), [("[1, 2, 3]", "a list"), ("5", "5"), ("adam", "'adam'")]
)
def test_a_random_parameter_that_is_not_a_distribution_says_what_to_give(
    value: str, given: str
) -> None:
    # It said `Input should be a valid dictionary or instance of _Random`.
    text = f"command: echo {{lr}}\nsamples: 2\nrandom:\n  lr: {value}\n"
    with pytest.raises(SweepFileError) as err:
        parse_sweep(text, "s.yaml")
    assert str(err.value) == (
        f"s.yaml:4: random.lr: {given} is not a distribution: give choice: [values] (drawn from"
        " them), or uniform, loguniform or int: [low, high]"
    )


@pytest.mark.parametrize("command", ["", "   ", "\n"])
def test_an_empty_command_is_refused_by_the_spec(command: str) -> None:
    with pytest.raises(SweepError) as err:
        SweepSpec(name="s", command=command, grids=({"lr": (0.1,)},))
    assert str(err.value) == (
        "command: empty; give the command to run for each point, with placeholders such as"
        ' "python train.py --lr {lr}"'
    )
    with pytest.raises(SweepFileError, match=r"^s\.yaml:1: command: empty;"):
        parse_sweep('command: ""\ngrid: {lr: [1]}\n', "s.yaml")


# ---- counts with separators -----------------------------------------------------------------


def test_counts_in_sweep_output_have_thousands_separators() -> None:
    answer = {
        "name": "s",
        "points": 5000,
        "results_dir": "/r/s",
        "ids": list(range(1, 5001)),
        "new": 4000,
        "rerun_failed": 1000,
        "rerun_done": 0,
        "skipped_done": 1200,
        "skipped_active": 0,
    }
    assert sweep_render.summary(answer).splitlines()[:2] == [
        "sweep s: 5,000 points in /r/s",
        "submitted 5,000 jobs (1-5000): 4,000 new, 1,000 failed rerun, 1,200 done skipped,"
        " 0 already queued or running skipped",
    ]
    spec = SweepSpec(name="s", grids=({"x": tuple(range(2000))},))
    points = tuple(expand(spec))
    plan = ResumePlan(to_run=points, skipped_done=(), rerun_failed=(), new=points)
    assert plan.summary() == "2,000 to run: 2,000 new, 0 failed to rerun, 0 done (skipped)"
