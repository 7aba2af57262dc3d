"""`gpuherd sweep --help` lists the options of a sweep, and no row for its argument: with
click 8.5.1, whose Argument.get_help_record gives a row (`SOURCE`, blank) where it gave None,
the list it builds of the hidden `run` command's records showed a stray `SOURCE` line under
`-p, --param`. No help lists an argument as an option."""

from __future__ import annotations

import re

import click
from click.testing import CliRunner

from conftest import Herd
from gpuherd.cli.main import cli

ROW = re.compile(r"^  (\S.*?)(?:\s{2,}|$)")
"""A definition list's row: its term, two blanks in, then its text (or nothing)."""


def _rows(text: str) -> list[str]:
    return [m[1] for line in text.splitlines() if (m := ROW.match(line))]


def test_sweep_help_lists_the_options_of_a_sweep_and_no_argument(herd: Herd) -> None:
    said = herd.cli("sweep", "--help").stdout
    options = said.split("Options of a sweep:\n", 1)[1].split("\n\n", 1)[0]
    rows = _rows(options)
    assert rows[:2] == ["-p, --param NAME V1 V2 ...", "--name TEXT"], options
    assert all(row.startswith("-") for row in rows), rows  # (SOURCE was the second)
    assert "\n  SOURCE\n" not in said


def test_no_commands_help_has_a_row_of_an_argument_alone() -> None:
    runner = CliRunner()
    walked: list[list[str]] = []

    def walk(group: click.Group, path: list[str]) -> None:
        ctx = click.Context(group, info_name="gpuherd")
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            walked.append([*path, name])
            if isinstance(command, click.Group):
                walk(command, [*path, name])

    walk(cli, [])
    assert ["sweep"] in walked and ["sweep", "status"] in walked
    for args in walked:
        result = runner.invoke(cli, [*args, "--help"], prog_name="gpuherd")
        assert result.exit_code == 0, (args, result.output)
        bare = [row for row in _rows(result.output) if re.fullmatch(r"[A-Z_.]+", row)]
        assert bare == [], (args, result.output)
