"""Every command's `--help` fits a terminal of 60 columns, as typed under `herd`: click wraps
the prose, but a line it must keep as written (an example, a choice list) ran past the edge,
where the terminal broke it mid-word (`sweep`'s examples were 90 wide, `edit --clear`'s list
of fields 86). And each help says the name typed: `herd submit ...` in its examples under
`herd`, as its usage line does."""

from __future__ import annotations

import functools
import os
import re
import subprocess

import click
import pytest
from test_cli_errors import ENTRY_POINTS

import forks
import herd_script
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


def help_of(entry: str, *args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [*ENTRY_POINTS[entry], *args], env=env, capture_output=True, text=True, timeout=60
    )


@functools.cache
def helps(columns: int) -> list[tuple[list[str], subprocess.CompletedProcess[str]]]:
    """Every command's `herd ... --help` on a terminal of `columns`, each path with what it
    printed: run once per process (~60 commands), for every test that reads them. The
    installed `herd` script, forked by the fork server: a new interpreter importing the CLI
    for each (help_of's) was most of these tests' time."""
    env = {**os.environ, "COLUMNS": str(columns)}
    return [
        (path, forks.python_m("herd_script", [*path, "--help"], env=env, cwd=herd_script.HERE))
        for path in command_paths()
    ]


@pytest.mark.parametrize("columns", [60, 80])
def test_every_help_fits_the_terminal_it_is_shown_on(columns: int) -> None:
    too_wide = []
    for path, shown in helps(columns):
        assert shown.returncode == 0 and shown.stdout.startswith("Usage: herd"), shown.stderr
        too_wide += [(path, line) for line in shown.stdout.splitlines() if len(line) > columns]
    assert too_wide == []


# Where gpuherd names a command: `gpuherd submit`, and one broken over two lines by the
# wrapping (`[default: the sweep file's, else gpuherd` / `config get retries]`). Not
# `gpuherd's own`, nor the program's `gpuherd: a GPU job queue`.
COMMAND_WORD = re.compile(r"\bgpuherd\s")


def test_every_help_under_herd_says_herd_where_it_names_a_command() -> None:
    said_gpuherd = []
    for path, shown in helps(80):
        assert shown.returncode == 0, shown.stderr
        said_gpuherd += [
            (path, line) for line in shown.stdout.splitlines() if COMMAND_WORD.search(line)
        ]
    assert said_gpuherd == []


@pytest.mark.parametrize("entry", ["herd", "gpuherd"])
def test_the_help_examples_say_the_name_typed(entry: str) -> None:
    top = help_of(entry, "--help").stdout
    assert f"Start a daemon once (`{entry} daemon start`)" in top
    assert f"submit      Queue a command: `{entry} submit -- python train.py" in top
    submit = help_of(entry, "submit", "--help").stdout
    assert f"Queue it held; `{entry} release` lets it run." in submit
    assert f"[default: {entry} config get retries]" in submit
    # A group given no command prints its help on stderr: `herd sweep`'s examples.
    sweep = help_of(entry, "sweep")
    assert sweep.returncode == 2
    assert f"\n  {entry} sweep status NAME --sort -val_acc\n" in sweep.stderr
    # fish loads completions/herd.fish for `herd`: the script herd makes goes there.
    completion = help_of(entry, "completion", "--help").stdout
    assert f"  {entry} completion fish \\\n      > ~/.config/fish/completions/{entry}.fish\n" in (
        completion
    )
    # A new fish has no completions folder: the `>` into it failed (No such file or directory).
    assert "\n  mkdir -p ~/.config/fish/completions\n" in completion
