"""Verbs that change jobs or the queue: kill, rm, retry, pause, resume, hold, release, edit,
priority, move."""

from __future__ import annotations

import sys
from typing import Any

import click

from gpuherd.cli.after_options import after_options, resolved
from gpuherd.cli.interrupted_request import on_many, said_if_interrupted
from gpuherd.cli.job_refs import given_ids, listed_ids, none_given, one_job
from gpuherd.cli.main import prefixed
from gpuherd.cli.option_checks import refuse_cpu_only_mem
from gpuherd.cli.options import (
    GPU_COUNT,
    begin_option,
    cwd_option,
    env_option,
    ids_argument,
    max_log_size_option,
    only_gpus_option,
    states_option,
)
from gpuherd.cli.output_options import check_outputs, output_options
from gpuherd.cli.param_types import (
    DURATION,
    GRACE,
    JOB_ID,
    LAST,
    PRIORITY,
    SIZE,
    Choosing,
    TakesJobIds,
    WholeRange,
    completes,
    refuse_negative_ids,
)
from gpuherd.client import Client
from gpuherd.core.edit import CLEARABLE
from gpuherd.core.idspec import parse_job_ids, summarize
from gpuherd.core.states import FINISHED_STATES
from gpuherd.core.text import ascii_digits
from gpuherd.submission_text import blank
from gpuherd.typed_name import typed_name


def _act(action: str, ids: tuple[str, ...], **body: Any) -> None:
    """POST /jobs/ACTION; one line per outcome, errors on stderr and exit status 1."""
    client = Client()
    job_ids = given_ids(client, ids)
    verb = click.get_current_context().info_name or action  # as typed: `clean`, `retry`
    with said_if_interrupted(lambda: on_many(verb, len(job_ids))):
        answer = client.post(f"/jobs/{action}", {"ids": job_ids, **body})
    answered(answer)


def answered(answer: dict[str, Any]) -> None:
    """A verb's results on many jobs: one line per outcome, errors on stderr and exit 1; its
    `warnings` (an edit's: edit_warnings.py) on stderr, as submit's, each once."""
    results = answer["results"]
    left = {r["id"] for r in results if r.get("left")}  # (removed, files left: not refused)
    lines = summarize(((r["id"], r["ok"], r["message"]) for r in results), left=left)
    for ok, line in lines:
        click.echo(line if ok else prefixed("error", line), err=not ok)
    for warning in answer.get("warnings", []):
        click.echo(prefixed("warning", warning), err=True)
    if not all(ok for ok, _ in lines):
        sys.exit(1)


def _verb(action: str, doc: str, name: str | None = None) -> click.Command:
    @click.command(name=name or action, help=doc, cls=TakesJobIds)
    @ids_argument(required=False)
    def command(ids: tuple[str, ...]) -> None:
        if not _none_given(action, ids):
            _act(action, ids)

    return command


def _none_given(action: str, ids: tuple[str, ...]) -> bool:
    """Whether no id was given, said so: `gpuherd kill $(gpuherd ls -q ...)` when nothing
    matched does nothing, as `xargs -r`."""
    if not ids:
        click.echo(none_given(action))
    return not ids


@click.command(cls=TakesJobIds)
@ids_argument(required=False)
@click.option(
    "--grace",
    type=GRACE,
    help="SIGKILL this long after the SIGTERM (90s, 5m; 0: at once) instead of after each "
    "job's own grace; for a job already being stopped, this long from now.",
)
def kill(ids: tuple[str, ...], grace: float | None) -> None:
    """Stop jobs: queued ones are cancelled, running ones get SIGTERM, then SIGKILL after
    their grace period. A job that already ended is said so, and is no error (exit 0: `kill
    $(gpuherd ls -q)` under set -e). IDS: 3, 3-7, 3,5,9."""
    if not _none_given("kill", ids):
        _act("kill", ids, **({} if grace is None else {"grace": grace}))


rm = _verb("rm", "Remove jobs: cancel queued ones, forget finished ones and their logs.")


@click.command(cls=TakesJobIds)
@ids_argument(required=False)
@click.option(
    "--hold",
    is_flag=True,
    help="Put finished jobs back held: `gpuherd edit` them, then `gpuherd release`.",
)
def retry(ids: tuple[str, ...], hold: bool) -> None:
    """Run finished jobs again as a new attempt; a running job is stopped gracefully and
    queued again (for jobs that resume from a checkpoint). IDS: 3, 3-7, 3,5,9."""
    if not _none_given("retry", ids):
        _act("retry-held" if hold else "retry", ids)


hold = _verb("hold", "Keep queued jobs from starting until `gpuherd release`.")
release = _verb("release", "Let held jobs run again.")


ENDINGS = sorted(state.value for state in FINISHED_STATES)


@click.command()
@states_option(
    ENDINGS,
    f"Only jobs that ended so (repeatable, or comma-separated): {', '.join(ENDINGS)}; "
    "default: all of them.",
)
def clean(states: tuple[str, ...]) -> None:
    """Remove finished jobs and their logs (pueue's clean, tsp -C): `gpuherd clean --state
    succeeded` keeps the failures to look at. Queued, held and running jobs stay."""
    client = Client()
    ids = listed_ids(client, states or tuple(ENDINGS))
    if not ids:
        click.echo("nothing to clean: no finished job" + (" in that state" if states else ""))
        return
    _act("rm", tuple(map(str, ids)))


def _queue_or_jobs(action: str) -> Any:
    @click.command(name=action, cls=TakesJobIds)
    @ids_argument(required=False)
    def command(ids: tuple[str, ...]) -> None:
        if ids:
            _act(action, ids)
        else:
            click.echo(Client().post(f"/queue/{action}")["message"])

    verb = "Pause" if action == "pause" else "Resume"
    signal = "SIGSTOP" if action == "pause" else "SIGCONT"
    command.help = (
        f"{verb} running jobs ({signal} to the whole process group), or without IDS "
        f"{action} the queue's dispatch (running jobs are not touched)."
    )
    return command


pause = _queue_or_jobs("pause")
resume = _queue_or_jobs("resume")


@click.command(cls=TakesJobIds, context_settings={"ignore_unknown_options": True})
# Not required for click: one missing gets this command's own line (click's was "Missing
# argument 'PRIORITY'."); the metavar keeps the usage line without brackets.
@click.argument("words", nargs=-1, metavar="IDS... PRIORITY", shell_complete=completes("jobs"))
def priority(words: tuple[str, ...]) -> None:
    """Set jobs' priority (higher runs first).

    The priority comes last; the default is 0; a negative priority needs no `--`:
    `gpuherd priority 7 -3`. IDS: 3, 3-7, 3,5,9, or several (a sweep's points:
    `gpuherd priority $(gpuherd ls -q --sweep lr) 5`); `last` is the job submitted last.
    No IDS (that list empty): nothing to change, exit 0, as `xargs -r`.
    """
    if len(words) == 1 and _is_priority(words[0]):
        # The ids are missing, not P, which comes last: `priority $(gpuherd ls -q --sweep lr)
        # 5` when none matched does nothing, exit 0, as kill's (`e.g. priority 5 10` was told,
        # which sets job 5's priority, exit 2 under set -e).
        click.echo(none_given("priority"))
        return
    if len(words) < 2:
        job = words[0] if words and _names_jobs(words[0]) else "7"  # (an id it may copy)
        said = "no priority given" if words else "no job id given"
        raise click.UsageError(
            f"{said}: {typed_name()} priority IDS P takes job ids, then a whole number P "
            f"(higher runs first), e.g. {typed_name()} priority {job} 10"
        )
    *ids, given = words
    refuse_negative_ids(ids)  # (a negative priority passes click: ignore_unknown_options)
    ctx = click.get_current_context()
    ctx.params = {"ids": " ".join(ids)}  # what a refused P's example repeats before it
    value = PRIORITY.convert(given, click.Argument(["priority"]), ctx)
    _act("priority", tuple(ids), priority=value)


def _is_priority(word: str) -> bool:
    """Whether `word` is a priority `priority` would take (a whole number, negative too)."""
    try:
        PRIORITY.convert(word, None, None)
    except click.ClickException:  # (too large, or no number)
        return False
    return True


def _names_jobs(word: str) -> bool:
    """Whether `word` is job ids as `priority` takes them, and no priority: the one word of
    `priority 3-7` or `priority last` is its jobs, shown again in the example; for any other
    (`priority abc`) job 7 is: `priority abc 10` failed in turn (`invalid job id 'abc'`)."""
    try:
        return word.strip() == LAST or bool(parse_job_ids(word))
    except ValueError:
        return False


# Extra arguments are taken, to answer gpulimit's `move ID INDEX` (click: "Got unexpected
# extra argument (0)").
@click.command(cls=TakesJobIds, context_settings={"allow_extra_args": True})
@click.argument("job_id", type=JOB_ID)
@click.option("--first", is_flag=True, help="To the front of the queue.")
@click.option("--before", type=JOB_ID, help="Just before this queued job.")
@click.option(
    "--swap", type=JOB_ID, help="In this queued job's place, and it in this one's (tsp -U)."
)
@click.pass_context
def move(
    ctx: click.Context,
    job_id: int | str,
    first: bool,
    before: int | str | None,
    swap: int | str | None,
) -> None:
    """Move a queued job: --first, --before ID, or --swap ID.

    `last` is the job submitted last: `gpuherd move last --first` (task-spooler's `tsp -u`).
    `--swap ID` exchanges the two jobs' places (`tsp -U`, pueue's `switch`); of jobs of
    different priorities, each takes the other's priority too.
    """
    if ctx.args:
        name = typed_name()
        raise click.UsageError(
            f"move takes one job id and no place in the queue, not {' '.join(ctx.args)!r}: "
            f"{name} move {job_id} --first puts it at the front (gpulimit's move {job_id} 0), "
            f"{name} move {job_id} --before ID2 just before job ID2, {name} move {job_id} "
            f"--swap ID2 in its place ({name} ls lists the queue in the order it starts)"
        )
    if [first, before is not None, swap is not None].count(True) != 1:
        raise click.UsageError("give exactly one of --first, --before ID or --swap ID")
    client = Client()
    job_id = one_job(client, job_id)
    before = None if before is None else one_job(client, before)
    place = {"first": first, "before": before}
    if swap is not None:  # (sent only when given: a daemon older than --swap refuses the field)
        place["swap"] = one_job(client, swap)
    answer = client.post(f"/jobs/{job_id}/move", place)
    click.echo(f"job {job_id}: {answer['message']}")


_AS_OPTION = {"env_overrides": "env"}
"""How --clear names a field whose option is named otherwise (--env)."""


class _Field(Choosing):
    """--clear's field, also as its option is spelt (`--clear max-log-size`, as
    `--max-log-size`): it was refused as no choice, the option typed named by its field."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        named = value.replace("-", "_") if isinstance(value, str) else value
        return named if named in self.choices else super().convert(value, param, ctx)


@click.command(cls=TakesJobIds)
@ids_argument(required=False)  # none: nothing to edit, as kill's (`edit $(gpuherd ls -q ...)`)
@click.option("--command", help="The new command line (run by sh as written).")
@click.option("--name", help="A new name.")
@click.option("--gpus", type=GPU_COUNT, help="GPUs it needs (0 = CPU-only).")
@only_gpus_option("it")
@click.option("--mem", type=SIZE, help="GPU memory it needs on each GPU, e.g. 10GiB.")
@click.option("--ram", type=SIZE, help="Host memory it needs, e.g. 16GiB.")
@click.option(
    "--exclusive/--no-exclusive",
    default=None,
    help="Run it alone on each of its GPUs, or share them again.",
)
@click.option("--retries", type=WholeRange(0), help="Run a failed attempt again N times.")
@click.option("--retry-delay", type=DURATION, help="Wait this long before a retry (30s, 5m).")
@click.option("--timeout", type=DURATION, help="Stop an attempt after this long (90s, 2h).")
@max_log_size_option("it", default=None)
@click.option("--project", help="A new project.")
@env_option("it (its other variables are kept)")
@cwd_option(default="", what="The folder it runs in")
@click.option("--grace", type=DURATION, help="Time between SIGTERM and SIGKILL when stopped.")
@after_options(replaces=True)
@begin_option("it (a time past: queued now)")
@output_options("each job")
@click.option(
    "--clear",
    type=_Field([_AS_OPTION.get(name, name) for name in CLEARABLE]),
    metavar="FIELD",  # the help lists them: click's [name|only_gpus|...] was 86 wide
    multiple=True,
    help="Unset a field (repeatable; max-log-size as max_log_size): name, only_gpus, mem, ram, "
    "retry_delay, timeout, max_log_size (no cap), project, env (every --env variable of the "
    "job), after, after_any, after_fail (it waits for no job), output, error (its output "
    "back in its folder), or begin (a job held until a time is queued now).",
)
def edit(
    ids: tuple[str, ...],
    clear: tuple[str, ...],
    env_pairs: tuple[tuple[str, str], ...],
    **changes: Any,
) -> None:
    """Change what queued or held jobs ask for, where they run, what they wait for and when
    they may begin; they keep their place in the queue.

    IDS: 3, 3-7, 3,5,9. A running job cannot change: kill it and submit again. At a
    terminal, `edit ID` with no option opens the job's command in $VISUAL or $EDITOR (else
    vi), as pueue's edit does. No IDS (`edit $(gpuherd ls -q --state queued) ...` of an
    empty queue): nothing to edit, exit 0, as `xargs -r`.
    """
    if _none_given("edit", ids):  # (before the options are looked at: none is a mistake)
        return
    # (--after given no ids is not given: click has no empty form of a repeatable option.)
    given = {name: value for name, value in changes.items() if value not in (None, [])}
    for text in ("name", "project"):  # `--name "$RUN"`, RUN unset: a mistake, not a clear
        if (wrong := blank(given.get(text))) is not None:
            raise click.UsageError(
                f"--{text} {wrong}: give a {text}, or --clear {text} to unset it"
            )
    if given.get("command") == "":  # the daemon's "give it after --" was submit's advice
        raise click.UsageError(
            "--command is empty: give the new command line, e.g. --command 'python train.py'"
        )
    if env_pairs:
        given["env_overrides"] = dict(env_pairs)
    fields = {option: name for name, option in _AS_OPTION.items()}
    # A mistake of the command line, as --hold with --no-hold: exit 2 here, not the
    # daemon's exit 1 (which leaves the job as it was all the same).
    for name in clear:
        if fields.get(name, name) in given:
            raise click.UsageError(
                f"--{name.replace('_', '-')} and --clear {name} given together: keep one"
            )
    if given.get("gpus") == 0:  # with --mem, --exclusive or --only-gpus: exit 2, as submit's
        # (Where the job keeps one of them, the daemon says what to add, job by job, exit 1 as
        # each refusal of what a job has: core/edit.cpu_only_kept.)
        only, exclusive = given.get("only_gpus"), bool(given.get("exclusive"))
        refuse_cpu_only_mem(0, given.get("mem"), "--gpus", exclusive, None, only)
    if not given and not clear:
        if sys.stdin.isatty() and sys.stdout.isatty():  # pueue's `edit ID`: in $EDITOR
            from gpuherd.cli.edit_in_editor import edit_in_editor  # deferred: this use alone

            edit_in_editor(ids)
            return
        # (a script or a pipe has no one to type in an editor: it says what to change)
        one = ids[0] if len(ids) == 1 and ascii_digits(ids[0]) else "ID"
        raise click.UsageError(
            "say what to change: --command, --name, --gpus, --only-gpus, --mem, --ram, "
            "--exclusive, --retries, --retry-delay, --timeout, --max-log-size, --project, "
            "--env, --cwd, --grace, --after, --after-any, --after-fail, --begin, --output, "
            "--error, or "
            f"--clear FIELD; at a terminal, {typed_name()} edit {one} alone opens its "
            "command in $EDITOR"
        )
    check_outputs(given, given.get("cwd"))  # (without --cwd, a relative one: by the daemon)
    given.update(resolved(Client(), given))
    _act("edit", ids, **given, clear=[fields.get(name, name) for name in clear])


COMMANDS = [kill, rm, clean, retry, pause, resume, hold, release, edit, priority, move]
