"""`--` taken as an option's value: `gpuherd submit -n -- true` queued a job named `--`.

Click gives an option that takes a value the next word whatever it is, and the `--` that
ends the options is a word too: the user meant to give a name and forgot it, and the command
went on. Every command's options (declared in many modules, with click's own Option class)
reach their value through click.Option.process_value, and click has no setting a group passes
on to its commands' options: so main() wraps that one method, for gpuherd's commands only.
A value that merely holds dashes (`--name a--b`, `--name -x`) is not touched.
"""

from __future__ import annotations

from typing import Any

import click

SEPARATOR = "--"

_GENERIC_METAVARS = {"TEXT", "INTEGER", "INTEGER RANGE", "FLOAT", "PATH", "FILE", "DIRECTORY"}
"""Click's words for a value's type, which say less than the option's own name (`-n NAME`)."""


def refuse_separator_values(ours: type[click.Group]) -> None:
    """Make an option of a command under a group of class `ours` refuse `--` as its value,
    on one line naming the option and what to give (once per process)."""
    process_value = click.Option.process_value
    if getattr(process_value, "refuses_separator", False):
        return

    def checked(self: click.Option, ctx: click.Context, value: Any) -> Any:
        if (
            _holds_separator(value)
            and not ctx.resilient_parsing  # (Tab completion: a line typed halfway)
            and isinstance(ctx.find_root().command, ours)
        ):
            raise click.UsageError(separator_taken(self, ctx), ctx)
        return process_value(self, ctx, value)

    checked.refuses_separator = True  # type: ignore[attr-defined]
    click.Option.process_value = checked  # type: ignore[method-assign]


def _holds_separator(value: Any) -> bool:
    """`value` as the parser gives it: a word, or a tuple of them (multiple=True, nargs>1)."""
    if isinstance(value, str):
        return value == SEPARATOR
    if isinstance(value, tuple | list):
        return any(_holds_separator(item) for item in value)
    return False


def separator_taken(option: click.Option, ctx: click.Context) -> str:
    """`--name: no value given before --: give -n NAME -- COMMAND` (`ls`, which takes no
    arguments: `give --name PATTERN`)."""
    metavar = option.metavar or option.make_metavar(ctx)
    if metavar in _GENERIC_METAVARS or (option.metavar is None and option.type is click.STRING):
        metavar = (option.name or "value").upper()
    after = [p.human_readable_name for p in ctx.command.params if isinstance(p, click.Argument)]
    then = f" {SEPARATOR} {' '.join(after)}" if after else ""  # what the `--` goes before
    said = f"{option.opts[-1]}: no value given before {SEPARATOR}"
    return f"{said}: give {option.opts[0]} {metavar}{then}"
