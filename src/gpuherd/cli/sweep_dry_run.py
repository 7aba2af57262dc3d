"""`gpuherd sweep --dry-run`: the sweep expanded here, with no daemon, and its commands
printed one a line for `| gpuherd run` (or, with --json, a submission's JSON without ids).
Its refusals and warnings are the submission's, in the same words (sweeps.py): a dry run
that passes where the submission is refused, or says less, misleads."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import click

from gpuherd.cli.main import prefixed
from gpuherd.cli.submit_hints import home_on_ray
from gpuherd.cli.sweep_path import recorded_seed
from gpuherd.core.commands import shell_joined
from gpuherd.core.sweep import (
    Point,
    SweepError,
    SweepSpec,
    count,
    expand,
    size_refusal,
    spec_to_dict,
    unused_params,
)
from gpuherd.core.sweep_env import env_placeholders, worded_for_file
from gpuherd.core.sweep_values import alike_values
from gpuherd.core.units import plural
from gpuherd.errors import HerdError
from gpuherd.program_hints import sweep_program_hints
from gpuherd.script_files import missing_script_hints
from gpuherd.submission_folders import refuse_home_folder
from gpuherd.submission_text import reject_not_utf8_in


@dataclass
class DryRun:
    """How to say a dry run: `as_json`; `lost`, the options the commands leave out
    (sweep_left_out.py); `cli_warnings`, those of the sweep's values and template; `env`,
    the --env values every point gets; `file_env`, those of them a sweep `file`'s `env` gave
    (their warnings name its keys, as a submission's: core/sweep_env.worded_for_file)."""

    as_json: bool
    lost: str | None
    cli_warnings: list[str]
    env: Mapping[str, str]
    file: str = ""
    file_env: Mapping[str, str] = field(default_factory=dict)


def unused_warning(key: str) -> str:
    """A parameter no placeholder uses, said as the daemon says it (sweeps.py)."""
    return f"parameter {key!r} does not appear in the command: it only names folders"


def dry_run(spec: SweepSpec, cwd: str, yes: bool, said: DryRun) -> None:
    """Expand here (no daemon): the commands on stdout, one a line, the rest on stderr; or
    with --json, what a submission's JSON says, `ids` empty, and the `commands`."""
    check_size(spec, yes, "pass --yes to list them all")
    # Bytes that are not UTF-8 refused as the daemon refuses them: expanded here, their
    # points' folder names failed to hash them (a traceback).
    reject_not_utf8_in("sweep: ", spec_to_dict(spec))
    results = os.path.normpath(os.path.join(cwd, os.path.expanduser(spec.results_path)))
    refuse_home_folder("results_dir", results)  # (as the daemon's sweep_plan.placed_spec)
    seed, recorded = spec.seed, False
    if spec.needs_seed and seed is None:  # as the daemon draws: with the sweep's own seed
        seed = recorded_seed(spec.name)
        recorded = seed is not None
    chosen = spec.needs_seed and seed is None
    if chosen:
        seed = secrets.randbelow(2**31)
    try:
        points = expand(replace(spec, results_dir=results, seed=seed))
    except SweepError as exc:
        raise HerdError(f"invalid sweep: {exc}") from None
    commands = [point.command or "" for point in points]
    lines = [] if said.as_json else one_a_line(points)
    if chosen and not said.as_json:  # (the JSON says seed_chosen)
        click.echo(f"seed {seed} (chosen; pass --seed {seed} to get the same points)", err=True)
    elif recorded and not said.as_json:
        click.echo(f"seed {seed} (recorded for sweep {spec.name}: the points it draws)", err=True)
    names = [*spec.fixed, *spec.varying]
    warnings = [
        *said.cli_warnings,
        *(unused_warning(key) for key in unused_params(spec.command or "", spec)),
        *alike_values(spec),
        *sweep_program_hints(spec.command, cwd, {**os.environ, **said.env}, len(points)),
        *missing_script_hints(
            commands, cwd, {**os.environ, **said.env}, noun="point", on_ray=home_on_ray
        ),
        *worded_for_file(
            env_placeholders(spec.command, names, said.env), spec.command, said.file, said.file_env
        ),
    ]
    for warning in warnings:  # on stderr with --json too, as a submission's
        click.echo(prefixed("warning", warning), err=True)
    if said.lost:
        click.echo(prefixed("warning", said.lost), err=True)
    if said.as_json:
        # The keys of a submission's JSON that need no daemon (the done, failed and queued
        # points are the daemon's to count); `commands` as the daemon's own dry run names them.
        answer = {
            "name": spec.name,
            "results_dir": results,
            "seed": seed,
            "seed_chosen": chosen,
            "points": len(points),
            "ids": [],
            "cancelled": [],
            "dry_run": True,
            "warnings": warnings,
            "commands": commands,
        }
        click.echo(json.dumps(answer, indent=1))
        return
    for line in lines:
        # The command exactly: its own final line break ends its line (as a `command: |`
        # block's does); one a line is what `| gpuherd run` reads.
        click.echo(line, nl=not line.endswith("\n"))
    done = f"{plural(len(points), 'command')} of sweep {spec.name} (dry run: nothing submitted)"
    click.echo(done, err=True)


def one_a_line(points: list[Point]) -> list[str]:
    """Each point's command on one line: continued lines (`\\` at a line's end, a `command: |`
    block's) joined as the shell joins them. A command of several lines cannot be one:
    joined, its lines would be one other command (`cd /tmp echo 1`); as they are, each line
    would be a job of its own."""
    lines = [shell_joined(point.command or "") for point in points]
    for point, line in zip(points, lines, strict=True):
        if "\n" in line.removesuffix("\n"):
            raise HerdError(
                f"the command of point {point.folder} has several lines, which --dry-run's one"
                " command a line cannot show: --dry-run --json prints the commands exactly, or"
                " put the lines in a script and run that"
            )
    return lines


def check_size(spec: SweepSpec, yes: bool, action: str) -> None:
    """Too many points: said here, in the CLI's words (the daemon would say it in HTTP's)."""
    refusal = size_refusal(spec.name, count(spec), yes=yes, action=action, samples="--samples N")
    if refusal:
        raise HerdError(refusal)
