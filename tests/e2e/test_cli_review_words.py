"""Two pieces of advice found by a review to fail when followed: `sweep -p` split a JSON or
call value at its commas into halves (its quotes stripped), and `config set NAME W1 W2` said
to quote the words into one, which a setting that takes a number then refused."""

from __future__ import annotations

import shlex

from conftest import Herd
from gpuherd.cli.config_cmds import EXAMPLES, TEXT_SETTINGS
from gpuherd.config import SETTINGS

WARNING = "gpuherd: warning: "


def dry_run(herd: Herd, *values: str) -> tuple[list[str], list[str]]:
    """The commands and the warnings of `sweep 'echo {x}' -p x VALUES --dry-run` (no daemon)."""
    done = herd.cli("sweep", "echo {x}", "-p", "x", *values, "--name", "words", "--dry-run")
    said = [line.removeprefix(WARNING) for line in done.stderr.splitlines() if WARNING in line]
    return done.stdout.splitlines(), said


def test_a_structured_value_with_commas_is_one_value_and_not_warned_of(herd: Herd) -> None:
    for value in ('{"a":1,"b":2}', "f(a,b)", "(1, 2)", "[[1,2],[3,4]]", "['a','b']", '"x,y"'):
        assert dry_run(herd, value) == ([f"echo {shlex.quote(value)}"], []), value


def test_a_comma_list_is_warned_of_with_its_values_as_typed_and_the_advice_works(
    herd: Herd,
) -> None:
    commands, said = dry_run(herd, "adam(lr=1),sgd(lr=2)")
    assert commands == ["echo 'adam(lr=1),sgd(lr=2)'"]
    assert said == [
        "-p x 'adam(lr=1),sgd(lr=2)' is one value, so one point: for a point per value give"
        " them as separate words: -p x 'adam(lr=1)' 'sgd(lr=2)'"
    ]
    advised = shlex.split(said[0].rpartition(": -p x ")[2])
    assert dry_run(herd, *advised) == (["echo 'adam(lr=1)'", "echo 'sgd(lr=2)'"], [])
    # The plain list of the review's case is still warned of, as before.
    assert dry_run(herd, "0.1,0.01")[1] == [
        "-p x 0.1,0.01 is one value, so one point: for a point per value give them as"
        " separate words: -p x 0.1 0.01"
    ]


def test_several_words_for_a_setting_are_answered_with_a_command_that_works(herd: Herd) -> None:
    assert set(EXAMPLES) | set(TEXT_SETTINGS) == set(SETTINGS)
    assert herd.usage_error("config", "set", "retries", "1", "2") == (
        "gpuherd: error: retries takes one value, not 2 ('1 2'): give one, e.g. gpuherd config"
        " set retries 3 (see gpuherd config set --help)\n"
    )
    assert herd.usage_error("config", "set", "retrys", "1", "2").startswith(
        "gpuherd: error: unknown setting 'retrys': use one of foreign, keep-free,"
    )
    herd.start("--fake-gpus", "4")
    quoted = herd.cli("config", "set", "retries", "1 2", check=False)  # what it advised
    assert quoted.returncode == 2 and "retries: invalid count '1 2'" in quoted.stderr
    for name, example in EXAMPLES.items():
        said = herd.usage_error("config", "set", name, "10", "%")
        assert said == (
            f"gpuherd: error: {name} takes one value, not 2 ('10 %'): give one, e.g. gpuherd"
            f" config set {name} {example} (see gpuherd config set --help)\n"
        )
        assert herd.cli("config", "set", name, example).stdout.startswith(f"{name} = ")
        herd.cli("config", "unset", name)
    # A command's words are quoted into one, as before, and so taken.
    assert herd.usage_error("config", "set", "on-end", "echo", "done") == (
        "gpuherd: error: on-end takes one value, not 2: quote it: gpuherd config set on-end"
        " 'echo done' (see gpuherd config set --help)\n"
    )
    assert herd.cli("config", "set", "on-end", "echo done").stdout == "on-end = echo done\n"
