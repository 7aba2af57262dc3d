"""A parameter named by digits only (`-p 0 1 2`, a sweep file's grid key "0") was taken, yet no
template could use it: `{0}` is a position to str.format, refused as "needs a parameter name",
and that refusal's hint offered `{0}` itself, the text typed. Such a name is refused where it
is given (core/sweep_names.check_key, which every way of giving a sweep goes through), and the
hint for `{0}` never repeats the field. A sweep herd.db holds from before still reads back."""

from __future__ import annotations

import pytest

from gpuherd.core.sweep import (
    Distribution,
    SweepError,
    SweepSpec,
    check_template,
    spec_from_dict,
    spec_to_dict,
)
from gpuherd.sweepfile import SweepFileError, parse_sweep


def refusal(key: str, where: str) -> str:
    return (
        f"{where}.{key}: a name of digits only cannot be a placeholder ({{{key}}} is a position,"
        f" not a name); name it, e.g. p{key}"
    )


@pytest.mark.parametrize(
    ("given", "loc", "said"),
    [
        ({"grids": ({"a": (1,), "0": (1, 2)},)}, ("grid", 0, "0"), refusal("0", "grid")),
        (
            {"grids": ({"a": (1,)}, {"a": (2,), "12": (3,)})},
            ("grid", 1, "12"),
            refusal("12", "grid[1]"),
        ),
        ({"grids": ({"a": (1,)},), "fixed": {"7": 1}}, ("fixed", "7"), refusal("7", "fixed")),
        (
            {"random": {"3": Distribution("choice", (1, 2))}, "samples": 2},
            ("random", "3"),
            refusal("3", "random"),
        ),
    ],
    ids=["grid", "second-grid", "fixed", "random"],
)
def test_a_digits_only_parameter_name_is_refused_saying_to_name_it(
    given: dict[str, object], loc: tuple[str | int, ...], said: str
) -> None:
    with pytest.raises(SweepError) as refused:
        SweepSpec(name="s", command="echo {a}", **given)  # type: ignore[arg-type]
    assert (str(refused.value), refused.value.loc) == (said, loc)
    # The same through the HTTP API's shape, POST /api/v1/sweeps.
    with pytest.raises(SweepError) as refused:
        spec_from_dict({"name": "s", "command": "echo {a}", "grids": [{"a": [1], "0": [1]}]})
    assert str(refused.value) == refusal("0", "grid")


def test_names_with_digits_and_more_are_parameters_as_before() -> None:
    spec = SweepSpec(
        name="s",
        command="echo {p0} {0x} {1.5}",
        grids=({"p0": (1,), "0x": (2,)},),
        fixed={"1.5": 3},
    )
    assert spec.varying == ("p0", "0x")


def test_a_sweep_file_is_refused_at_the_keys_line() -> None:
    text = 'command: echo {x}\ngrid:\n  x: [1]\n  "0": [1, 2]\n'
    with pytest.raises(SweepFileError) as refused:
        parse_sweep(text, "s.yaml")
    assert str(refused.value) == f"s.yaml:4: {refusal('0', 'grid')}"


def test_the_hint_for_a_position_never_repeats_the_field_typed() -> None:
    # Before: with a parameter `0` known, `{0}` was kept as it stood: "...: {0}".
    for names in ((), ("0",), ("0", "a")):
        with pytest.raises(SweepError) as refused:
            check_template("echo {0} {a}", names)
        assert str(refused.value) == (
            "command: placeholder {0} needs a parameter name; write {{ and }} for literal"
            " braces: {{0}}"
        )
    # A known placeholder inside a refused field still prints itself: only it is kept.
    with pytest.raises(SweepError) as refused:
        check_template("echo '{\"loss\": {a}}'", ("a",))
    assert str(refused.value).endswith('write {{ and }} for literal braces: {{"loss": {a}}}')


def test_a_sweep_stored_before_the_rule_still_reads_back() -> None:
    """`sweep ls` and `sweep status` read every stored sweep's spec: one taken with `-p 0`
    before would have failed them (for every sweep, for `ls`); submitted again, it is refused."""
    data = spec_to_dict(SweepSpec(name="old", command="echo {a}", grids=({"a": (1,)},)))
    data["grids"] = [{"a": [1], "0": [1, 2]}]
    assert spec_from_dict(data, stored=True).varying == ("a", "0")
    with pytest.raises(SweepError, match=r"name it, e\.g\. p0"):
        spec_from_dict(data)
