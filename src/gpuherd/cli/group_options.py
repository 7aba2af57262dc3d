"""Options given on the wrong side of a group's sub-command, refused in one wording for every
group (exit 2). `gpus --json drain 0` and `config --json get retries` took the group's
--json and ignored it, printing plain text under a flag that promises one JSON document.
`sweep --json ls` was taken for a sweep to submit, told to give a command template: `sweep`
has no --json of its own for its verbs, which each take it after their name."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

import click


def alone_with_group(ctx: click.Context, given: str) -> click.UsageError:
    """`given` (`--json`), an option of the group `ctx` alone, not of the sub-command it
    invokes: `gpus --json drain 0`."""
    group, verb = ctx.info_name, ctx.invoked_subcommand
    return click.UsageError(
        f"{given} goes with `{ctx.command_path}` alone, not with `{group} {verb}`: drop it"
    )


def options_before_verb(
    ctx: click.Context, commands: Mapping[str, click.Command], args: Sequence[str]
) -> str | None:
    """What is wrong with `args` (the group's, as typed) that give a verb's own options before
    the verb (`sweep --json ls`, `sweep -q status s1`), with the command line meant; None
    for any other (the leading words are not all options of the verb after them: `sweep
    --name ls ...` names a sweep `ls`)."""
    if not args or not args[0].startswith("-"):
        return None
    for at, word in enumerate(args):
        command = commands.get(word)
        if command is None or command.hidden or not _all_options(ctx, command, args[:at]):
            continue
        names = [given for given in args[:at] if given.startswith("-")]
        meant = shlex.join([*ctx.command_path.split(), word, *args[at + 1 :], *args[:at]])
        go = "goes" if len(names) == 1 else "go"
        return f"{' '.join(names)} {go} after the sub-command: {meant}"
    return None


def _all_options(ctx: click.Context, command: click.Command, words: Sequence[str]) -> bool:
    """Whether `words` are options of `command` and their values, and nothing else."""
    known = {
        name: param
        for param in command.get_params(ctx)
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }
    at = 0
    while at < len(words):
        name, equals, _ = words[at].partition("=")
        option = known.get(name)
        if option is None:
            return False
        takes_value = not (option.is_flag or option.count or equals)
        at += 2 if takes_value else 1
    return at == len(words) and bool(words)
