"""`gpuherd config`: read and change placement settings while the daemon runs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click

from gpuherd.cli import plain
from gpuherd.cli.group_options import alone_with_group
from gpuherd.cli.main import prefixed
from gpuherd.cli.options import json_option
from gpuherd.cli.param_types import checked_by_daemon, completes
from gpuherd.client import Client
from gpuherd.core.text import one_line
from gpuherd.errors import unknown_setting
from gpuherd.typed_name import typed_name


@click.group(invoke_without_command=True)
@json_option()
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Daemon settings: list them, `get NAME`, `set NAME VALUE` (kept across restarts), or
    `unset NAME` (back to its default)."""
    if ctx.invoked_subcommand is not None:
        if as_json:  # (ignored: `config --json get NAME` printed the value as text)
            raise alone_with_group(ctx, "--json")
        return
    settings = Client().get("/config")["settings"]
    if as_json:
        click.echo(json.dumps({k: v["value"] for k, v in settings.items()}, indent=1))
    else:
        click.echo("\n".join(_settings_table(settings)))
    _warn_not_taken(settings.values())


def _warn_not_taken(settings: Iterable[dict[str, str]]) -> None:
    """Say of each setting whose saved value the daemon did not take (its row in herd.db is
    damaged) that it is not in effect: the value listed is, and that alone left the user who
    set another none the wiser. (An older daemon does not say: nothing then.)"""
    for setting in settings:
        if said := setting.get("not_taken"):
            click.echo(prefixed("warning", said), err=True)  # (one line, escapes shown)


TABLE_WIDTH = 80
"""The table's width on any terminal: it is read as help is."""
VALUE_WIDEST = 20
"""The widest value kept in its column (`foreign exclusive`, `keep-ram 20% (4.7 GiB)`, the
largest count): a wider one (an on-end command, a long project-limits list) takes lines of
its own, and the help beside the others keeps 40 columns or more."""


def _settings_table(settings: dict[str, dict[str, str]]) -> list[str]:
    """Name, value and help in aligned columns, within TABLE_WIDTH; the help is wrapped in
    its column, under a value too wide for its own (wrapped at its words if need be)."""
    shown = {name: one_line(setting["value"]) for name, setting in settings.items()}
    value_at = max(plain.cells(name) for name in settings) + len(plain.GAP)
    narrow = [plain.cells(value) for value in shown.values() if _fits(value)]
    help_at = value_at + max(narrow, default=0) + len(plain.GAP)
    lines = []
    for name, value in shown.items():
        helps = _wrapped(settings[name]["help"], TABLE_WIDTH - help_at)
        if _fits(value):
            lines.append(_padded(name, value_at) + _padded(value, help_at - value_at) + helps[0])
            helps = helps[1:]
        else:
            values = _wrapped(value, TABLE_WIDTH - value_at)
            lines += [_padded(name if i == 0 else "", value_at) + v for i, v in enumerate(values)]
        lines += [" " * help_at + line for line in helps]
    return [line.rstrip() for line in lines]


def _fits(value: str) -> bool:
    return plain.cells(value) <= VALUE_WIDEST


def _padded(text: str, width: int) -> str:
    return text + " " * (width - plain.cells(text))


def _wrapped(text: str, width: int) -> list[str]:
    """`text` in lines of `width` columns at its words (a word longer than a line is cut)."""
    return plain.wrap(text, width) or [""]


@config.command()
@click.argument("name", shell_complete=completes("settings"))
def get(name: str) -> None:
    """Print one setting's value."""
    settings = Client().get("/config")["settings"]
    if name not in settings:  # the names are the daemon's: said as its `config set` says it
        raise click.UsageError(str(unknown_setting(name, settings)))
    click.echo(settings[name]["value"])
    _warn_not_taken([settings[name]])


VALUE_WORDS = {
    "foreign": ("auto", "memory", "exclusive", "ignore"),
    "max-running": ("none",),
    "cpu-jobs": ("auto", "none"),
    "project-limits": ("none",),
    "grace": ("auto",),
    "on-end": ("none",),
    "max-log-size": ("none",),
}
"""The words a setting takes beside its numbers, sizes and durations, offered on Tab after
its name (config.py reads them; its tests check each is taken); `default` goes with all."""


def _value_words(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    from click.shell_completion import CompletionItem

    if ctx.params.get("words"):  # (a setting takes one value)
        return []
    words = (*VALUE_WORDS.get(ctx.params.get("name") or "", ()), "default")
    return [CompletionItem(word) for word in words if word.startswith(incomplete)]


class _WithSettings(click.Command):
    """`config set --help` lists the settings and what each takes: the errors of `config set`
    send there (`see gpuherd config set --help`), which said one line and named none."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from gpuherd.config import SETTINGS  # deferred: ~60 ms, for the help alone

        with formatter.section("Settings"):
            formatter.write_dl([(name, setting.help) for name, setting in SETTINGS.items()])
        formatter.write_paragraph()
        formatter.write_text("VALUE default puts a setting back to its default, as unset does.")


# A value may start with "-" (`set retries -1`, `set keep-free -5%`): read as the value,
# for the daemon to refuse in its words, not as an unknown option.
@config.command(name="set", cls=_WithSettings, context_settings={"ignore_unknown_options": True})
@click.argument("name", shell_complete=completes("settings"))
@click.argument("words", metavar="VALUE", nargs=-1, shell_complete=_value_words)
@click.pass_context
def set_(ctx: click.Context, name: str, words: tuple[str, ...]) -> None:
    """Change a setting; the daemon uses it at once."""
    if not words:  # (VALUE is checked here, not by click: after NAME, the first mistake)
        from gpuherd.config import SETTINGS  # deferred: ~60 ms, for this mistake alone

        if name not in SETTINGS:  # said as the daemon says it of `config set foo 1`
            raise click.UsageError(str(unknown_setting(name, SETTINGS)))
        wanted = next(param for param in ctx.command.params if param.name == "words")
        raise click.MissingParameter(ctx=ctx, param=wanted)  # `no VALUE given: USAGE`
    if len(words) > 1:  # click said `Got unexpected extra argument (h=2)`
        raise click.UsageError(_one_value(name, words))
    (value,) = words
    client = Client()
    # The settings and their rules are the daemon's (config.py): a value it refuses is a
    # mistake in the command line all the same.
    with checked_by_daemon():
        answer = client.post("/config", {"name": name, "value": value})
    # (`set NAME default` says it as `unset NAME` does: it said `keep-free = 0%` alone)
    back = value.strip().lower() == "default"  # (config.DEFAULT, any case, as the daemon reads it)
    click.echo(one_line(answer["message"]) + (" (its default)" if back else ""))
    # Set as asked, but a hook that can only fail is worth a word (`none`, `default`: none).
    if name == "on-end" and answer["message"] != "on-end = none":
        import os

        from gpuherd.cli.other_tools import callback_template_hint
        from gpuherd.cli.submit_hints import hook_path_hint
        from gpuherd.paths import folder_gone
        from gpuherd.program_hints import home_expanded, quoted_home_hint
        from gpuherd.script_files import missing_script_hints

        here = "." if folder_gone() else os.getcwd()  # (removed since: nothing in it to name)
        home, env = str(client.home), os.environ
        # A script or program the hook's shell does not find (a typo, a script not written
        # yet) failed at every job's end, said only in daemon.log: said now, as submit does.
        # (`~/bin/notify`, as the hook's shell expands it; `'~/bin/notify'`, never expanded.)
        found = hook_path_hint(value, here, home, env) or quoted_home_hint(
            value, home, env, "hook", "the hook"
        )
        run = home_expanded(value, env) or value
        missing = [] if found else missing_script_hints([run], home, env, "hook", moved=False)
        for hint in (found, *missing, callback_template_hint(value)):
            if hint is not None:
                click.echo(prefixed("warning", f"on-end: {hint}"), err=True)


TEXT_SETTINGS = ("on-end",)
"""The settings whose value is text that may hold blanks (a command): words typed apart
are quoted into one."""
EXAMPLES = {
    "foreign": "memory",
    "keep-free": "10%",
    "keep-ram": "8GiB",
    "reserve-after": "5m",
    "max-running": "4",
    "cpu-jobs": "auto",
    "project-limits": "lr-sweep=2,eval=1",
    "retries": "3",
    "grace": "30s",
    "max-log-size": "10GiB",
}
"""A value each other setting takes (its help's example where it gives one), for the
refusal of several words: quoting them into one, as it advised, was then refused
(`retries: invalid count '1 2'`). Its tests check each is taken, and every setting is here
or in TEXT_SETTINGS."""


def _one_value(name: str, words: tuple[str, ...]) -> str:
    """Why `config set NAME W1 W2 ...` is refused, with a command that works."""
    import shlex

    from gpuherd.config import SETTINGS  # deferred: ~60 ms, for this mistake alone

    if name not in SETTINGS:  # (said as the daemon says it of `config set foo 1`)
        return str(unknown_setting(name, SETTINGS))
    said = f"{name} takes one value, not {len(words)}"
    command = f"{typed_name()} config set {name}"
    if name in TEXT_SETTINGS:  # `on-end notify-send done`
        return f"{said}: quote it: {command} {shlex.quote(' '.join(words))}"
    if name == "project-limits" and all("=" in word for word in words):  # `g=1 h=2`
        return f"{said}: separate them with commas: {command} {','.join(words)}"
    given = f"{said} ({shlex.quote(' '.join(words))}): give one"
    example = EXAMPLES.get(name)  # (a setting added without one: no example, no traceback)
    return f"{given}, e.g. {command} {example}" if example else given


@config.command()
@click.argument("name", shell_complete=completes("settings"))
def unset(name: str) -> None:
    """Put a setting back to its default (as set NAME default)."""
    from gpuherd.config import DEFAULT

    with checked_by_daemon():  # (an unknown NAME is refused in the daemon's words)
        answer = Client().post("/config", {"name": name, "value": DEFAULT})
    click.echo(f"{one_line(answer['message'])} (its default)")


COMMANDS = [config]
