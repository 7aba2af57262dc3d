"""Every command's `--help` fits a terminal of 60 columns, as typed under `herd`: click wraps
the prose, but a line it must keep as written (an example, a choice list) ran past the edge,
where the terminal broke it mid-word (`sweep`'s examples were 90 wide, `edit --clear`'s list
of fields 86)."""

from __future__ import annotations

import os
import subprocess

import click
import pytest
from test_cli_errors import ENTRY_POINTS

from gpuherd.cli.main import COMMAND_TABLE, load_command


def command_paths() -> list[list[str]]:
    """Every command and subcommand a user can type (the hidden `sweep submit` is `sweep`)."""
    paths: list[list[str]] = [[]]
    for name in sorted(COMMAND_TABLE):
        command = load_command(name)
        assert command is not None, name
        paths.append([name])
        if isinstance(command, click.Group):
            paths += [[name, sub] for sub, c in sorted(command.commands.items()) if not c.hidden]
    return paths


@pytest.mark.parametrize("columns", [60, 80])
def test_every_help_fits_the_terminal_it_is_shown_on(columns: int) -> None:
    env = {**os.environ, "COLUMNS": str(columns)}
    too_wide = []
    for path in command_paths():
        shown = subprocess.run(
            [*ENTRY_POINTS["herd"], *path, "--help"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert shown.returncode == 0 and shown.stdout.startswith("Usage: herd"), shown.stderr
        too_wide += [(path, line) for line in shown.stdout.splitlines() if len(line) > columns]
    assert too_wide == []
