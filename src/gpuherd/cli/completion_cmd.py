"""`gpuherd completion bash|zsh|fish`: the script that makes the shell complete gpuherd on
Tab; and what it completes, beyond the command and option names click knows: job ids, sweep
names, setting names, GPU indices, job states and paths.

click does the work (click.shell_completion; the scripts and how each shell is answered are
completion_shells'): the script runs `gpuherd` again with
_GPUHERD_COMPLETE (_HERD_COMPLETE for `herd`) set and the command line in COMP_WORDS, and
main() hands that run to answer_shell(). The parameters name their candidates with
param_types.completes(), which imports this module only then: a command that runs never
loads it, nor asks the daemon anything more.

The daemon is asked within ASK_BUDGET seconds, and quietly: with none running, or a slow
one, there is nothing to offer, and never an error line in the middle of the command line
being typed.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import signal
from collections.abc import Callable
from typing import Any

import click
from click.shell_completion import CompletionItem, get_completion_class, shell_complete

from gpuherd.cli.completion_shells import SHELLS  # (its import makes click use our scripts)
from gpuherd.cli.main import complete_var
from gpuherd.cli.param_types import LAST, Candidates
from gpuherd.core.deps import KINDS
from gpuherd.core.states import (
    ACTIVE_STATES,
    LIVE_STATES,
    TRANSITIONS,
    VERB_OF_EVENT,
    WAITING_STATES,
    JobState,
)
from gpuherd.core.text import ascii_digits, one_line
from gpuherd.core.units import plural
from gpuherd.typed_name import typed_name

ASK_BUDGET = float(os.environ.get("GPUHERD_TEST_ASK_BUDGET") or 0.5)
"""Seconds the daemon gets to answer, in all: Tab must never hang the shell. (The variable is
the tests': on a loaded machine a daemon may take longer than 0.5 s, and a test that expects
ids, GPUs or sweep names was offered nothing.)"""
JOBS_OFFERED = 100
"""The newest jobs offered (bash asks "Display all 101 possibilities?" beyond 100)."""
DESCRIBED = 50
"""Characters of a job's name or command shown beside its id (zsh, fish)."""


def _shells(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [shell for shell in SHELLS if shell.startswith(incomplete)]


class _FishFileAsTyped(click.Command):
    """fish loads ~/.config/fish/completions/NAME.fish when NAME is completed: under `herd`
    the help's example (`herd completion fish > ...`, as the help formatter types it) writes
    herd.fish, or fish would never load the script that completes `herd`."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        text = inspect.cleandoc(self.help or "")
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(text.replace("/gpuherd.fish", f"/{typed_name()}.fish"))


# Not a click.Choice: its errors ("Invalid value for '{bash|zsh|fish}'", and a missing one's
# list over four lines) said less than the one line below.
@click.command(cls=_FishFileAsTyped)
@click.argument("shell", metavar="SHELL", required=False, shell_complete=_shells)
@click.pass_context
def completion(ctx: click.Context, shell: str | None) -> None:
    """Tab completion in bash, zsh or fish: print the script that makes SHELL complete
    commands, options, job ids, sweep names, choices and paths.

    \b
    eval "$(gpuherd completion bash)"
    eval "$(gpuherd completion zsh)"
    mkdir -p ~/.config/fish/completions
    gpuherd completion fish \\
        > ~/.config/fish/completions/gpuherd.fish

    The first line goes in ~/.bashrc, the second in ~/.zshrc after compinit; the last two
    write fish's file (in its folder, which a new fish lacks). The script completes the name
    it was made by: `herd completion bash` makes the one for `herd` (add a line for each name
    to complete both). Job ids and sweep names come from the daemon of your GPUHERD_HOME;
    with none running, there are none to offer.
    """
    root = ctx.find_root()
    prog_name = root.info_name or "gpuherd"
    if shell not in SHELLS:
        said = "give the shell:" if shell is None else f"no completion for {shell}: give"
        raise click.UsageError(f"{said} bash, zsh or fish, e.g. {prog_name} completion bash", ctx)
    shell_class = get_completion_class(shell)
    assert shell_class is not None  # (SHELLS are click's own)
    click.echo(shell_class(root.command, {}, prog_name, complete_var(prog_name)).source())


def answer_shell(cli: click.Command, prog_name: str) -> int:
    """Answer the shell's script (complete_var set): the candidates, or the script itself.

    Candidates come quietly: a line click cannot read yet (`sweep T -p` before its name) or a
    daemon of another version offers nothing, and writes nothing on stderr, which would land
    in the middle of the command line being typed."""
    var = complete_var(prog_name)
    instruction = os.environ.get(var, "")
    completing = instruction.endswith("_complete")
    quiet = contextlib.redirect_stderr(io.StringIO()) if completing else contextlib.nullcontext()
    try:
        with quiet:
            return shell_complete(cli, {}, prog_name, var, instruction)
    except Exception:  # (an error here is one the user never asked about: no traceback)
        return 0 if completing else 1


# ---- what the parameters complete (param_types.completes names these) --------------------


def jobs(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Job ids for a parameter of several (`kill 3,5-7`): the one after the last `,` or `-`
    is completed."""
    cut = max(incomplete.rfind(","), incomplete.rfind("-")) + 1
    return _job_items(ctx, param, incomplete[:cut], incomplete[cut:])


def one_job(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """A job id for a parameter of one job (`show`, `move --before`)."""
    return _job_items(ctx, param, "", incomplete)


def _job_items(
    ctx: click.Context, param: click.Parameter, before: str, typed: str
) -> list[CompletionItem]:
    """The newest JOBS_OFFERED jobs the command can act on whose id starts with `typed`,
    newest first, each described by its name (or command) and state; then `last`."""
    if typed and not ascii_digits(typed) and not LAST.startswith(typed):
        return []
    answer = _ask("/jobs", state=_states_for(ctx, param), all=True, limit=JOBS_OFFERED, newest=True)
    listed = answer["jobs"] if answer else []
    own = _own_jobs(ctx) if isinstance(param, click.Option) else set()
    items = [
        CompletionItem(f"{before}{job['id']}", help=_described(job))
        for job in listed
        if str(job["id"]).startswith(typed) and job["id"] not in own
    ]
    if listed and not before and LAST.startswith(typed):
        items.append(CompletionItem(LAST, help="the job submitted last"))
    return items


def _own_jobs(ctx: click.Context) -> set[int]:
    """The jobs the command acts on, named before an option that names another job: `move 3
    --swap <Tab>` and `edit 3 --after <Tab>` offered 3 itself, which the daemon refuses."""
    from gpuherd.core.idspec import parse_job_ids  # (loaded only on this Tab)

    named = ctx.params.get("job_id")
    own = {named} if isinstance(named, int) else set()
    for word in ctx.params.get("ids") or ():
        with contextlib.suppress(ValueError):
            own.update(parse_job_ids(word))
    return own


def _states_for(ctx: click.Context, param: click.Parameter) -> list[str]:
    """The states of the jobs a parameter may usefully name (none: any job): `release`
    offers held jobs, `pause` running ones, as the one table of transitions allows. Any job
    for --after, --after-any and --after-fail (after_options.py), `show` and `log`."""
    verb = ctx.command.name or ""
    if param.name in KINDS or verb in ("show", "log"):
        return []
    if verb in ("edit", "priority", "move"):  # what waits can change
        return sorted(WAITING_STATES)
    if verb == "wait":
        return sorted(ACTIVE_STATES)
    if verb == "rm":  # a running job is killed first
        return sorted(set(JobState) - LIVE_STATES)
    return sorted({state for state, event in TRANSITIONS if VERB_OF_EVENT.get(event) == verb})


def _described(job: dict[str, Any]) -> str:
    what = one_line(job.get("name") or job.get("command") or "")
    if len(what) > DESCRIBED:
        what = what[: DESCRIBED - 1] + "…"
    return f"{what} ({job['state']})"


def sweeps(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Sweep names, each described by its points' states."""
    answer = _ask("/sweeps") or {"sweeps": []}
    return [
        CompletionItem(sweep["name"], help=_points(sweep))
        for sweep in answer["sweeps"]
        if sweep["name"].startswith(incomplete)
    ]


def _points(sweep: dict[str, Any]) -> str:
    counts = ", ".join(f"{n:,} {state}" for state, n in sweep.get("counts", {}).items())
    return plural(sweep["points"], "point") + (f": {counts}" if counts else "")


def gpus(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """GPU indices, each described by its name and state as `gpuherd gpus` lists them: `gpus
    drain` offers the GPUs not drained, `gpus enable` the drained ones, `gpus remove` and
    --only-gpus every configured one (a lost one too: drain, enable and remove take it). In
    a list the one after the last `,` or `-` is completed (`0,<Tab>` -> `0,1`), among those
    not named yet, and past a range's start (`1-<Tab>` -> `1-3`)."""
    cut = max(incomplete.rfind(","), incomplete.rfind("-")) + 1
    before, typed = incomplete[:cut], incomplete[cut:]
    if typed and not ascii_digits(typed):
        return []
    named, start = _gpus_named(ctx, param, before)
    if start is None:  # (`٠-`, `x-`: it offered `٠-1`, which the command then refused)
        return []
    answer = _ask("/gpus")
    if not answer:
        return []
    return [
        CompletionItem(f"{before}{index}", help=said)
        for index, said in sorted(_gpus_for(ctx.command.name, answer).items())
        if str(index).startswith(typed) and index not in named and index > start
    ]


def _gpus_named(
    ctx: click.Context, param: click.Parameter, before: str
) -> tuple[set[int], int | None]:
    """The GPUs named already, in the earlier words (`gpus drain 0 <Tab>`) and earlier in
    this one (`0,<Tab>`); and the start of a range being typed (`1-`; -1: none; None: a
    start that is no index, `x-`)."""
    from gpuherd.core.idspec import parse_gpu_indices

    earlier = ctx.params.get(param.name or "") if param.nargs == -1 else None
    named = {index for words in earlier or () for index in words}
    with contextlib.suppress(ValueError):
        named |= set(parse_gpu_indices(before.rstrip(",-"))) if before else set()
    if not before.endswith("-"):
        return named, -1
    start = before[:-1].rpartition(",")[2]
    return named, int(start) if ascii_digits(start) else None


def _gpus_for(verb: str | None, answer: dict[str, Any]) -> dict[int, str]:
    """The GPUs of GET /gpus a command may name, each described: those gpuherd has (as
    gpu_cmds.configured says), of them the drained ones for `enable`, the others for `drain`."""
    from gpuherd.cli.gpu_cmds import configured  # (loaded only on this Tab)

    rows = {row["index"]: row for row in answer["gpus"]}
    drained = set(answer.get("missing_draining", ()))
    drained |= {index for index, row in rows.items() if row.get("draining")}
    said = {}
    for index in configured(answer):
        row = rows.get(index)
        state = row["state"] if row else "not seen by the probe"
        if index in drained and state != "draining":  # `lost, draining`, as `gpuherd gpus`
            state += ", draining"
        said[index] = f"{one_line(row['name'])} ({state})" if row else state
    if verb in ("drain", "enable"):
        return {i: s for i, s in said.items() if (i in drained) == (verb == "enable")}
    return said


def settings(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The daemon's setting names (`config get NAME`), each with its help."""
    answer = _ask("/config") or {"settings": {}}
    return [
        CompletionItem(name, help=one_line(setting.get("help", "")))
        for name, setting in answer["settings"].items()
        if name.startswith(incomplete)
    ]


def columns(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`ls --columns`'s names, in the table's order; after a comma, those not given yet
    (`id,na` -> `id,name`), as the shell passes the whole list typed so far."""
    from gpuherd.cli.ls_table import COLUMNS  # (the tables' code: only on this Tab)

    given, comma, last = incomplete.rpartition(",")
    taken = {word.strip().lower() for word in given.split(",")} if comma else set()
    return [
        CompletionItem(f"{given}{comma}{name}")
        for name in COLUMNS
        if name.startswith(last.lower()) and name not in taken
    ]


def files(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Paths, completed by the shell itself (as click.Path does)."""
    return [CompletionItem(incomplete, type="file")]


CANDIDATES: dict[Candidates, Callable[[click.Context, click.Parameter, str], list[Any]]] = {
    "jobs": jobs,
    "one_job": one_job,
    "sweeps": sweeps,
    "settings": settings,
    "gpus": gpus,
    "files": files,
}


def _ask(path: str, **query: Any) -> Any:
    """The daemon's answer, or None when it gives none within ASK_BUDGET seconds: none runs,
    it is busy, or it refuses (an older daemon). The clock is for the whole request: the
    socket's own timeout restarts at every piece a slow daemon sends."""
    from gpuherd.client import Client

    def too_slow(signum: int, frame: Any) -> None:
        raise TimeoutError

    before = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, ASK_BUDGET)
    try:
        return Client(timeout=ASK_BUDGET).get(path, **query)
    except Exception:  # no daemon, a slow or an older one: nothing to offer, and not a word
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


COMMANDS = [completion]
