"""`gpuherd run --order longest-first`: the earlier run times it orders by, and what it says
of where they come from and of an input it must read whole first."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import click


def reading_whole_input(stdin: TextIO | None) -> str:
    """What --order longest-first says of an input that is a stream (a pipe, `tail -f`, the
    terminal): it reads it to its end before any job starts."""
    end = "Ctrl-D ends it" if stdin is not None and stdin.isatty() else "until it is closed"
    return (
        f"--order longest-first: reading the whole input before the first job starts ({end}; "
        "Ctrl-C stops the run)"
    )


def earlier_run_times(times_from: Path | None, output_dir: Path | None) -> dict[str, float]:
    """--order longest-first's run times: from --times-from, else from a rerun's own folder
    (`output_dir`: the --output-dir given; None, a new folder of this run's, holds none)."""
    from gpuherd.jobfiles import earlier_run_times as times_in

    folder = times_from or output_dir
    if folder is None:  # naming the herd_runs/<timestamp> just made told nothing to do
        click.echo(
            "--order longest-first: no earlier run times (this run's folder is new): jobs start "
            "in input order; --times-from DIR takes them from an earlier run's folder"
        )
        return {}
    try:
        times = times_in(folder)
    except OSError as exc:
        if times_from is not None:  # named by the user: say so; a new --output-dir is fine
            raise click.UsageError(
                f"--times-from {times_from}: {exc.strerror} (give an earlier run's --output-dir)"
            ) from None
        times = {}
    if not times:
        run = _run_folder_in(folder)
        inside = f"; {folder} holds runs: give one, as --times-from {run}" if run else ""
        click.echo(
            f"--order longest-first: no earlier run times in {folder} (no job folder with an "
            f"ended job.json): jobs start in input order{inside}"
        )
    return times


RUN_FOLDERS_LOOKED_AT = 20
"""Folders looked into (newest first) for a run's, in a folder with no run's job folders."""


def _run_folder_in(folder: Path) -> str | None:
    """The newest folder in `folder` that holds run times: `--times-from herd_runs` (the
    folder of the runs, not a run's) found none, and said nothing of where they were. None
    when there is none among the newest RUN_FOLDERS_LOOKED_AT."""
    import os

    from gpuherd.core.text import shell_word
    from gpuherd.jobfiles import earlier_run_times as times_in

    try:
        with os.scandir(folder) as entries:
            found = [(e.stat().st_mtime, e.name) for e in entries if e.is_dir()]
    except OSError:
        return None
    for _, name in sorted(found, reverse=True)[:RUN_FOLDERS_LOOKED_AT]:
        try:
            if times_in(folder / name):
                return shell_word(str(folder / name))
        except OSError:
            continue
    return None
