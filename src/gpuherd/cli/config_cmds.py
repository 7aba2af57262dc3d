"""`gpuherd config`: read and change placement settings while the daemon runs."""

from __future__ import annotations

import json

import click

from gpuherd.cli.main import prefixed
from gpuherd.cli.options import json_option
from gpuherd.cli.param_types import checked_by_daemon, completes
from gpuherd.client import Client
from gpuherd.core.text import one_line
from gpuherd.typed_name import typed_name


@click.group(invoke_without_command=True)
@json_option()
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Daemon settings: list them, `get NAME`, or `set NAME VALUE` (kept across restarts)."""
    if ctx.invoked_subcommand is not None:
        return
    settings = Client().get("/config")["settings"]
    if as_json:
        click.echo(json.dumps({k: v["value"] for k, v in settings.items()}, indent=1))
        return
    width = max(len(name) for name in settings)
    for name, setting in settings.items():
        value = one_line(setting["value"])
        if len(value) > 8:  # a command (on-end): its own line, the help under it
            click.echo(f"{name:<{width}}  {value}\n{'':<{width + 12}}{setting['help']}")
        else:
            click.echo(f"{name:<{width}}  {value:<8}  {setting['help']}")


@config.command()
@click.argument("name", shell_complete=completes("settings"))
def get(name: str) -> None:
    """Print one setting's value."""
    settings = Client().get("/config")["settings"]
    if name not in settings:
        raise click.BadParameter(f"unknown setting '{name}': use one of {', '.join(settings)}")
    click.echo(settings[name]["value"])


# A value may start with "-" (`set retries -1`, `set keep-free -5%`): read as the value,
# for the daemon to refuse in its words, not as an unknown option.
@config.command(name="set", context_settings={"ignore_unknown_options": True})
@click.argument("name", shell_complete=completes("settings"))
@click.argument("words", metavar="VALUE", nargs=-1, required=True)
def set_(name: str, words: tuple[str, ...]) -> None:
    """Change a setting; the daemon uses it at once."""
    if len(words) > 1:  # click said `Got unexpected extra argument (h=2)`
        import shlex

        if all("=" in word for word in words):  # `project-limits g=1 h=2`
            how = f"separate them with commas: {typed_name()} config set {name} {','.join(words)}"
        else:  # `on-end notify-send done`
            how = f"quote it: {typed_name()} config set {name} {shlex.quote(' '.join(words))}"
        raise click.UsageError(f"{name} takes one value, not {len(words)}: {how}")
    (value,) = words
    client = Client()
    # The settings and their rules are the daemon's (config.py): a value it refuses is a
    # mistake in the command line all the same.
    with checked_by_daemon():
        answer = client.post("/config", {"name": name, "value": value})
    click.echo(one_line(answer["message"]))
    if name == "on-end":  # set as asked, but a hook that can only fail is worth a word
        import os

        from gpuherd.cli.submit_hints import hook_path_hint

        hint = hook_path_hint(value, os.getcwd(), str(client.home), os.environ)
        if hint is not None:
            click.echo(prefixed("warning", f"on-end: {hint}"), err=True)


COMMANDS = [config]
