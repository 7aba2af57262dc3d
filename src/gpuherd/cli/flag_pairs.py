"""A switch given both ways on one command line (`submit --no-hold --hold`) is refused.

Click lets the last word win, so a `--hold` typed at the end of a long line, or added by an
alias or a script that already says `--no-hold`, silently decided which one counts. Every
command's switches (`--hold/--no-hold`, `--exclusive/--no-exclusive`, `--oom-retry/...`,
declared in many modules) reach their value through the parser's option, whose process()
stores the side given over the one before: main() wraps that one method, for gpuherd's
commands only, as separator.py wraps Option.process_value. A switch given twice the same way
is kept; a sweep file's `hold: true` turned off by `--no-hold` is not on the line twice.
"""

from __future__ import annotations

from typing import Any

import click
import click.parser

# The parser's option class (one per side of a switch: its `const` is True or False). Click
# 8.2 made it private (`_Option`); 8.1 names it `Option` (read from the module's dict: 8.2's
# module warns when that old name is asked for). A click without either keeps its own rule,
# the last word wins, rather than failing every command (tests/e2e/test_cli_flag_pairs.py
# would say so).
_ParserOption: Any = vars(click.parser).get("_Option") or vars(click.parser).get("Option")


def refuse_both_ways(ours: type[click.Group]) -> None:
    """Make a switch of a command under a group of class `ours` refuse being given both
    ways, on one line naming both (once per process)."""
    process = getattr(_ParserOption, "process", None)
    if process is None or getattr(process, "refuses_both_ways", False):
        return

    def checked(self: Any, value: Any, state: Any) -> None:
        option, before = self.obj, state.opts.get(self.dest)
        ctx = click.get_current_context(silent=True)  # (the command's: it parses in its scope)
        if (
            isinstance(option, click.Option)
            and option.secondary_opts  # a switch with its `--no-` form
            and self.dest in state.opts  # given before, on this line
            and before != self.const  # the other way
            and ctx is not None
            and not ctx.resilient_parsing  # (Tab completion: a line typed halfway)
            and isinstance(ctx.find_root().command, ours)
        ):
            raise click.UsageError(both_ways(option), ctx)
        process(self, value, state)

    checked.refuses_both_ways = True  # type: ignore[attr-defined]
    _ParserOption.process = checked


def both_ways(option: click.Option) -> str:
    """`--hold and --no-hold given together: keep one`."""
    return f"{option.opts[-1]} and {option.secondary_opts[-1]} given together: keep one"
