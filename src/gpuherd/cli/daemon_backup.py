"""`gpuherd daemon backup FILE`: the queue's database copied, consistent, while jobs go on.

A verb of `daemon`, beside `start` and `stop`, which its restore takes (stop, put the copy in
place of herd.db, start): like them it is about the home the daemon keeps, not about jobs.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from gpuherd import paths
from gpuherd.cli.param_types import Place


@click.command()
@click.argument(
    "file", type=Place(path_type=str, what="the file to write the copy to, such as herd-backup.db")
)
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
def backup(file: str, force: bool) -> None:
    """Copy the queue (herd.db) to FILE, in one consistent state, readable by you alone.

    Safe while the daemon runs (jobs go on starting and ending), and with none running. To
    restore it: `gpuherd daemon stop`; in the home (`gpuherd daemon status` names it), move
    herd.db aside with its herd.db-wal and herd.db-shm where they are (a clean stop leaves
    none): `mkdir aside && mv herd.db* aside/`; copy FILE in as herd.db; `gpuherd daemon
    start`.
    """
    if file == "-":  # (`submit --file -` reads stdin: here it wrote a file named `-`)
        raise click.UsageError(
            "FILE is -: the backup is a database file, it cannot go to standard output; "
            "give a file name, such as herd-backup.db (./- for a file named -)"
        )
    # deferred: sqlite3 and tempfile, which every other `daemon` command (status) would load
    from gpuherd.queue_backup import back_up

    # (A str: Path drops the trailing slash of a folder meant, back_up's `folder`.)
    folder = file.endswith(os.sep)
    click.echo(back_up(paths.home_dir(), Path(file).absolute(), force, folder))
