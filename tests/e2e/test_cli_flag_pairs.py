"""A switch given both ways on one command line (`gpuherd submit --no-hold --hold -- true`)
is refused, for every switch of every command alike (cli/flag_pairs.py): one line naming
both, exit 2, nothing done. The last one given silently won, so which one counted depended on
where it was typed. Given twice the same way it is kept; a sweep file's `hold: true` turned
off by `--no-hold` is not given both ways on the line (test_sweep_file_options.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click

from conftest import Herd
from gpuherd.cli.main import COMMAND_TABLE, load_command


def switches(command: click.Command, words: list[str]) -> Iterator[tuple[list[str], click.Option]]:
    """(the words that name a command, one of its switches), for `command` and those under it."""
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from switches(sub, [*words, name])
    for param in command.params:
        if isinstance(param, click.Option) and param.secondary_opts:
            yield words, param


def every_switch() -> list[tuple[list[str], click.Option]]:
    found = []
    for name in COMMAND_TABLE:
        command = load_command(name)
        assert command is not None, name
        found += switches(command, [name])
    return found


def test_a_switch_given_both_ways_is_refused_and_twice_one_way_taken(
    herd: Herd, tmp_path: Path
) -> None:
    found = every_switch()
    named = {(" ".join(words), option.opts[-1]) for words, option in found}
    assert {("submit", "--hold"), ("submit", "--exclusive"), ("submit", "--oom-retry")} <= named
    assert {("sweep submit", "--hold"), ("edit", "--exclusive"), ("run", "--exclusive")} <= named
    for words, option in found:
        on, off = option.opts[-1], option.secondary_opts[-1]
        for given in ([off, on], [on, off]):
            said = herd.usage_error(*words, *given)  # (the help of `sweep submit` is sweep's)
            wanted = f"gpuherd: error: {on} and {off} given together: keep one (see gpuherd "
            assert said.startswith(wanted + words[0]), (words, given, said)
    # The sweep as typed (its hidden `submit`), and with what would have run.
    said = herd.usage_error("sweep", "--no-hold", "--hold", "echo {x}", "-p", "x", "1")
    assert said.startswith("gpuherd: error: --hold and --no-hold given together: keep one")
    said = herd.usage_error("submit", "--no-hold", "--hold", "--", "true")
    assert said.startswith("gpuherd: error: --hold and --no-hold given together: keep one")
    assert list(tmp_path.iterdir()) == []  # no daemon started, no folder made
    # Given twice the same way, it is what was asked.
    herd.start("--fake-gpus", "1")
    held = herd.submit("--hold", "--gpus", "0", "--hold", "--", "true")
    assert herd.job(held)["state"] == "held"
    ran = herd.submit("--no-hold", "--gpus", "0", "--no-hold", "--", "true")
    assert herd.wait_state(ran, "succeeded")["state"] == "succeeded"
