"""What a rerun into the same `gpuherd run --output-dir` finds there.

`--skip-succeeded` (GPU Task Scheduler's `force_rerun=False`): a job whose folder holds SUCCESS
and a job.json naming the same command and env overrides succeeded before; it is not run
again and its folder is left exactly as it is (its logs, markers and job.json are what a later
`--times-from` and the user's own scripts read).

A folder is named by the job's place in the input, but what the user keeps is a job's result:
a line inserted at the top moves every later job onto the folder of another one. So a folder
holding another job's SUCCESS is never overwritten (that job is not run, and its line says
why), and a job that succeeded in such a folder of an earlier place (its line moved down) is
skipped, naming that folder. Each earlier success stands for one job only (two identical
lines ran twice), and only folders of earlier places are taken, whose own jobs have been seen
already: the input is read as a stream, and a folder's own job always keeps it.

Anything else (FAILURE, no marker, no readable job.json) runs as without the option.

And folders of more jobs than this input has (an earlier, longer run's `job_7` after a rerun
of 5 jobs) are kept, never removed, but named once, so that nobody takes them for this run's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator

from gpuherd.core.commands import shown_command
from gpuherd.core.text import shell_word
from gpuherd.core.units import plural
from gpuherd.errors import Forbidden
from gpuherd.jobfiles import open_job_file
from gpuherd.runner_input import NotRun, Numbered, Skipped

NAMED_MOST = 5
"""Left-over folders named in the notice; the others are counted."""

JobKey = tuple[str, str]
"""What makes two jobs the same for --skip-succeeded: the command, and the env overrides (as
sorted JSON: a dict is no key)."""


def skipping(
    numbered: Iterable[Numbered],
    folder_of: Callable[[int], str],
    on_skip: Callable[[Skipped | NotRun], None],
) -> Iterator[Numbered]:
    """The jobs to run; each one that succeeded before, or whose folder holds another job's
    success, goes to `on_skip` instead. A generator on the input's thread: the job.json files
    are read there, not on the run's loop, and before --order longest-first orders the rest
    (the skipped are reported in input order)."""
    moved_from: dict[JobKey, list[str]] = {}
    """Folders of earlier places holding another job's success, by that job: not taken yet."""
    for number, item in numbered:
        folder = folder_of(number)
        held = succeeded_job(folder)
        key = job_key(item.command, item.env_overrides)
        if held == key:
            on_skip(Skipped(number, folder))
            continue
        earlier = moved_from.get(key)
        if held is not None:
            moved_from.setdefault(held, []).append(folder)
        if earlier:
            on_skip(Skipped(number, earlier.pop(0)))
        elif held is not None:
            on_skip(NotRun(number, held_by_another(folder, held, key)))
        else:
            yield number, item


def job_key(command: str, env_overrides: object) -> JobKey:
    return command, json.dumps(env_overrides or {}, sort_keys=True)


def succeeded_job(folder: str) -> JobKey | None:
    """The job that succeeded in `folder` (its SUCCESS, and its job.json's command and env
    overrides: what a job's line or yield gives, not its GPUs, name, nor the run's options);
    None: none did, or its job.json cannot say which."""
    if not os.path.isfile(os.path.join(folder, "SUCCESS")):
        return None
    try:
        with open_job_file(os.path.join(folder, "job.json")) as f:
            info = json.loads(f.read(1 << 20))
    except (OSError, ValueError, Forbidden):  # none, unreadable, a link, cut short
        return None
    if not isinstance(info, dict) or not isinstance(info.get("command"), str):
        return None
    return job_key(info["command"], info.get("env_overrides"))


def held_by_another(folder: str, held: JobKey, key: JobKey) -> str:
    """Why a job is not run in `folder`, where the job `held` succeeded, and what to do (not
    to remove the folder: a later line may be the job that moved out of it, skipped there)."""
    command, env = held
    if command != key[0]:
        what = f"another command that succeeded ({shown_command(command)})"
    else:
        what = f"this command with another env that succeeded ({shown_command(env)})"
    return (
        f"{shell_word(folder)} holds a run of {what}, kept: the input's jobs moved or changed "
        "since that run; add new jobs at the end, or give another --output-dir"
    )


def left_over(folder_prefix: str, count: int) -> str | None:
    """The notice for job folders numbered `count` or more (`folder_prefix` is the output
    folder joined with --prefix), which this run's input of `count` jobs did not make; None:
    there is none, or the input held no job (its "nothing to run" is all a run of nothing
    says: the folders there are not a longer run's leftovers beside this run's)."""
    if count == 0:
        return None
    output_dir, prefix = os.path.split(folder_prefix)
    numbers = []
    try:
        with os.scandir(output_dir) as entries:
            for entry in entries:
                number = entry.name.removeprefix(prefix)
                if (
                    number != entry.name
                    and number.isdigit()
                    and str(int(number)) == number  # job_3, not job_03: not a name of ours
                    and int(number) >= count
                    and entry.is_dir(follow_symlinks=False)
                ):
                    numbers.append(int(number))
    except OSError:
        return None
    if not numbers:
        return None
    names = [f"{prefix}{n}" for n in sorted(numbers)]
    shown = ", ".join(names[:NAMED_MOST]) + (
        f" and {len(names) - NAMED_MOST:,} more" if len(names) > NAMED_MOST else ""
    )
    return (
        f"{shell_word(output_dir)} also holds {shown} (from an earlier run of more jobs than this "
        f"input's {plural(count, 'job')}): kept as they were; remove them if they are not wanted"
    )
