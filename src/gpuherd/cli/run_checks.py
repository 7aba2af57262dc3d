"""`gpuherd run`'s command line checked before anything runs: its GPUs and job file, the
names of its job folders. Usage errors (exit 2), one line each."""

from __future__ import annotations

import os
from pathlib import Path

import click

from gpuherd.cli.options import gpu_choice
from gpuherd.cli.run_gpus import split_gpus_and_file
from gpuherd.core.text import shell_word

PREFIX_MAX = 200
"""Bytes of --prefix: a job folder's name (prefix + number) must fit a file name (255)."""


def gpus_and_file(
    gpus: str | None, fake_gpus: str | None, args: tuple[str, ...], yielder: Path | None
) -> tuple[str | None, str | None]:
    """--gpus (with the indices typed after it) and the job file, checked, --gpus with
    --fake-gpus first: a script's advice repeated them, a pair the command refuses."""
    from gpuherd.cli.not_job_file import refuse_script

    spec, file = split_gpus_and_file(gpus, args)
    if spec is not None and fake_gpus is not None:
        gpu_choice(spec, fake_gpus)  # (they exclude each other: its usage error)
    if file and yielder:
        raise click.UsageError("give a job file or --yielder, not both")
    refuse_script(file, "run")  # `run job.sh` ran each of its lines as a job of its own
    return spec, file


def check_folder_names(prefix: str, output_dir: str | None) -> None:
    """Job folders are OUTPUT/<prefix><number>: a prefix that is a path would put them (and
    overwrite what is there) outside --output-dir; a name that is not UTF-8 cannot be kept
    as text (job.json, the run's queue), and each job was refused with a line of its own.
    Usage errors (exit 2), as click's are (an empty --output-dir is refused by its type)."""
    for option, name in (("--output-dir", output_dir or ""), ("--prefix", prefix)):
        try:
            name.encode()  # (bytes that are not UTF-8 come from argv as lone surrogates)
        except UnicodeEncodeError:
            raise click.UsageError(
                f"{option} {shell_word(name)}: not UTF-8: give a name in UTF-8"
            ) from None
    separators = {"/", os.sep, os.altsep or "/"}
    if prefix in (".", "..") or any(sep in prefix for sep in separators):
        raise click.UsageError(
            f"--prefix {prefix}: give the start of a folder name, with no '/' and not . or .."
            " (e.g. --prefix job_): job folders go in --output-dir"
        )
    if (size := len(os.fsencode(prefix))) > PREFIX_MAX:
        # (bytes, as a file name counts them: 126 of `é` are 252, which "characters" hid)
        raise click.UsageError(
            f"--prefix is too long ({size} bytes): give at most {PREFIX_MAX} bytes (a letter"
            " outside ASCII takes 2 to 4)"
        )
