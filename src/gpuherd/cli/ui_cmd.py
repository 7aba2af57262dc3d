"""`gpuherd ui`: the web dashboard's URL, starting the daemon's TCP listener if it has none.

Talks to the daemon over its Unix socket only (standard library client; nothing of the
dashboard is imported here, so the CLI stays fast).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import click

from gpuherd.cli.param_types import LISTEN
from gpuherd.client import Client
from gpuherd.errors import HerdError, NotFound
from gpuherd.listen_address import every_interface, parse_address
from gpuherd.typed_name import prefixed, typed_name


def show_dashboard(answer: dict[str, Any]) -> None:
    """The dashboard's URL (`gpuherd ui`, `daemon start --listen`); for a listener on every
    interface, also the URL other machines use, and a warning of what that exposes."""
    click.echo(f"dashboard: {answer['url']}")
    if answer.get("remote_url"):
        click.echo(f"     from other machines: {answer['remote_url']}")
    host, port = parse_address(answer.get("address") or "127.0.0.1:0")
    if every_interface(host):
        remote = answer.get("remote_url")
        machine = urlsplit(remote).hostname if remote else None
        note = (
            f"the dashboard listens on every interface ({answer['address']}), over plain "
            "HTTP: whoever can watch the network reads the token in its traffic, and with it "
            f"runs commands as you; to keep it off the network, --listen 127.0.0.1:{port} and "
            f"an SSH tunnel (ssh -L {port}:127.0.0.1:{port} {machine or 'HOST'})"
        )
        click.echo(prefixed("warning", note), err=True)


@click.command()
@click.option(
    "--listen",
    # Checked here, as `daemon start --listen` checks it: '' was taken for no --listen, and
    # `x` was the daemon's refusal (exit 1), not the command line's (exit 2).
    type=LISTEN,
    metavar="HOST:PORT",
    help="Where to listen if not yet listening (default 127.0.0.1:8888, or the next free port).",
)
@click.option("--url", "url_only", is_flag=True, help="Only print the URL of a running listener.")
@click.option(
    "--open",
    "open_browser",
    is_flag=True,
    help="Also open it in a web browser (at a one-time link, not the token's URL).",
)
@click.option("--stop", is_flag=True, help="Stop the TCP listener (the Unix socket stays).")
@click.option(
    "--new-token",
    is_flag=True,
    help="Make a new token: every browser and script of the old one is refused from now on.",
)
def ui(listen: str | None, url_only: bool, open_browser: bool, stop: bool, new_token: bool) -> None:
    """The web dashboard: prints its URL (with the token), starting the listener if needed.

    The listener lasts until the daemon stops; `gpuherd daemon start --listen HOST:PORT`
    starts one with the daemon. The token stays the same through daemon restarts, until
    --new-token or --stop. Anyone with the URL can run commands as you: keep it secret.
    """
    _refuse_mixed(listen, url_only, open_browser, stop, new_token)
    client = Client()
    if new_token:  # (and listening, where it was not: a new token is for a dashboard to use)
        answer = client.post("/daemon/listen", {"new_token": True, "address": listen})
        show_dashboard(_say_not_saved(answer))
        if open_browser:
            _open_in_browser(client)
        return
    answer = client.get("/daemon/listen")
    if stop:
        if not answer["listening"]:  # said so, rather than "stopped" of nothing
            click.echo("the dashboard was not listening on TCP: nothing to stop")
            return
        _say_not_saved(client.post("/daemon/listen", {"stop": True}))
        click.echo("dashboard listener stopped")
        return
    if not answer["listening"]:
        if url_only:
            raise HerdError(
                f"the daemon is not listening on TCP: `{typed_name()} ui` starts the dashboard"
            )
        answer = _say_not_saved(client.post("/daemon/listen", {"address": listen}))
    elif listen is not None:  # ('' is refused: LISTEN)
        answer = client.post("/daemon/listen", {"address": listen})  # 409 if elsewhere
    if url_only:
        click.echo(answer["url"])
        return
    show_dashboard(answer)
    if open_browser:
        _open_in_browser(client)


def _say_not_saved(answer: dict[str, Any]) -> dict[str, Any]:
    """Warn of a change the daemon made but could not save in herd.db (locked by another
    program, say): a `daemon restart` after a crash would undo it. Not an error: it is made."""
    if answer.get("not_saved"):
        click.echo(prefixed("warning", answer["not_saved"]), err=True)
    return answer


def _open_in_browser(client: Client) -> None:
    """Open the dashboard at a one-time URL, not the token's: a browser's command line is
    shown by `ps` to every user of the machine (api/open_codes.py)."""
    import webbrowser

    try:
        url = client.post("/daemon/listen/code")["url"]
    except NotFound:  # a daemon of a gpuherd before the codes
        note = "this daemon is older than one-time links: open the URL above in your browser"
        click.echo(prefixed("warning", note), err=True)
        return
    # False when no browser can be started here (a server over SSH, no DISPLAY): said,
    # where --open did nothing and said nothing. Exit 0: the URL is printed and works.
    if not webbrowser.open(url):
        note = "no web browser found here: open the URL above in yours"
        click.echo(prefixed("warning", note), err=True)


def _refuse_mixed(
    listen: str | None, url_only: bool, open_browser: bool, stop: bool, new_token: bool
) -> None:
    """`--stop` and `--url` each do one thing: given with another option, one of the two was
    silently dropped (`ui --url --stop` stopped the listener; `ui --url --open` opened
    nothing)."""
    others = [
        name
        for name, given in (
            ("--listen", listen is not None),
            ("--open", open_browser),
            ("--new-token", new_token),
        )
        if given
    ]
    if stop and (others or url_only):
        alone, why = "--stop", "it stops the TCP listener"
        others = ["--url", *others] if url_only else others
    elif url_only and others:
        alone, why = "--url", "it only prints the URL of a running listener"
    else:
        return
    raise click.UsageError(f"{alone} goes alone, not with {' or '.join(others)}: {why}")


COMMANDS = [ui]
