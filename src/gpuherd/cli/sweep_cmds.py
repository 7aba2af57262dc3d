"""`gpuherd sweep`: submit a parameter grid or random search, and look at its results.

    gpuherd sweep "python train.py --lr {lr} --bs {bs}" -p lr 0.1 0.01 -p bs 32 64
    gpuherd sweep sweep.yaml [--gpus 2 ...]        # options here override the file's
    gpuherd sweep status NAME [--sort -val_acc] [--json | --csv]
    gpuherd sweep ls [--json]

The CLI only parses: the daemon expands the sweep, skips done points and submits the rest
(sweeps.py). `--dry-run` expands here, with no daemon, and prints the commands.
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import shlex
import sys
from dataclasses import asdict, replace
from typing import Any

import click
from click.core import ParameterSource

from gpuherd.cli import render
from gpuherd.cli.options import DURATION, ENV_PAIR, IDS, json_option, memory_options
from gpuherd.client import Client
from gpuherd.core.sweep import (
    MAX_POINTS,
    SweepError,
    SweepSpec,
    count,
    expand,
    spec_to_dict,
    unused_params,
)
from gpuherd.core.sweep_names import default_sweep_name, value_text
from gpuherd.core.units import format_duration, format_size
from gpuherd.errors import HerdError
from gpuherd.wire import SweepOptions

CONFIRM_POINTS = 10_000
RUN = "submit"
FILE_SUFFIXES = (".yaml", ".yml", ".toml")
# Submit options a sweep file may set too: (CLI name, SubmitOptions name).
_FILE_OPTIONS = ("gpus", "mem", "priority", "retries", "timeout", "max_parallel", "project")


class _SweepGroup(click.Group):
    """`sweep TEMPLATE|FILE ...` runs the hidden `submit` command; `status` and `ls` are verbs."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [RUN, *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "TEMPLATE -p NAME V1 V2 ... [OPTIONS]")
        formatter.write_usage(ctx.command_path, "FILE.yaml|FILE.toml [OPTIONS]", "   or: ")
        formatter.write_usage(ctx.command_path, "status NAME | ls", "   or: ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        run = self.commands[RUN]
        params = [p for p in run.get_params(ctx) if p.name != "help"]
        records = [r for p in params if (r := p.get_help_record(ctx))]
        records.insert(0, ("-p, --param NAME V1 V2 ...", "A parameter and its values (repeat)."))
        with formatter.section("Options of a sweep"):
            formatter.write_dl(records)
        super().format_options(ctx, formatter)


class _ParamsCommand(click.Command):
    """Takes `-p NAME V1 V2 ...` out of the arguments before click parses the rest."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest, params = take_params(args)
        ctx.meta["gpuherd.params"] = params
        return super().parse_args(ctx, rest)


def _is_value(token: str) -> bool:
    if not token.startswith("-") or token == "-":
        return True
    try:
        float(token)  # -1, -0.5, -1e-3 are values
    except ValueError:
        return False
    return True


def take_params(args: list[str]) -> tuple[list[str], list[tuple[str, list[Any]]]]:
    """Split `-p NAME V1 V2 ...` groups from the other arguments (a value ends at an option)."""
    rest: list[str] = []
    params: list[tuple[str, list[Any]]] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            rest += args[i:]
            break
        if token not in ("-p", "--param"):
            rest.append(token)
            i += 1
            continue
        if i + 1 >= len(args) or not _is_value(args[i + 1]):
            raise click.UsageError(f"{token} needs a NAME and values: -p lr 0.1 0.01")
        name, i = args[i + 1], i + 2
        values: list[Any] = []
        while i < len(args) and _is_value(args[i]):
            values.append(typed(args[i]))
            i += 1
        if not values:
            raise click.UsageError(f"-p {name}: give at least one value")
        if any(name == known for known, _ in params):
            raise click.UsageError(f"-p {name} given twice: list all its values after one -p")
        params.append((name, values))
    return rest, params


def typed(text: str) -> Any:
    """A number when the text reads back the same (32, 0.001), else the text ("1e-3", "007")."""
    try:
        if str(int(text)) == text:
            return int(text)
    except ValueError:
        pass
    try:
        if repr(float(text)) == text:
            return float(text)
    except ValueError:
        pass
    return text


def _is_file(source: str) -> bool:
    return (
        source.lower().endswith(FILE_SUFFIXES)
        and not any(c.isspace() for c in source)
        and ("{" not in source)
    )


@click.group(cls=_SweepGroup)
def sweep() -> None:
    """Run a command over a parameter grid or random search, one results folder per point.

    \b
    gpuherd sweep "python train.py --lr {lr} --bs {bs}" -p lr 0.1 0.01 -p bs 32 64
    gpuherd sweep sweep.yaml            (YAML or TOML; options here override the file's)
    gpuherd sweep status NAME --sort -val_acc
    gpuherd sweep ls

    Placeholders get the value shell-quoted; {run_dir}, {sweep} and {index} are there too.
    Submitting again skips points whose folder holds SUCCESS and reruns the others.
    """


@sweep.command(name=RUN, cls=_ParamsCommand, hidden=True)
@click.argument("source")
@click.option("--name", help="The sweep's name (default: from the file, or the template).")
@click.option("--results-dir", help="Folder of the point folders (default: results/NAME).")
@click.option("--samples", "--n-samples", type=click.IntRange(1), help="Draw N points.")
@click.option("--seed", type=int, help="Seed for --samples and --shuffle (default: chosen).")
@click.option("--shuffle", is_flag=True, help="Run the grid in a random order.")
@click.option("--force", is_flag=True, help="Run every point again, done ones too.")
@click.option("--dry-run", is_flag=True, help="Print the commands, one a line; submit nothing.")
@click.option("--yes", is_flag=True, help="Submit even more than 10,000 points.")
@click.option("--gpus", type=click.IntRange(0, 64), default=1, help="GPUs per point (0 = CPU).")
@memory_options("each point")
@click.option("--priority", type=int, default=0, help="Higher runs first.")
@click.option("--after", type=IDS, help="Start only after these jobs succeeded.")
@click.option("--retries", type=click.IntRange(0), default=0, help="Rerun a failed point N times.")
@click.option("--timeout", type=DURATION, help="Stop an attempt after this long (90s, 2h).")
@click.option("--grace", type=DURATION, default="10s", help="SIGTERM to SIGKILL delay.")
@click.option("--hold", is_flag=True, help="Queue the points held (gpuherd release).")
@click.option("--project", help="Group the jobs by project.")
@click.option("--max-parallel", type=click.IntRange(1), help="Run at most N points at once.")
@click.option(
    "--order",
    type=click.Choice(["given", "longest-first"]),
    default="given",
    help="longest-first: points that ran longest before start first (packs the GPUs tighter).",
)
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, resolve_path=True),
    help="Working directory of the jobs (default: the current one).",
)
@click.option("--env", "env_pairs", type=ENV_PAIR, multiple=True, help="NAME=VALUE (repeat).")
@click.option("-q", "--quiet", is_flag=True, help="Print only the job ids.")
@json_option()
@click.pass_context
def submit_sweep(ctx: click.Context, /, source: str, **opts: Any) -> None:
    """Submit a sweep: a TEMPLATE with -p NAME VALUES..., or a sweep FILE (.yaml, .toml)."""
    params: list[tuple[str, list[Any]]] = ctx.meta.get("gpuherd.params", [])
    cwd = opts["cwd"] or os.getcwd()
    spec, options = _build(ctx, source, params, opts)
    if opts["dry_run"]:
        _dry_run(spec, cwd, opts["yes"])
        return
    body = {
        "spec": spec_to_dict(spec),
        "cwd": cwd,
        "env": dict(os.environ),
        "options": asdict(options),
        "force": opts["force"],
        "yes": opts["yes"],
    }
    answer = Client(timeout=600.0).post("/sweeps", body)
    for warning in answer["warnings"]:
        click.echo(f"gpuherd: warning: {warning}", err=True)
    if opts["as_json"]:
        click.echo(json.dumps(answer, indent=1))
    elif opts["quiet"]:
        click.echo("\n".join(str(i) for i in answer["ids"]))
    else:
        click.echo(summary(answer))


def _build(
    ctx: click.Context, source: str, params: list[tuple[str, list[Any]]], opts: dict[str, Any]
) -> tuple[SweepSpec, SweepOptions]:
    """The spec and the submit options, from a file or a template, with the CLI's overrides."""

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE

    env = dict(opts["env_pairs"])
    base: dict[str, Any] = {}
    try:
        if _is_file(source):
            from gpuherd.sweepfile import SweepFileError, load_sweep

            if params:
                raise click.UsageError("give the parameters in the sweep file, or -p, not both")
            try:
                loaded = load_sweep(source)
            except SweepFileError as exc:
                raise HerdError(str(exc)) from None
            spec = loaded.spec
            base = {k: getattr(loaded.options, k) for k in _FILE_OPTIONS}
            env = {**loaded.options.env, **env}
        else:
            name = opts["name"] or default_sweep_name(source)
            grid = {key: tuple(values) for key, values in params}
            spec = SweepSpec(
                name=name,
                command=source,
                results_dir=f"results/{name}",
                grids=(grid,) if grid else (),
            )
        changes = {
            key: opts[key]
            for key in ("name", "results_dir", "samples", "seed")
            if opts[key] is not None
        }
        if opts["shuffle"]:
            changes["shuffle"] = True
        spec = replace(spec, **changes)
    except SweepError as exc:
        raise HerdError(f"invalid sweep: {exc}") from None
    chosen = {k: opts[k] for k in _FILE_OPTIONS if given(k) or k not in base}
    submit = {**base, **chosen}
    options = SweepOptions(
        env_overrides=env,
        ram=opts["ram"],
        oom_retry=opts["oom_retry"],
        after=opts["after"] or [],
        grace=opts["grace"],
        hold=opts["hold"],
        order=opts["order"],
        **submit,
    )
    return spec, options


def _dry_run(spec: SweepSpec, cwd: str, yes: bool) -> None:
    """Expand here (no daemon): the commands on stdout, one a line; the rest on stderr."""
    total = count(spec)
    if total > CONFIRM_POINTS and not yes:
        raise HerdError(
            f"sweep {spec.name!r} has {total:,} points, more than {CONFIRM_POINTS:,}: "
            "pass --yes to list them all, or narrow it"
            + (" (--samples N)" if total <= MAX_POINTS else "")
        )
    results = os.path.normpath(os.path.join(cwd, os.path.expanduser(spec.results_dir)))
    chosen = spec.needs_seed and spec.seed is None
    seed = secrets.randbelow(2**31) if chosen else spec.seed
    try:
        points = expand(replace(spec, results_dir=results, seed=seed))
    except SweepError as exc:
        raise HerdError(f"invalid sweep: {exc}") from None
    if chosen:
        click.echo(f"seed {seed} (chosen; pass --seed {seed} to get the same points)", err=True)
    for key in unused_params(spec.command or "", spec):
        click.echo(f"gpuherd: warning: parameter {key!r} does not appear in the command", err=True)
    for point in points:
        click.echo((point.command or "").replace("\n", " "))
    done = f"{len(points)} commands of sweep {spec.name} (dry run: nothing submitted)"
    click.echo(done, err=True)


def summary(answer: dict[str, Any]) -> str:
    """What a submission did, in words."""
    ids = answer["ids"]
    lines = [f"sweep {answer['name']}: {answer['points']} points in {answer['results_dir']}"]
    jobs = f"submitted {len(ids)} job{'s' if len(ids) != 1 else ''}"
    if ids:
        jobs += f" ({render.id_ranges(ids)})"
    parts = [f"{answer['new']} new", f"{answer['rerun_failed']} failed rerun"]
    if answer.get("rerun_done"):
        parts.append(f"{answer['rerun_done']} done rerun (--force)")
    parts += [
        f"{answer['skipped_done']} done skipped",
        f"{answer['skipped_active']} already queued or running skipped",
    ]
    lines.append(f"{jobs}: {', '.join(parts)}")
    if answer.get("seed_chosen"):
        seed = answer["seed"]
        lines.append(f"seed {seed} (chosen; recorded for this sweep; --seed {seed} repeats it)")
    lines.append(f"results: gpuherd sweep status {shlex.quote(answer['name'])}")
    return "\n".join(lines)


# ---- status and ls --------------------------------------------------------------------------


@sweep.command(name="status")
@click.argument("name")
@click.option("--sort", "sort_key", help="Sort by a metric or parameter; -KEY = descending.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV.")
@json_option()
def status(name: str, sort_key: str | None, as_csv: bool, as_json: bool) -> None:
    """Every point of a sweep: its parameters, state, run time and metrics (metrics.json)."""
    from urllib.parse import quote

    table = Client().get(f"/sweeps/{quote(name, safe='')}", sort=sort_key)
    if as_json:
        click.echo(json.dumps(table, indent=1))
    elif as_csv:
        _csv(table)
    else:
        _table(table)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, ".4g")
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _param(params: dict[str, Any], key: str) -> str:
    """A parameter as its folder name and command show it (1.0 stays 1.0)."""
    return value_text(params[key]) if key in params else ""


def _table(table: dict[str, Any]) -> None:
    from rich.table import Table

    rows, varying, metrics = table["rows"], table["varying"], table["metric_keys"]
    peaks = any(row.get("peak_mem") for row in rows)
    grid = Table(box=None, pad_edge=False, header_style="bold")
    for column in ["FOLDER", *varying, "STATE", "JOB", "TIME", *(["PEAK MEM"] * peaks), *metrics]:
        grid.add_column(column, no_wrap=True, overflow="ellipsis")
    for row in rows:
        state = row["state"]
        style = {"done": "green", "missing": "dim"}.get(state) or render._STATE_STYLE.get(state, "")
        seconds = row["seconds"]
        grid.add_row(
            row["folder"],
            *(_param(row["params"], k) for k in varying),
            f"[{style}]{state}[/]" if style else state,
            str(row["job_id"] or ""),
            format_duration(seconds) if seconds is not None else "",
            *([format_size(row["peak_mem"]) if row.get("peak_mem") else ""] * peaks),
            *(_cell(row["metrics"].get(k)) for k in metrics),
        )
    console = render._console()
    console.print(grid)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(table["counts"].items()))
    console.print(f"sweep {table['name']}: {len(rows)} points ({counts}); {table['results_dir']}")


def _csv(table: dict[str, Any]) -> None:
    varying, metrics = table["varying"], table["metric_keys"]
    writer = csv.writer(sys.stdout)
    writer.writerow(["folder", *varying, "state", "job_id", "seconds", *metrics])
    for row in table["rows"]:
        writer.writerow(
            [
                row["folder"],
                *(_param(row["params"], k) for k in varying),
                row["state"],
                row["job_id"] or "",
                "" if row["seconds"] is None else round(row["seconds"], 3),
                *(row["metrics"].get(k, "") for k in metrics),
            ]
        )


@sweep.command(name="ls")
@json_option()
def list_sweeps(as_json: bool) -> None:
    """The sweeps, with their points counted by state."""
    sweeps = Client().get("/sweeps")["sweeps"]
    if as_json:
        click.echo(json.dumps(sweeps, indent=1))
        return
    if not sweeps:
        click.echo("no sweeps yet: gpuherd sweep TEMPLATE -p NAME VALUES... submits one")
        return
    from rich.table import Table

    grid = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("NAME", "POINTS", "STATES", "RESULTS"):
        grid.add_column(column, no_wrap=True, overflow="ellipsis")
    for item in sweeps:
        states = ", ".join(f"{n} {s}" for s, n in sorted(item["counts"].items()))
        grid.add_row(item["name"], str(item["points"]), states, item["results_dir"])
    render._console().print(grid)


COMMANDS = [sweep]
