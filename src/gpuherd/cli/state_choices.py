"""`--state` of `ls`, `clean` and `sweep status`: words of a list of choices, repeated or
comma-separated (options.states_option)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from gpuherd.cli.param_types import Choosing

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


class ChoosingSeveral(Choosing):
    """Comma-separated words of the choices, a tuple (`--state failed,cancelled`): squeue's
    `-t failed,cancelled` and gpuherd's own id lists (`3,5-7`) are written so, and a script
    that typed it got `'failed,cancelled' is not a choice`. Each word is checked alone, so
    a wrong one is named by itself. Taken in any case (`--state RUNNING`, `Running`: gflow's
    and Slurm's state names), as the daemon names them: lower case."""

    def __init__(self, choices: Sequence[str]) -> None:
        super().__init__(choices, case_sensitive=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):  # a default, or converted already
            return value
        words = [word.strip() for word in str(value).split(",")]
        if "" in words and len(words) > 1:  # `failed,`: was "'' is not a choice"
            self.fail(
                f"{value!r} has an empty word (a comma too many?): use "
                f"{', '.join(map(str, self.choices))}, separated by commas",
                param,
                ctx,
            )
        one = super().convert  # bound here: a generator's own scope has no super()
        return tuple(one(word, param, ctx) for word in words)

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        """Tab after a comma offers the words not given yet (`failed,k` -> `failed,killed`):
        the shell passes the whole `failed,k`, which no choice begins with."""
        from click.shell_completion import CompletionItem  # (only on Tab: not every start)

        given, comma, last = incomplete.rpartition(",")
        offered = super().shell_complete(ctx, param, last)
        if not comma:
            return offered
        taken = {word.strip().lower() for word in given.split(",")}  # (any case: FAILED,k)
        return [
            CompletionItem(f"{given},{item.value}") for item in offered if item.value not in taken
        ]


def flattened(_: click.Context, __: click.Parameter, groups: tuple[tuple[str, ...], ...]) -> Any:
    """The words of every `--state` given, each once, in the order first given."""
    return tuple(dict.fromkeys(word for group in groups for word in group))
