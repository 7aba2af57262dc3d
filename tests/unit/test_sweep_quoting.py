"""A placeholder inside the template's own quotes (`--tag "{tag}"`, `'{tag}'`) passes its
value unchanged, as a bare one does: the value is escaped for where it stands."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.sweep import SweepSpec, expand, render
from gpuherd.core.sweep_quoting import BARE, DOUBLE, SINGLE, places

PRINT = "printf '%s\\0'"
"""Prints each argument it gets, ended by a NUL."""
NASTY = ["hello world", "it's", 'say "hi"', "$HOME `id` \\n", "", "ünï ✓", "-1e-4", "a\nb", ";rm x"]


def sh_args(command: str) -> list[str]:
    out = subprocess.run(["sh", "-c", command], capture_output=True, check=True, timeout=10)
    return out.stdout.decode().split("\0")[:-1]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{v}", ["{}"]),
        ('"{v}"', ["{}"]),
        ("'{v}'", ["{}"]),
        ('"x={v}"', ["x={}"]),
        ("--v='{v}'", ["--v={}"]),
        ('"$(printf %s {v})"', ["{}"]),  # bare again inside $( ), in double quotes
        ("'\"' {v}", ['"', "{}"]),  # a double quote inside single quotes opens nothing
        ('"a\\"b" {v}', ['a"b', "{}"]),  # nor does an escaped one inside double quotes
        ("\\' {v}", ["'", "{}"]),
        (f"x # it's {{v}}\n{PRINT} {{v}}", ["x", "{}"]),  # a quote in a comment opens nothing
        ("a#'b' {v}", ["a#b", "{}"]),  # a # inside a word is no comment
    ],
)
def test_a_value_reaches_the_program_unchanged_however_the_template_quotes_it(
    template: str, expected: list[str]
) -> None:
    for value in NASTY:
        if "#" in template and "\n" in value:
            continue  # (a line break ends the comment the placeholder is in)
        command = render(f"{PRINT} {template}", {"v": value}, "d", "s", 0)
        if "$(" in template:
            value = value.rstrip("\n")  # as $( ) drops the final line breaks of any output
        assert sh_args(command) == [arg.format(value) for arg in expected], command


@settings(max_examples=100, deadline=None)
@given(value=st.text(st.characters(blacklist_characters="\0", codec="utf-8")))
def test_any_text_value_inside_double_or_single_quotes_arrives_intact(value: str) -> None:
    for template in (f'{PRINT} "{{v}}"', f"{PRINT} '{{v}}'", f'{PRINT} "--x={{v}}"'):
        expected = [value if "--x" not in template else f"--x={value}"]
        assert sh_args(render(template, {"v": value}, "d", "s", 0)) == expected


def test_quoted_run_dir_is_the_points_folder_even_with_a_hashed_name() -> None:
    # "hello world" names the folder tag=hello_world~<hash>: a `~` that shlex.quote quotes,
    # which inside "{run_dir}" gave a path with quotes in it (and so no metrics found).
    spec = SweepSpec(
        name="q",
        command=f'{PRINT} "{{run_dir}}" "{{tag}}"',
        grids=({"tag": ("hello world", "plain")},),
        results_dir="/tmp/my results",
    )
    for point in expand(spec):
        assert point.command is not None
        assert sh_args(point.command) == [point.run_dir, point.params["tag"]]


def test_a_safe_value_renders_as_before_in_any_quotes() -> None:
    # Commands of values that need no quoting are unchanged: finished points of a sweep
    # submitted before stay skipped, with no "ran another command" warning.
    for template in ("--lr {lr}", '--lr "{lr}"', "--lr '{lr}'"):
        assert render(template, {"lr": 0.001}, "d", "s", 0) == template.replace("{lr}", "0.001")


def test_places_of_placeholders() -> None:
    assert places(("a ", ' "', "\" '", "' ", "")) == (BARE, DOUBLE, SINGLE, BARE, BARE)
    assert places(('"$(echo ', ") ", '"')) == (BARE, DOUBLE, BARE)
    assert places(("`echo '", "'` ")) == (SINGLE, BARE)
