"""Sweep expansion, folder names, command rendering, exclude expressions and resume plans."""

from __future__ import annotations

import dataclasses
import itertools
import math
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.sweep import (
    MAX_FOLDER_BYTES,
    Distribution,
    Point,
    SweepError,
    SweepSpec,
    compile_expr,
    count,
    evaluate,
    expand,
    folder_name,
    plan_resume,
    render,
    unused_params,
    value_text,
)

PROPS = settings(max_examples=100, deadline=None)

HYPERSEARCH = "python3 train_dnn.py --lr {lr} --batch_size {bs}"
LRS = (0.001, 0.0005, 0.0001)
BSS = (32, 64, 128)


def hypersearch(**changes: Any) -> SweepSpec:
    spec = SweepSpec(name="hs", command=HYPERSEARCH, grids=({"lr": LRS, "bs": BSS},))
    return dataclasses.replace(spec, **changes)


def identity(point: Point) -> frozenset[tuple[str, str]]:
    return frozenset((k, value_text(v)) for k, v in point.params.items())


# ---- the simple_hypersearch README ----------------------------------------------------------


def test_hypersearch_grid_gives_nine_commands_in_order() -> None:
    points = expand(hypersearch())
    assert [p.command for p in points] == [
        f"python3 train_dnn.py --lr {lr} --batch_size {bs}" for lr in LRS for bs in BSS
    ]
    assert [p.index for p in points] == list(range(9))
    assert points[0].folder == "lr=0.001,bs=32"
    assert points[0].run_dir == "results/hs/lr=0.001,bs=32"  # each sweep in its own folder
    assert points[0].varying == ("lr", "bs")


def test_hypersearch_five_samples_are_distinct_grid_points() -> None:
    grid = {p.command for p in expand(hypersearch())}
    sampled = [p.command for p in expand(hypersearch(samples=5, seed=1))]
    assert len(sampled) == len(set(sampled)) == 5
    assert set(sampled) <= grid


def test_same_seed_same_order_other_seed_other_order() -> None:
    def run(seed: int, **kw: Any) -> list[str | None]:
        return [p.command for p in expand(hypersearch(seed=seed, **kw))]

    assert run(1, samples=5) == run(1, samples=5)
    assert run(1, samples=5) != run(2, samples=5)
    assert run(7, shuffle=True) == run(7, shuffle=True)
    assert sorted(map(str, run(7, shuffle=True))) == sorted(map(str, run(0)))
    assert run(7, shuffle=True) != run(8, shuffle=True)


def test_shuffle_and_samples_need_a_seed() -> None:
    with pytest.raises(SweepError, match="seed"):
        expand(hypersearch(shuffle=True))
    with pytest.raises(SweepError, match="seed"):
        expand(hypersearch(samples=3))


def test_more_samples_than_grid_points_is_an_error_with_the_count() -> None:
    with pytest.raises(SweepError, match="only 9 points"):
        expand(hypersearch(samples=10, seed=0))
    with pytest.raises(SweepError, match="only 8 points"):
        expand(hypersearch(samples=9, seed=0, exclude=({"lr": 0.001, "bs": 32},)))
    one = SweepSpec(name="one", command="echo {lr}", grids=({"lr": [0.1]},), samples=2, seed=0)
    with pytest.raises(SweepError, match=r"only 1 point$"):  # (it said "1 points")
        expand(one)


# ---- the GPU Task Scheduler README ----------------------------------------------------------

GTS_POINTS = [
    {"num_run": 5, "num_epoch": 200, "method": "GAN", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "ALI", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 2},
]


def test_gpu_task_scheduler_example_gives_its_four_points() -> None:
    spec = SweepSpec(
        name="gan",
        fixed={"num_run": 5, "num_epoch": 200},
        grids=(
            {"method": ("GAN", "ALI"), "num_packing": (1,), "num_zmode": (1,)},
            {"method": ("WGAN",), "num_packing": (3,), "num_zmode": (1, 2)},
        ),
    )
    points = expand(spec)
    assert [dict(p.params) for p in points] == GTS_POINTS
    assert [p.folder for p in points][2] == "method=WGAN,num_packing=3,num_zmode=1"
    assert all(p.command is None for p in points)
    assert count(spec) == 4


def test_a_grid_value_overrides_a_fixed_one_for_its_points() -> None:
    spec = SweepSpec(
        name="s",
        fixed={"dropout": 0.1, "epochs": 3},
        grids=({"lr": (1, 2)}, {"lr": (1,), "dropout": (0.5,)}),
    )
    points = expand(spec)
    assert [(p.params["lr"], p.params["dropout"]) for p in points] == [(1, 0.1), (2, 0.1), (1, 0.5)]
    assert [p.folder for p in points] == ["lr=1", "lr=2", "lr=1,dropout=0.5"]


def test_duplicates_across_grids_are_dropped_whatever_the_key_order() -> None:
    spec = SweepSpec(name="s", grids=({"a": (1, 2), "b": ("x",)}, {"b": ("x", "y"), "a": (2,)}))
    assert [p.folder for p in expand(spec)] == ["a=1,b=x", "a=2,b=x", "a=2,b=y"]


def test_no_grid_gives_one_point_of_the_fixed_values() -> None:
    (point,) = expand(SweepSpec(name="s", command="run {x}", fixed={"x": 1}))
    assert point.folder == "point_0"
    assert point.command == "run 1"
    assert folder_name({"x": 1}, (), index=3) == "point_3"


# ---- random search --------------------------------------------------------------------------


def test_random_draws_stay_in_their_ranges_and_repeat_with_the_seed() -> None:
    spec = SweepSpec(
        name="r",
        command="train {lr} {layers} {opt} {bs}",
        grids=({"bs": (32, 64)},),
        random={
            "lr": Distribution("loguniform", low=1e-5, high=1e-2),
            "layers": Distribution("int", low=1, high=3),
            "opt": Distribution("choice", values=("adam", "sgd")),
        },
        samples=40,
        seed=3,
    )
    points = expand(spec)
    assert len({identity(p) for p in points}) == 40
    assert all(1e-5 <= p.params["lr"] <= 1e-2 for p in points)
    assert {p.params["layers"] for p in points} == {1, 2, 3}
    assert {p.params["opt"] for p in points} == {"adam", "sgd"}
    assert sum(p.params["bs"] == 32 for p in points) == 20  # grid points in balanced rounds
    assert points[0].varying == ("bs", "lr", "layers", "opt")
    assert [p.command for p in expand(spec)] == [p.command for p in points]
    assert count(spec) == 40


def test_random_without_samples_or_with_too_many_samples_is_refused() -> None:
    choice = {"opt": Distribution("choice", values=("a", "b"))}
    with pytest.raises(SweepError, match="samples"):
        SweepSpec(name="r", random=choice)
    with pytest.raises(SweepError, match="only 2 distinct"):
        expand(SweepSpec(name="r", random=choice, samples=3, seed=0))


@pytest.mark.parametrize(
    ("kind", "low", "high"),
    [("loguniform", 0.0, 1.0), ("uniform", 2.0, 1.0), ("int", 0.5, 2.0), ("uniform", 0, math.inf)],
)
def test_bad_distributions_are_refused(kind: Any, low: float, high: float) -> None:
    with pytest.raises(SweepError, match=kind):
        Distribution(kind, low=low, high=high)


@PROPS
@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    samples=st.integers(1, 30),
    seed=st.integers(0, 2**32),
)
def test_samples_never_repeat_a_point(sizes: list[int], samples: int, seed: int) -> None:
    dists = {f"k{i}": Distribution("int", low=0, high=n - 1) for i, n in enumerate(sizes)}
    spec = SweepSpec(name="r", random=dists, samples=samples, seed=seed)
    if samples > math.prod(sizes):
        with pytest.raises(SweepError):
            expand(spec)
        return
    points = expand(spec)
    assert len(points) == samples
    assert len({identity(p) for p in points}) == samples
    assert len({p.folder for p in points}) == samples


# ---- properties of grids --------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "lr", "bs"])
VALUES = st.one_of(
    st.integers(-50, 50),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=6),
    st.booleans(),
)
GRID = st.dictionaries(
    KEYS, st.lists(VALUES, min_size=1, max_size=4, unique_by=value_text), min_size=1, max_size=3
)


def as_grid(grid: Mapping[str, list[Any]]) -> dict[str, tuple[Any, ...]]:
    return {k: tuple(v) for k, v in grid.items()}


def naive(grids: list[dict[str, list[Any]]]) -> list[frozenset[tuple[str, str]]]:
    out: list[frozenset[tuple[str, str]]] = []
    for grid in grids:
        for values in itertools.product(*grid.values()):
            key = frozenset((k, value_text(v)) for k, v in zip(grid, values, strict=True))
            if key not in out:
                out.append(key)
    return out


@PROPS
@given(grid=GRID)
def test_grid_size_is_the_product_of_the_list_lengths(grid: dict[str, list[Any]]) -> None:
    spec = SweepSpec(name="s", grids=(as_grid(grid),))
    points = expand(spec)
    assert len(points) == math.prod(len(v) for v in grid.values()) == count(spec)


@PROPS
@given(grids=st.lists(GRID, min_size=1, max_size=3))
def test_joined_grids_give_each_point_once_in_order(grids: list[dict[str, list[Any]]]) -> None:
    points = expand(SweepSpec(name="s", grids=tuple(as_grid(g) for g in grids)))
    assert [identity(p) for p in points] == naive(grids)


@PROPS
@given(
    grids=st.lists(GRID, min_size=1, max_size=3),
    sep=st.sampled_from([(",", "="), ("+", "-"), (";", ":")]),
)
def test_folder_names_are_unique_legal_and_stable(
    grids: list[dict[str, list[Any]]], sep: tuple[str, str]
) -> None:
    spec = SweepSpec(
        name="s", grids=tuple(as_grid(g) for g in grids), item_sep=sep[0], kv_sep=sep[1]
    )
    points = expand(spec)
    folders = [p.folder for p in points]
    assert len(set(folders)) == len(folders)
    for point in points:
        name = point.folder
        assert "/" not in name and "\0" not in name and not name.startswith(".")
        assert len(name.encode()) <= min(255, MAX_FOLDER_BYTES)
        assert name == folder_name(point.params, point.varying, *sep)
    # Adding a value to a grid renames no existing point.
    grown = [{k: [*v, "added"] if k == next(iter(g)) else v for k, v in g.items()} for g in grids]
    spec2 = dataclasses.replace(spec, grids=tuple(as_grid(g) for g in grown))
    assert set(folders) <= {p.folder for p in expand(spec2)}


@pytest.mark.parametrize(
    ("value", "folder"),
    [
        (0.1, "x=0.1"),
        (1e-05, "x=1e-05"),
        ("adam", "x=adam"),
        (True, "x=True"),
        (None, "x=None"),
        ("a/b c", "x=a_b_c~"),
        ("../up", "x=.._up~"),
        ("x" * 300, "x=" + "x" * 89 + "~"),
    ],
)
def test_folder_name_examples(value: Any, folder: str) -> None:
    name = folder_name({"x": value}, ["x"])
    if folder.endswith("~"):
        assert name.startswith(folder) and len(name) == len(folder) + 8
    else:
        assert name == folder


def test_separator_characters_in_values_cannot_forge_another_point() -> None:
    one = folder_name({"a": "1,b=2"}, ["a", "b"])
    two = folder_name({"a": "1", "b": "2"}, ["a", "b"])
    assert two == "a=1,b=2" and one != two


# ---- exclude --------------------------------------------------------------------------------


@PROPS
@given(
    grid=st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True),
        min_size=1,
    ),
    data=st.data(),
)
def test_exclude_removes_exactly_the_matching_points(
    grid: dict[str, list[int]], data: st.DataObject
) -> None:
    keys = list(grid)
    partials = data.draw(
        st.lists(st.dictionaries(st.sampled_from(keys), st.integers(0, 3), min_size=1), max_size=3)
    )
    expr = data.draw(expressions(keys))
    spec = SweepSpec(name="s", grids=(as_grid(grid),), exclude=tuple(partials), exclude_expr=expr)
    expected = []
    for values in itertools.product(*grid.values()):
        point = dict(zip(keys, values, strict=True))
        if any(all(point[k] == v for k, v in p.items()) for p in partials):
            continue
        if eval(expr, {"__builtins__": {}}, dict(point)):  # trusted: generated just above
            continue
        expected.append(point)
    if not expected:  # a sweep of no points is refused, not submitted empty
        with pytest.raises(SweepError, match="removes every point of the grid"):
            expand(spec)
        return
    assert [dict(p.params) for p in expand(spec)] == expected


def expressions(names: list[str]) -> st.SearchStrategy[str]:
    """Small expressions of the allowed grammar (no division: no zero errors)."""
    atoms = st.one_of(st.sampled_from(names), st.integers(-3, 5).map(str))
    arith = st.builds(lambda a, op, b: f"({a} {op} {b})", atoms, st.sampled_from("+-*"), atoms)
    value = st.one_of(atoms, arith)
    ops = st.sampled_from(["<", "<=", "==", "!=", ">", ">="])
    compare = st.one_of(
        st.builds(lambda a, op, b: f"{a} {op} {b}", value, ops, value),
        st.builds(lambda a, xs: f"{a} in {tuple(xs)}", value, st.lists(st.integers(0, 3))),
        st.builds(lambda a, xs: f"{a} not in {list(xs)}", value, st.lists(st.integers(0, 3))),
    )
    return st.recursive(
        compare,
        lambda inner: st.one_of(
            st.builds(lambda a, b: f"({a} and {b})", inner, inner),
            st.builds(lambda a, b: f"({a} or {b})", inner, inner),
            st.builds(lambda a: f"not ({a})", inner),
            st.builds(lambda a, b, c: f"({a} if {b} else {c})", inner, inner, inner),
        ),
        max_leaves=6,
    )


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('touch {marker}')",
        "lr.__class__",
        "lr[0]",
        "(lambda: 1)()",
        "[x for x in (1, 2)]",
        "(y := 1)",
        "f'{{lr}}'",
        "__builtins__",
        "open('{marker}', 'w')",
        "nope > 1",
    ],
)
def test_unsafe_or_unknown_exclude_expressions_are_refused_unrun(expr: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = expr.format(marker=marker)
    with pytest.raises(SweepError, match="exclude: expression") as caught:
        SweepSpec(name="s", grids=({"lr": (1, 2)},), exclude_expr=text)
    assert repr(text) in str(caught.value)
    assert not marker.exists()


def test_exclude_expression_errors_name_the_expression_and_point() -> None:
    spec = SweepSpec(name="s", grids=({"lr": (1, 2)},), exclude_expr="lr < 'x'")
    with pytest.raises(SweepError, match=r"lr < 'x'.*'lr': 1"):
        expand(spec)
    with pytest.raises(SweepError, match="too large"):
        evaluate(compile_expr("'a' * lr", ["lr"]), {"lr": 10**7}, "'a' * lr")
    with pytest.raises(SweepError, match="invalid syntax"):
        compile_expr("lr <", ["lr"])


def test_exclude_expression_sees_missing_keys_as_none() -> None:
    spec = SweepSpec(
        name="s", grids=({"a": (1, 2)}, {"b": (1,)}), exclude_expr="b == None and a == 2"
    )
    assert [p.folder for p in expand(spec)] == ["a=1", "b=1"]


# ---- commands -------------------------------------------------------------------------------

NASTY = ['it\'s "quoted"', "a b", "; rm -rf ~", "$(echo hi) `x` $HOME", "back\\slash", "", "*"]


def sh_args(command: str) -> list[str]:
    out = subprocess.run(["sh", "-c", command], capture_output=True, check=True, timeout=10)
    return out.stdout.decode().split("\0")[:-1]


def test_values_reach_the_program_as_one_argument_each() -> None:
    spec = SweepSpec(
        name="my sweep",
        command="printf '%s\\0' {v} {run_dir} {sweep} {index}",
        grids=({"v": tuple(NASTY)},),
        results_dir="/tmp/res dir",
    )
    for point in expand(spec):
        assert point.command is not None
        assert sh_args(point.command) == [
            point.params["v"],
            point.run_dir,
            "my sweep",
            str(point.index),
        ]


@PROPS
@given(value=st.text(st.characters(blacklist_characters="\0", codec="utf-8")))
def test_any_text_value_reaches_the_program_intact(value: str) -> None:
    command = render("printf '%s\\0' {v}", {"v": value}, "d", "s", 0)
    assert sh_args(command) == [value]


def test_render_braces_formats_and_conversions() -> None:
    params = {"lr": 0.000123, "name": "x y"}
    assert render("{{literal}} {lr:.1e} {name!r}", params, "d", "s", 2) == (
        "{literal} 1.2e-04 " + shlex.quote("'x y'")
    )
    with pytest.raises(
        SweepError,
        match=r"placeholder \{bs\} is not a parameter; "
        r"parameters: lr, name",
    ):
        render("{bs}", params, "d", "s", 0)
    with pytest.raises(SweepError, match="cannot format") as text:
        render("{name:.2f}", params, "d", "s", 0)
    assert str(text.value).endswith("'str': drop the format spec ({name})")
    with pytest.raises(SweepError, match="literal braces"):
        render("{lr", params, "d", "s", 0)
    with pytest.raises(SweepError, match="needs a parameter name"):
        render("{}", params, "d", "s", 0)


def test_a_format_spec_on_text_that_reads_as_a_number_says_how_to_give_the_number() -> None:
    """`-p lr 1e-3` stays text (the command gets what was typed): `{lr:.1e}` cannot format
    it, and the line says the number to give instead (0.001 reads back as one)."""
    with pytest.raises(SweepError) as refused:
        render("echo {lr:.1e}", {"lr": "1e-3"}, "d", "s", 0)
    assert str(refused.value) == (
        "command: {lr:.1e} cannot format '1e-3': Unknown format code 'e' for object of type "
        "'str': give it as 0.001, or drop the format spec ({lr})"
    )
    assert render("echo {lr:.1e}", {"lr": 0.001}, "d", "s", 0) == "echo 1.0e-03"  # as said
    with pytest.raises(SweepError, match=r"give it as 7, or drop the format spec \(\{n\}\)$"):
        render("{n:03d}", {"n": "007"}, "d", "s", 0)


def test_template_placeholders_are_checked_when_the_spec_is_made() -> None:
    with pytest.raises(SweepError, match=r"\{bs\} is not a parameter"):
        hypersearch(command="train --lr {lr} --bs {bs} --x {x}", grids=({"lr": LRS},))
    with pytest.raises(SweepError, match=r"\{bs\} has no value in grid\[1\]"):
        hypersearch(grids=({"lr": LRS, "bs": BSS}, {"lr": LRS}))
    with pytest.raises(SweepError, match="reserved"):
        hypersearch(grids=({"lr": LRS, "bs": BSS, "run_dir": ("x",)},))


def test_unused_parameters_are_listed_for_a_warning() -> None:
    spec = hypersearch(command="train --lr {lr} --out {run_dir}")
    assert unused_params(spec.command or "", spec) == ["bs"]
    assert unused_params(HYPERSEARCH, hypersearch()) == []


# ---- size and resume ------------------------------------------------------------------------


def test_count_refuses_a_billion_points_before_expanding() -> None:
    spec = SweepSpec(name="big", grids=({f"k{i}": tuple(range(10)) for i in range(9)},))
    assert count(spec) == 10**9
    assert count(dataclasses.replace(spec, samples=5, seed=0)) == 5
    with pytest.raises(SweepError, match="1,000,000,000 points, more than 1,000,000"):
        expand(spec)


def test_resume_skips_done_reruns_failed_and_runs_new_points() -> None:
    points = expand(hypersearch())
    folders = [p.folder for p in points]
    done, failed = set(folders[:3]), {folders[3], folders[0]}
    plan = plan_resume(points, done, failed)
    assert [p.folder for p in plan.skipped_done] == folders[:3]
    assert [p.folder for p in plan.rerun_failed] == [folders[3]]
    assert [p.folder for p in plan.new] == folders[4:]
    assert plan.to_run == tuple(points[3:])
    assert plan.summary() == "6 to run: 5 new, 1 failed to rerun, 3 done (skipped)"
    forced = plan_resume(points, done, failed, force=True)
    assert forced.to_run == tuple(points) and forced.skipped_done == ()
    assert [p.folder for p in forced.rerun_done] == folders[:3]
    assert "3 done forced to rerun" in forced.summary()


def test_adding_grid_values_resumes_only_the_new_points() -> None:
    before = expand(hypersearch())
    after = expand(hypersearch(grids=({"lr": (*LRS, 0.01), "bs": BSS},)))
    plan = plan_resume(after, {p.folder for p in before}, set())
    assert [p.params["lr"] for p in plan.to_run] == [0.01, 0.01, 0.01]
