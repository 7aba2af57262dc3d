"""`-o/--output FILE` and `-e/--error FILE` of `submit`, `sweep` and `edit`: files of the
user's choosing for a job's output, as Slurm's `sbatch -o/-e` (core/output_files.py). Checked
here as the daemon checks them (output_paths.py), once the working directory is known: a path
that cannot be one is a usage error (exit 2), and nothing is submitted (or edited)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from gpuherd.cli.param_types import completes
from gpuherd.core.text import ascii_digits
from gpuherd.errors import HerdError

F = TypeVar("F", bound=Callable[..., Any])


def output_options(what: str = "the job") -> Callable[[F], F]:
    """--output and --error, as submit and sweep take them."""

    def apply(command: F) -> F:
        command = click.option(
            "-e",
            "--error",
            metavar="FILE",
            shell_complete=completes("files"),
            help=f"Write the stderr of {what} to FILE (placeholders as --output).",
        )(command)
        return click.option(
            "-o",
            "--output",
            metavar="FILE",
            shell_complete=completes("files"),
            help=f"Write the stdout of {what} to FILE, and its stderr too without --error; "
            "%j: job id, %a: attempt, %x: name, %%: %.",
        )(command)

    return apply


def check_outputs(
    opts: Mapping[str, Any], cwd: str | None, in_file: Callable[[str], str | None] = lambda _: None
) -> None:
    """A usage error for --output or --error naming a file the jobs could not write. `cwd`
    None: each job's own, which only the daemon knows (`edit`): a relative file is checked
    there, job by job, and only its name here. `in_file`: where a sweep file gave the key
    (`sweep.yaml:4`), None where the command line did: the file's value is named as its key
    there, as the file's other errors name theirs, not as a flag that was never typed."""
    for name in ("output", "error"):
        given = opts.get(name)
        if given is None:
            continue
        if name == "output" and ascii_digits(given) and cwd is not None and not in_file(name):
            # pueue's `add -o 10` is its priority: the output went to a file named 10
            raise click.UsageError(
                f"--output {given}: -o names the file the output goes to, not a priority, "
                f"which is --priority {given} (pueue's add -o); a file of that name is ./{given}"
            )
        # deferred: the checks' code (a dataclass, regexes) costs every ls, show, submit ~1 ms
        from gpuherd.output_paths import name_problem, output_problem, shown

        if cwd is None and not os.path.isabs(os.path.expanduser(given)):
            problem = name_problem(given)
        else:  # (an absolute file is the same from any folder)
            problem = output_problem(given, cwd or os.getcwd())
        if problem and (place := in_file(name)):
            raise HerdError(f"{place}: {name}: {shown(given)}: {problem}")
        if problem:
            raise click.UsageError(f"--{name} {shown(given)}: {problem}")


def refuse_follow_unkept(follow: bool, output: str | None, cwd: str) -> None:
    """A usage error for `--follow` with an --output that keeps nothing (/dev/null, a named
    pipe): the follow would have no log to read and end at once, in an error, while the job
    runs on, its exit status (what --follow waits for) never told."""
    if not follow or output is None or "%" in output:  # (a placeholder's file: made later)
        return
    from gpuherd.output_paths import absolute  # deferred: as in check_outputs

    path = absolute(output, cwd)
    if os.path.exists(path) and not os.path.isfile(path):
        raise click.UsageError(
            f"--follow prints the job's stdout, which --output {output} does not keep: give "
            "--wait to wait for the job and exit with its exit status"
        )
