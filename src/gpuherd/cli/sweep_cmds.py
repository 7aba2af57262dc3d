"""`gpuherd sweep`: submit a parameter grid or random search, and look at its results.

    gpuherd sweep "python train.py --lr {lr} --bs {bs}" -p lr 0.1 0.01 -p bs 32 64
    gpuherd sweep sweep.yaml [--gpus 2 ...]        # options here override the file's
    gpuherd sweep status NAME [--sort -val_acc] [--json | --csv]
    gpuherd sweep ls [--json]
    gpuherd sweep wait NAME [--timeout D] [-q]      # gpuherd wait --sweep NAME
    gpuherd sweep rm NAME [NAME...]                 # its jobs and record; results stay

The CLI only parses (sweep_args.py) and prints (sweep_render.py): the daemon expands the
sweep, skips done points and submits the rest (sweeps.py). `--dry-run` expands here, with no
daemon, and prints the commands: they are for `| gpuherd run`, whose GPUs are its own, so
the daemon's are not asked whether they could run them (Python's dry_run asks the daemon).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import asdict
from typing import Any

import click

from gpuherd import paths
from gpuherd.cli import options, sweep_render
from gpuherd.cli.after_options import after_options, refuse_contradiction, resolved
from gpuherd.cli.group_options import options_before_verb
from gpuherd.cli.main import prefixed
from gpuherd.cli.option_checks import one_output
from gpuherd.cli.output_failed import note_queued
from gpuherd.cli.output_options import output_options
from gpuherd.cli.param_types import SEED, Place, WholeRange, checked_by_daemon, completes
from gpuherd.cli.sweep_args import ParamsCommand, build, is_file
from gpuherd.cli.sweep_dry_run import DryRun, check_size, dry_run
from gpuherd.cli.sweep_hints import sweep_warnings
from gpuherd.cli.sweep_left_out import left_out, typed_keys
from gpuherd.cli.sweep_path import sweep_path
from gpuherd.cli.wait_cmd import wait, waiting_options
from gpuherd.client import Client
from gpuherd.core.deps import jobs_said
from gpuherd.core.near_names import closest
from gpuherd.core.states import POINT_STATES
from gpuherd.core.sweep import is_bare_command, spec_to_dict
from gpuherd.core.sweep_env import worded_for_file
from gpuherd.core.units import plural
from gpuherd.core.when import past_begin_hint
from gpuherd.errors import HerdError, NotRunning
from gpuherd.typed_name import typed_name
from gpuherd.wire_requests import options_sent

RUN = "submit"


class _SweepGroup(click.Group):
    """`sweep TEMPLATE|FILE ...` runs the hidden `submit` command; `status`, `ls`, `wait` and
    `rm` are verbs."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            if misplaced := options_before_verb(ctx, self.commands, args):  # `sweep --json ls`
                raise click.UsageError(misplaced, ctx)
            if _mistaken_verb(args):
                raise click.NoSuchCommand(args[0], ctx=ctx)  # (main.py says what to type)
            if typo := self._mistyped_verb(ctx, args):
                raise click.UsageError(typo, ctx)
            args = [RUN, *args]
        return super().parse_args(ctx, args)

    def _mistyped_verb(self, ctx: click.Context, args: list[str]) -> str | None:
        """`sweep stauts s1`: a verb of sweep's mistyped, not a submission (the word is no
        template a sweep could run: _could_be_verb), said so with the verb meant. It was
        taken as one: "'s1' is one argument too many: gpuherd sweep [OPTIONS] SOURCE". A
        sweep's name is no typo (a sweep named `lss`): refused as any sweep's name is, with
        how to see that sweep (_bare_command), not "did you mean gpuherd sweep ls?"."""
        if not _could_be_verb(args):
            return None
        verbs = [name for name, command in self.commands.items() if not command.hidden]
        if (verb := closest(args[0], verbs)) is None:
            return None
        if _sweep_exists(args[0]):  # (asked only here: a word near a verb, not one of them)
            return _bare_command(args[0], known=True)
        meant = shlex.join([typed_name(), "sweep", verb, *args[1:]])
        return f"no sweep command {args[0]!r}: did you mean {meant}?"

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        """A verb, or a sweep file's path (FILE.yaml: the shell completes it, as for a
        click.Path; bash offers files when no verb matches); an option of a sweep, as
        parse_args takes one before the file (`sweep --after-fail 3 x.yaml`)."""
        from click.shell_completion import CompletionItem

        if incomplete.startswith("-"):
            return self.commands[RUN].shell_complete(ctx, incomplete)
        return [CompletionItem(incomplete, type="file"), *super().shell_complete(ctx, incomplete)]

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "TEMPLATE -p NAME V1 V2 ... [OPTIONS]")
        formatter.write_usage(ctx.command_path, "FILE.yaml|.toml|.json [OPTIONS]", "   or: ")
        formatter.write_usage(
            ctx.command_path, "status NAME | ls | wait NAME | rm NAME...", "   or: "
        )

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        run = self.commands[RUN]
        # Options alone: click 8.5.1 gives an argument a row too (`SOURCE`, blank), as its
        # own format_options leaves out; this one took every record there was.
        params = [p for p in run.get_params(ctx) if isinstance(p, click.Option)]
        records = [r for p in params if p.name != "help" and (r := p.get_help_record(ctx))]
        records.insert(0, ("-p, --param NAME V1 V2 ...", "A parameter and its values (repeat)."))
        with formatter.section("Options of a sweep"):
            formatter.write_dl(records)
        super().format_options(ctx, formatter)


def _mistaken_verb(args: list[str]) -> bool:
    """`sweep kill lr`, `sweep results lr`: another verb typed where a template goes."""
    if not _could_be_verb(args):
        return False
    from gpuherd.cli.other_tools import SWEEP, THEIR_COMMANDS

    return args[0] in THEIR_COMMANDS[SWEEP]


def _could_be_verb(args: list[str]) -> bool:
    """Whether `sweep WORD ...` may be a verb rather than a submission: a one-word template
    without -p is refused anyway (it has nothing to sweep over), and a file is a sweep's."""
    word = args[0]
    return word.isalpha() and not is_file(word) and not {"-p", "--param"} & set(args)


@click.group(cls=_SweepGroup)
def sweep() -> None:
    """Run a command over a parameter grid or random search, one results folder per point.

    \b
    gpuherd sweep "python train.py --lr {lr} --bs {bs}" \\
        -p lr 0.1 0.01 -p bs 32 64
    gpuherd sweep sweep.yaml --gpus 2    (or .toml, .json)
    gpuherd sweep status NAME --sort -val_acc
    gpuherd sweep ls
    gpuherd sweep wait NAME    (as gpuherd wait --sweep NAME)
    gpuherd sweep rm NAME    (its jobs; its results stay)

    Placeholders get the value shell-quoted; {run_dir}, {sweep} and {index} are there too.
    Submitting again skips points whose folder holds SUCCESS and reruns the others. An option
    given with a sweep file wins over the file's key: --no-hold, --no-exclusive and
    --no-oom-retry turn off its `true`.
    """


# A sweep file may set every job option below (sweepfile_options.py); one given here wins.
# gpus and priority show no default: a file often sets them (a default shown for --order is
# also what a file that leaves the key out gets; --retries and --grace say the file's first).
@sweep.command(name=RUN, cls=ParamsCommand, hidden=True)
@click.argument("source")
@click.option("--name", help="The sweep's name (default: from the file, or the template).")
@click.option(
    "--results-dir",
    type=Place(file_okay=False),  # ('' is refused: it was the default, results/NAME)
    help="Folder of the point folders (default: results/NAME).",
)
@click.option("--samples", "--n-samples", type=WholeRange(1), help="Draw N points.")
@click.option("--seed", type=SEED, help="Seed for --samples and --shuffle (default: chosen).")
@click.option("--shuffle", is_flag=True, help="Run the grid in a random order.")
@click.option("--force", is_flag=True, help="Run every point again, done ones too.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the commands, one a line (a JSON object with --json); submit nothing.",
)
@click.option("--yes", is_flag=True, help="Submit even more than 10,000 points.")
@options.gpus_option("each point", show_default=False)
@options.only_gpus_option("each point")
@options.memory_options("each point")
@options.priority_option(show_default=False)
@after_options()
@options.retries_option("point", default="the sweep file's, else gpuherd config get retries")
@options.retry_delay_option("a failed point")
@options.timeout_option()
@options.max_log_size_option(
    "a point", default="the sweep file's, else gpuherd config get max-log-size"
)
@options.no_output_options("a point")
@output_options("each point")
@options.grace_option(
    "a point", default="the sweep file's, else the daemon's `grace` setting, 10s unless changed"
)
@options.hold_option("the points", it="them")
@options.begin_option("the points")
@options.project_option()
@options.max_parallel_option("points")
@options.order_option("points")
@options.cwd_option(default="the sweep file's cwd, else the current one")
@options.env_option("each point")
@options.quiet_option()
@options.json_option()
@click.pass_context
def submit_sweep(ctx: click.Context, /, source: str, **opts: Any) -> None:
    """Submit a sweep: a TEMPLATE with -p NAME VALUES..., or a sweep FILE (.yaml, .toml, .json)."""
    params: list[tuple[str, list[Any]]] = ctx.meta.get("gpuherd.params", [])
    one_output(opts["quiet"], opts["as_json"])
    spec, options, cwd = build(ctx, source, params, opts)  # (its --output and --error checked)
    refuse_contradiction(asdict(options))  # (resolved() does it too: a dry run asks no daemon)
    if not is_file(source) and is_bare_command(source, bool(params)):
        raise click.UsageError(_bare_command(source))
    env = options.env_overrides or {}
    flags = dict(opts["env_pairs"])  # (over the file's env, name by name)
    file_env = {k: v for k, v in env.items() if k not in flags} if is_file(source) else {}
    # Said as the daemon's warnings, once for the sweep as submit says them (sweep_hints.py).
    file = source if is_file(source) else ""
    seed_flag = opts["seed"] is not None
    cli_warnings = sweep_warnings(spec, options, cwd, params, file, file_env, seed_flag)
    if opts["dry_run"]:
        # The one-a-line commands are for `| gpuherd run`: what they leave out is said; the
        # JSON (for scripts) carries no option either, and says none.
        typed, some_file_env = typed_keys(ctx), bool(file_env)
        lost = None if opts["as_json"] else left_out(options, cwd, file, typed, some_file_env)
        said = DryRun(opts["as_json"], lost, cli_warnings, env, source, file_env)
        dry_run(spec, cwd, opts["yes"], said)
        return
    check_size(spec, opts["yes"], "pass --yes to submit them all")
    client = Client(timeout=600.0)
    for kind, ids in resolved(client, asdict(options)).items():
        setattr(options, kind, ids)
    body = {
        "spec": spec_to_dict(spec),
        "cwd": cwd,
        "env": paths.submitter_env(),
        "options": options_sent(options),
        "force": opts["force"],
        "yes": opts["yes"],
    }
    try:
        answer = client.post("/sweeps", body)
    except KeyboardInterrupt:  # (10,000 points take seconds: long enough to think better)
        click.echo(prefixed("interrupted", sweep_render.interrupted(spec.name)), err=True)
        sys.exit(130)
    note_queued(answer.get("ids") or [])  # (said if the output fails: output_failed.py)
    worded = worded_for_file(answer["warnings"], spec.command, source, file_env)
    answer["warnings"] = [*cli_warnings, *worded]
    # As submit says it: a --begin already past (a typo'd year) starts the points now.
    past = past_begin_hint(options.begin, time.time(), 2) if answer["ids"] else None
    for warning in [*answer["warnings"], *([past] if past else [])]:
        click.echo(prefixed("warning", warning), err=True)
    if opts["as_json"]:
        click.echo(json.dumps(answer, indent=1))
    elif opts["quiet"]:
        for job_id in answer["ids"]:  # none submitted: nothing, not an empty line
            click.echo(job_id)
    else:
        click.echo(sweep_render.summary(answer))


def _bare_command(source: str, known: bool | None = None) -> str:
    """Why `sweep SOURCE` is refused: a command with no placeholder and no -p (core.
    sweep_names.is_bare_command), most often a sweep's name; if a sweep has that name, how to
    see it (`known`: whether one has, if asked already; else asked: _sweep_exists)."""
    refusal = (
        f"sweep {shlex.quote(source)}: give a command template with {{placeholders}} and -p "
        'NAME VALUES... ("python train.py --lr {lr}" -p lr 0.1 0.01), or a sweep file'
    )
    if _sweep_exists(source) if known is None else known:
        refusal += f"; to see the existing sweep {source}: {sweep_render.status_command(source)}"
    return refusal


def _sweep_exists(name: str) -> bool:
    """Whether a sweep is named `name`, asked of a daemon that runs, only on the way to
    refusing; False where none runs (a dry run needs none): the refusal stands as it is."""
    try:
        return any(sweep["name"] == name for sweep in Client().get("/sweeps")["sweeps"])
    except HerdError:
        return False


@sweep.command(name="status")
@click.argument("name", shell_complete=completes("sweeps"))
@click.option(
    "--sort",
    "sort_key",
    help="Sort by a metric, a parameter or a column (TIME, JOB, STATE); -KEY = descending; "
    "metric:NAME for a metric named as a column.",
)
@options.states_option(
    POINT_STATES,
    "Only points in this state (repeatable, or comma-separated): failed, running, done, "
    "missing, ...",
)
@click.option(
    "--limit",
    type=WholeRange(1),
    default=None,
    help="Show the first N points (after --sort and --state): --sort -acc --limit 5.",
)
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV.")
@options.json_option()
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only the job ids of the points listed, each point's latest job: "
    "gpuherd retry $(gpuherd sweep status NAME --state failed -q).",
)
def status(
    name: str,
    sort_key: str | None,
    states: tuple[str, ...],
    limit: int | None,
    as_csv: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Every point of a sweep: its parameters, state, run time and metrics (metrics.json)."""
    # (--csv with --json printed JSON: `--csv --json > f.csv` was no spreadsheet)
    given = [flag for flag, on in (("--csv", as_csv), ("--json", as_json), ("-q", quiet)) if on]
    if len(given) > 1:
        raise click.UsageError(f"give {given[0]} or {given[1]}, not both")
    with checked_by_daemon("--sort"):  # --state and --limit are checked here
        # Each point's job_dir and log_files only for --json: they cost the daemon a read
        # of every point's job, which the table and CSV, not showing them, need not wait for.
        table = Client().get(
            sweep_path(name), sort=sort_key, state=list(states), limit=limit, paths=as_json or None
        )
    if as_json:
        click.echo(json.dumps(table, indent=1))
    elif quiet:  # (`ls -q --sweep` lists every run, older runs of points rerun since too:
        # `retry` refuses those, as the point's folder is its newer job's now)
        click.echo(
            "".join(f"{row['job_id']}\n" for row in table["rows"] if row["job_id"]), nl=False
        )
        if jobless := sweep_render.jobless_note(table):
            click.echo(jobless, err=True)
    elif as_csv:
        sweep_render.status_csv(table)
    else:
        sweep_render.status_table(table)


@sweep.command(name="ls")
@options.json_option()
def list_sweeps(as_json: bool) -> None:
    """The sweeps, with their points counted by state."""
    sweeps = Client().get("/sweeps")["sweeps"]
    if as_json:
        click.echo(json.dumps(sweeps, indent=1))
    else:
        sweep_render.sweep_list(sweeps)


@sweep.command(name="wait")
@click.argument("name", shell_complete=completes("sweeps"))
@waiting_options
@click.pass_context
def wait_for_sweep(ctx: click.Context, name: str, timeout: float | None, quiet: bool) -> None:
    """Wait until a sweep's points finish: `gpuherd wait --sweep NAME`, its output and exit
    status (0 all succeeded, 1 some did not or no sweep is NAME, 2 --timeout, 3 no daemon).
    Every point counts, by its latest job: one that failed before the wait began too, and a
    held one (not waited for: it waits for a release) has not succeeded."""
    # (it was refused with a hint to type that: the words a user tries first, as `sweep status`)
    ctx.invoke(wait, sweep=name, timeout=timeout, quiet=quiet)


@sweep.command(name="rm")
@click.argument(
    "names", metavar="NAME...", nargs=-1, required=True, shell_complete=completes("sweeps")
)
def remove(names: tuple[str, ...]) -> None:
    """Remove sweeps: their jobs, as `gpuherd rm` (queued ones cancelled, finished ones
    forgotten), and their records. The results folders stay. A sweep with a running job is
    refused whole: `gpuherd kill $(gpuherd ls -q --sweep NAME)` first."""
    client = Client(timeout=600.0)  # 100,000 jobs take a while (the daemon answers others)
    failed = False
    for name in names:
        try:
            answer = client.delete(sweep_path(name))
        except NotRunning:
            raise  # nor for the next names: exit 3, as every command's (cli/main.py)
        except HerdError as exc:
            click.echo(prefixed("error", str(exc)), err=True)
            failed = True
            continue
        said = f"removed sweep {name} ({plural(answer['removed'], 'job')})"
        if cancelled := answer.get("cancelled"):  # (absent from an older daemon)
            said += f", and {jobs_said(cancelled)}, which waited for its jobs, cancelled"
        click.echo(f"{said}; {sweep_render.kept(answer['results_dir'])}")
    if failed:
        sys.exit(1)


COMMANDS = [sweep]
