"""Tab after an option that takes words of a fixed set offers them: `ls --columns` (a list,
as `--state` is: after a comma, the names not given yet), and every option typed as a choice.
Asked as the shells ask it (test_completion.complete)."""

from __future__ import annotations

from collections.abc import Iterator

import click
from test_completion import complete, values

from conftest import Herd
from gpuherd.cli.ls_table import COLUMNS, parse_columns
from gpuherd.cli.main import COMMAND_TABLE, load_command


def test_ls_columns_are_offered_and_after_a_comma_the_rest(herd: Herd) -> None:
    """`ls --columns <Tab>` offered nothing: the names were to be read in its help."""
    assert values(herd, "gpuherd ls --columns ") == list(COLUMNS)
    assert values(herd, "gpuherd ls --columns st") == ["state", "started", "stdout", "stderr"]
    assert values(herd, "gpuherd ls --columns id,na") == ["id,name"]
    offered = values(herd, "gpuherd ls --columns id,STATE,")  # (any case, as it is taken)
    assert offered == [f"id,STATE,{name}" for name in COLUMNS if name not in ("id", "state")]
    assert values(herd, "gpuherd ls --columns id,id") == []  # (each column once)
    found, _ = complete(herd, "gpuherd ls --columns id,ti", shell="fish")
    assert found == [("plain", "id,time", "")]
    for value in offered:  # each one a list --columns takes
        parse_columns(value)


def _choosing(command: click.Command, words: list[str]) -> Iterator[tuple[str, list[str]]]:
    """(line up to an option of a fixed set of words, the words) for every such option."""
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _choosing(sub, [*words, name])
    if command.hidden:  # (`sweep FILE`'s own submit: its --order is tested above)
        return
    for param in command.params:
        if isinstance(param, click.Option) and isinstance(param.type, click.Choice):
            yield " ".join([*words, param.opts[-1], ""]), [str(c) for c in param.type.choices]


def test_every_option_of_a_fixed_set_of_words_offers_them(herd: Herd) -> None:
    lines = [
        found
        for name in COMMAND_TABLE
        if (command := load_command(name)) is not None
        for found in _choosing(command, ["gpuherd", name])
    ]
    assert len(lines) >= 5, lines  # (--state thrice, --order, --on-no-output, ...)
    for line, words in lines:
        assert values(herd, line) == words, line
