"""Braces of the shell's own in a sweep's command template (`${DATA_DIR}`, awk's `{print $1}`,
`find -exec rm {} +`) read as placeholders: they are refused, and each refusal says how to
write them as they are. Only a stray `{` said so (`write {{ and }} for literal braces`); the
everyday ones said only that `{DATA_DIR}` is not a parameter."""

from __future__ import annotations

import pytest

from gpuherd.core.sweep import SweepError, render
from gpuherd.sweepfile import SweepFileError, parse_sweep

PARAMETERS = "parameters: lr (and run_dir, sweep, index)"

REFUSED = [
    (
        "python train.py --lr {lr} --data ${DATA_DIR}/cifar",
        f"placeholder {{DATA_DIR}} is not a parameter; {PARAMETERS}; for the shell variable "
        "${DATA_DIR}, write ${{DATA_DIR}} or $DATA_DIR",
        "python train.py --lr {lr} --data ${{DATA_DIR}}/cifar",
    ),
    (  # an expansion with an operator keeps its braces: no `$X` for it
        "train {lr} --data ${DATA:-/data}",
        f"placeholder {{DATA:-/data}} is not a parameter; {PARAMETERS}; for the shell variable"
        " ${DATA:-/data}, write ${{DATA:-/data}}",
        "train {lr} --data ${{DATA:-/data}}",
    ),
    (
        "echo {lr} | awk '{print $1}'",
        f"placeholder {{print $1}} is not a parameter; {PARAMETERS}; write {{{{ and }}}} for "
        "literal braces: {{print $1}}",
        "echo {lr} | awk '{{print $1}}'",
    ),
    (  # the field shown whole, as written, not cut at its `:` (Python's format spec)
        "echo {lr} | awk '{printf \"%s:%s\", $1, $2}'",
        f'placeholder {{printf "%s:%s", $1, $2}} is not a parameter; {PARAMETERS}; write '
        '{{ and }} for literal braces: {{printf "%s:%s", $1, $2}}',
        "echo {lr} | awk '{{printf \"%s:%s\", $1, $2}}'",
    ),
    (
        "echo {lr}; find {run_dir} -exec rm {} +",
        "placeholder {} needs a parameter name; write {{ and }} for literal braces: {{}}",
        "echo {lr}; find {run_dir} -exec rm {{}} +",
    ),
    (
        "sh -c 'echo ${0}' {lr}",
        "placeholder {0} needs a parameter name; for the shell variable ${0}, write ${{0}} or $0",
        "sh -c 'echo ${{0}}' {lr}",
    ),
    (  # a JSON line around a placeholder: the placeholder stays one (it was doubled too)
        "echo '{\"loss\": {lr}}'",
        f'placeholder {{"loss": {{lr}}}} is not a parameter; {PARAMETERS}; write {{{{ and }}}} '
        'for literal braces: {{"loss": {lr}}}',
        "echo '{{\"loss\": {lr}}}'",
    ),
    (
        "echo {lr!x}",
        "placeholder {lr!x}: unsupported conversion or nested placeholder; write {{ and }} for "
        "literal braces: {{lr!x}}",
        "echo {{lr!x}}",
    ),
]

KINDS = [
    "shell-variable",
    "shell-expansion",
    "awk",
    "awk-colon",
    "find-exec",
    "positional",
    "json-line",
    "conversion",
]


@pytest.mark.parametrize(("template", "said", "written"), REFUSED, ids=KINDS)
def test_each_refused_placeholder_says_how_to_write_its_braces_and_that_works(
    template: str, said: str, written: str
) -> None:
    with pytest.raises(SweepError) as refused:
        render(template, {"lr": 0.1}, "/r", "s", 0)
    assert str(refused.value) == f"command: {said}"
    # As the line says: the braces reach the shell as the template first had them.
    assert render(written, {"lr": 0.1}, "/r", "s", 0) == template.replace("{lr}", "0.1").replace(
        "{run_dir}", "/r"
    )


def test_a_dollar_before_a_parameter_is_still_the_parameter() -> None:
    # `cost ${price}` means the value after a dollar sign: a parameter's name is not refused.
    assert render("echo cost ${price}", {"price": 5}, "/r", "s", 0) == "echo cost $5"


def test_a_sweep_file_is_refused_in_the_same_words() -> None:
    text = "command: python train.py --lr {lr} --data ${DATA_DIR}\ngrid:\n  lr: [0.1]\n"
    with pytest.raises(SweepFileError) as refused:
        parse_sweep(text, "s.yaml")
    assert str(refused.value) == (
        f"s.yaml:1: command: placeholder {{DATA_DIR}} is not a parameter; {PARAMETERS}; for the"
        " shell variable ${DATA_DIR}, write ${{DATA_DIR}} or $DATA_DIR"
    )
