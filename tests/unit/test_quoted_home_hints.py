"""program_hints.quoted_home_hint (a program whose `~` is quoted, never expanded) and
home_expanded (a program's unquoted `~`, expanded as its shell will, for the file checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.program_hints import home_expanded, program_hints, quoted_home_hint

ENV = {"HOME": "/home/me", "PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize(
    ("command", "written", "fix"),
    [
        ("'~/bin/notify'", "'~/bin/notify'", "'~/bin/notify'"),
        ('"~/bin/notify" --to me', '"~/bin/notify"', "'~/bin/notify --to me'"),
        ("X=1 \\~/run.sh", "\\~/run.sh", "'X=1 ~/run.sh'"),
        ("'~/my bin/run.sh' a", "'~/my bin/run.sh'", "'~/\"my bin/run.sh\" a'"),
        ("'~root/x' > out", "'~root/x'", "'~root/x > out'"),
    ],
)
def test_a_quoted_tilde_is_said_with_the_command_that_expands_it(
    command: str, written: str, fix: str, tmp_path: Path
) -> None:
    hint = quoted_home_hint(command, str(tmp_path), ENV, "hook", "the hook")
    assert hint == (
        f"the program {written} has its ~ quoted, and the shell does not expand ~ inside "
        f'quotes: the hook will fail with "not found"; write the ~ unquoted: gpuherd config '
        f"set on-end {fix}"
    )


@pytest.mark.parametrize(
    "command",
    ["~/bin/notify", "~root/x", "echo '~/x'", "'~ x'", "'unbalanced", "", "X=1"],
)
def test_nothing_is_said_of_a_tilde_the_shell_expands_or_of_no_program(
    command: str, tmp_path: Path
) -> None:
    assert quoted_home_hint(command, str(tmp_path), ENV) is None


def test_nothing_is_said_where_a_folder_named_tilde_holds_the_file(tmp_path: Path) -> None:
    (tmp_path / "~").mkdir()
    (tmp_path / "~" / "run.sh").touch()
    assert quoted_home_hint("'~/run.sh'", str(tmp_path), ENV) is None


def test_the_fix_is_given_in_the_words_of_where_the_command_was(tmp_path: Path) -> None:
    said = {
        verb: program_hints("'~/run.sh' --lr 1", str(tmp_path), ENV, verb)
        for verb in ("submit", "python", "sweep", "dashboard")
    }
    assert said["submit"][0].endswith("gpuherd submit -- ~/run.sh --lr 1")
    assert said["python"][0].endswith("herd.submit('~/run.sh --lr 1')")
    assert said["sweep"][0].endswith("write the sweep's command as '~/run.sh --lr 1'")
    # (the form's: the program alone, so its lines alike share one warning)
    assert said["dashboard"][0].endswith("write the ~ unquoted: write ~/run.sh in 'commands'")


@pytest.mark.parametrize(
    ("command", "expanded"),
    [
        ("~/bin/notify done", "/home/me/bin/notify done"),
        ("X=1 ~/'my bin'/run", "X=1 /home/me/'my bin'/run"),
        ("~root/x", "/root/x"),
        ("~", "/home/me"),
    ],
)
def test_an_unquoted_tilde_is_expanded_as_the_shell_does(command: str, expanded: str) -> None:
    assert home_expanded(command, ENV) == expanded


@pytest.mark.parametrize(
    "command", ["'~/x'", "echo ~/x", "~no-such-user-h338/x", "python train.py", "'open"]
)
def test_anything_else_is_not_expanded(command: str) -> None:
    assert home_expanded(command, ENV) is None


def test_no_home_no_expansion() -> None:
    assert home_expanded("~/x", {}) is None
