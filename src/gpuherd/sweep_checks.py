"""What a sweep's submission says besides its counts, from the points' folders: done points
that ran with other values than the spec gives them now (a changed `fixed`), or another
command (a changed template, or another sweep or task writing to the same results folder);
and points still waiting to run another command, or with other job options, than the
submission's. The daemon adds it to a submission's warnings (sweeps.py)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from gpuherd.core.states import WAITING_STATES
from gpuherd.core.sweep import Point, value_text
from gpuherd.core.sweep_env import env_placeholders as core_env_placeholders
from gpuherd.core.sweep_env import sets_variable as sets_variable
from gpuherd.core.sweep_names import sweep_option
from gpuherd.core.sweep_spec import SweepSpec
from gpuherd.core.waiting_options import CONFIG_DEFAULTS, PRIORITY, differences, edit_words
from gpuherd.errors import HerdError
from gpuherd.program_hints import sweep_program_hints
from gpuherd.same_command import same_command
from gpuherd.script_files import missing_script_hints
from gpuherd.submission import spec_from_item
from gpuherd.sweep_table import PARAMS_FILE, read_json
from gpuherd.wire import SubmitItem
from gpuherd.wire_requests import SweepOptions, SweepRequest

if TYPE_CHECKING:
    from gpuherd.core.model import Job, JobSpec
    from gpuherd.store import Store
    from gpuherd.sweep_reads import SweepReads


def changed_values(skipped_done: Sequence[Point]) -> list[str]:
    """A warning for the done points, skipped, whose params.json holds other values than
    the spec's now: the folder name holds the varying values, so a `fixed` one changed. And
    one for those that ran with the same values but another command: the results kept are
    not the command's now. (One read of each params.json for both.)"""
    changes: dict[str, str] = {}
    changed = 0
    commands: list[str] = []
    for point in skipped_done:
        recorded = read_json(os.path.join(point.run_dir, PARAMS_FILE))
        ran = recorded.get("params") if isinstance(recorded, dict) else None
        if not isinstance(ran, dict):
            continue  # a folder copied from elsewhere, or a params.json the job rewrote
        command = recorded.get("command")
        differ = {
            key: f"{_shown(ran, key)} -> {_shown(point.params, key)}"
            for key in dict.fromkeys([*ran, *point.params])
            if _shown(ran, key) != _shown(point.params, key)
        }
        changed += bool(differ)
        changes = {**differ, **changes}  # each key as the first point showed it
        if (
            not differ
            and isinstance(command, str)
            and not same_command(command, point.command or "")
        ):
            commands.append(command)  # (changed values change the command: said above)
    warnings = []
    if changed:
        what = ", ".join(f"{key}: {change}" for key, change in changes.items())
        kept = "it is skipped and keeps its" if changed == 1 else "they are skipped and keep their"
        warnings.append(
            f"fixed values changed for {changed:,} finished point{'s' * (changed != 1)} ({what}):"
            f" {kept} results; --force runs {_them(changed)} again"
        )
    if commands:
        first = _one_line(commands[0])
        n = len(commands)
        warnings.append(
            f"{n:,} done point{'s' * (n != 1)} ran another command ({first}"
            f"{', ...' * (len(commands) > 1)}): {'its' if n == 1 else 'their'} results are kept;"
            f" --force runs {_them(n)} again"
        )
    return warnings


def waiting_jobs(store: Store | SweepReads, name: str) -> list[Job]:
    """The sweep's jobs still waiting to run (queued, held): a submission skips their points,
    so they keep the command and options they were submitted with."""
    if not any(run[2] in WAITING_STATES for run in store.sweep_runs(name)):
        return []  # (the usual case: whole jobs are read only when some wait)
    return [job for job in store.sweep_jobs(name) if job.state in WAITING_STATES]


def waiting_with_other_command(
    waiting: Sequence[Job], name: str, points: Sequence[Point]
) -> list[str]:
    """A warning for the points whose job of this sweep still waits (`waiting`) to run
    another command than the spec's now: a template fixed while its points wait. A submission
    skips a point already queued, so that job would run the command as it was, silently (a
    done point's other command is said: changed_values)."""
    folders = {point.run_dir: point.command for point in points}
    commands = [
        job.spec.command
        for job in waiting
        if job.spec.folder in folders
        and not same_command(job.spec.command, folders[job.spec.folder] or "")
    ]
    if not commands:
        return []
    first = _one_line(commands[0])
    n = len(commands)
    return [
        f"{n:,} point{'s' * (n != 1)} of sweep {name!r} still waiting to run (queued or held) "
        f"will run another command than the sweep's now ({first}{', ...' * (n > 1)}): "
        f"submitting it again does not change {_them(n)}; cancel {_them(n)} ({_cancel(name)}),"
        " then submit it again to run the new command"
    ]


def waiting_with_other_options(
    waiting: Sequence[Job], name: str, wanted: JobSpec, options: SweepOptions
) -> list[str]:
    """A warning for the points whose job still waits with other job options than the
    submission's (`wanted`, from `options`): `--gpus 2` given to a sweep submitted again
    leaves them at 1, silently. It names what differs and the edit that applies the new
    options (core/waiting_options.py), or, where no edit can, the way the command warning
    gives: cancel them, submit again."""
    kept = _options_kept(waiting, name, wanted, options, "it")
    if kept is None:
        return []
    count, changes, fix = kept
    return [
        f"{count:,} point{'s' * (count != 1)} of sweep {name!r} still waiting to run (queued or "
        f"held) {'keeps its' if count == 1 else 'keep their'} job options, not this "
        f"submission's ({changes}): submitting it again does not change {_them(count)}; {fix}"
    ]


def waiting_with_other_options_now(
    store: Store | SweepReads, name: str, submission: Mapping[str, Any]
) -> list[str]:
    """`sweep status`'s line for the points still waiting with other job options than the
    sweep's latest submission gave (`submission`: the options stored with the sweep): the
    ones it skipped, as they were queued, which its warning named once, or points edited
    since. [] where none differ, or the stored options cannot be read (an older gpuherd's)."""
    waiting = waiting_jobs(store, name)
    submitted = submitted_options(submission) if waiting else None
    if submitted is None:
        return []
    options, wanted = submitted
    kept = _options_kept(waiting, name, wanted, options, "the sweep")
    if kept is None:
        return []
    count, changes, fix = kept
    return [
        f"{count:,} point{'s' * (count != 1)} waiting to run (queued or held) "
        f"{'has' if count == 1 else 'have'} other job options than the sweep's latest "
        f"submission gave ({changes}); {fix}"
    ]


def submitted_options(submission: Mapping[str, Any]) -> tuple[SweepOptions, JobSpec] | None:
    """The options a sweep's stored submission gave, and the job spec they make; None where
    they cannot be read (an older gpuherd's): no warning is worded from them then."""
    if not isinstance(submission.get("cwd"), str):
        return None
    given = {f.name: submission[f.name] for f in fields(SweepOptions) if f.name in submission}
    try:
        options = SweepOptions(**given)
        item = SubmitItem(command="true", cwd=submission["cwd"], **options.job_options())
        return options, spec_from_item(item)
    except (HerdError, TypeError, ValueError):
        return None


def _options_kept(
    waiting: Sequence[Job], name: str, wanted: JobSpec, options: SweepOptions, sweep: str
) -> tuple[int, str, str] | None:
    """How many of the `waiting` jobs differ from `wanted` (given with `options`), what
    differs (`gpus 1 -> 2, priority 0 -> 5`), and the commands that give them `wanted`'s:
    an edit, and `gpuherd priority` for a priority, which no edit changes; else a cancel and
    a new submission (of `sweep`: `it`, or `the sweep`). None: no job differs."""
    not_given = [f for f in CONFIG_DEFAULTS if getattr(options, f) is None]
    not_given += ["mem"] * (options.mem is None)  # learned from finished points meanwhile
    changes: dict[str, str] = {}
    count = 0
    env: set[str] = set()
    for job in waiting:
        found = differences(job.spec, job.priority, wanted, options.priority, not_given)
        count += bool(found)
        changes = {**found, **changes}  # each as the first point showed it
        env |= set(job.spec.env_overrides) if found else set()
    if not count:
        return None
    edited = [field for field in changes if field != PRIORITY]
    edit = edit_words(wanted, edited, env) if edited else []
    if edit is None:
        them = _them(count)
        fix = f"cancel {them} ({_cancel(name)}), then submit {sweep} again to run {them} with these"
    else:
        commands = [f"gpuherd edit {_waiting_ids(name)} {shlex.join(edit)}"] if edit else []
        if PRIORITY in changes:
            commands.append(f"gpuherd priority {_waiting_ids(name)} {options.priority}")
        fix = " && ".join(commands) + f" gives {_them(count)} these"
    return count, ", ".join(changes.values()), fix


def _them(count: int) -> str:
    return "it" if count == 1 else "them"


def _waiting_ids(name: str) -> str:
    """The sweep's waiting jobs as a shell finds them, for a command the warnings give."""
    return f"$(gpuherd ls -q {sweep_option(name)} --state queued,held)"


def _cancel(name: str) -> str:
    return f"gpuherd kill {_waiting_ids(name)}"


def _one_line(command: str) -> str:
    """A command as one line of at most 80 characters, however the template ran it."""
    line = " ".join(command.split("\n"))
    return line if len(line) <= 80 else line[:79] + "…"


def _shown(params: Any, key: str) -> str:
    return value_text(params[key]) if key in params else "(none)"


def missing_scripts(
    to_submit: Sequence[Point], request: SweepRequest, on_ray: bool = False
) -> list[str]:
    """A warning for each file the points to submit run that is not there from their folder,
    said once with how many run it (each point's command read: a template's `python {script}`
    runs a file of its own per point); before them, one for a program the points' shell will
    not find as written, read once from the template (`job.sh {lr}` of a file of the folder:
    program_hints.py). None for a task's sweep: it runs gpuherd's worker.
    `on_ray`: the daemon runs jobs on a Ray cluster (script_files.missing_script_hints)."""
    if request.task:
        return []
    env = {**request.env, **(request.options.env_overrides or {})}
    template = request.spec.get("command")  # (None: a task's; parsed already, sweep_plan)
    said = sweep_program_hints(
        template if isinstance(template, str) else None, request.cwd, env, len(to_submit)
    )
    commands = [point.command or "" for point in to_submit]
    return [
        *said,
        *missing_script_hints(commands, request.cwd, env, "point", on_ray=lambda: on_ray),
    ]


def env_placeholders(spec: SweepSpec, request: SweepRequest) -> list[str]:
    """A warning for an --env value naming a placeholder (core/sweep_env.py)."""
    names = [*spec.fixed, *spec.varying]
    return core_env_placeholders(spec.command, names, request.options.env_overrides)
