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

A job not run because its folder holds another's success may have succeeded in the folder of a
later place: the input has the earlier run's jobs in other places, as a shuffled sweep's
--dry-run without --seed gives each time. Its line says so, and names that folder (the folders
are read once, at the first such job: `Elsewhere`).

And folders of more jobs than this input has (an earlier, longer run's `job_7` after a rerun
of 5 jobs) are kept, never removed, but named once, so that nobody takes them for this run's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator

from gpuherd.core.commands import shown_command
from gpuherd.core.text import ascii_digits, shell_word
from gpuherd.core.units import plural
from gpuherd.device_hints import VISIBLE_DEVICES
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
    later = Elsewhere(folder_of)
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
            on_skip(NotRun(number, held_by_another(folder, held, key, later.after(number, key))))
        else:
            yield number, item


def job_key(command: str, env_overrides: object) -> JobKey:
    """The key of a job's command and env overrides, but for CUDA_VISIBLE_DEVICES: the run
    sets it for every job whatever the overrides say, so it is no part of what a job ran
    (dropped from them now, it was in the job.json of earlier runs: cli/run_warnings.py)."""
    if isinstance(env_overrides, dict) and VISIBLE_DEVICES in env_overrides:
        env_overrides = {k: v for k, v in env_overrides.items() if k != VISIBLE_DEVICES}
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


def held_by_another(folder: str, held: JobKey, key: JobKey, later: str | None) -> str:
    """Why a job is not run in `folder`, where the job `held` succeeded, and what to do (not
    to remove the folder: a later line may be the job that moved out of it, skipped there).
    `later`: the folder of a later place where this job succeeded, which says the input has
    the earlier run's jobs in other places; most likely a shuffled sweep's --dry-run run again
    without --seed, which reorders them all."""
    command, env = held
    if command != key[0]:
        what = f"another command that succeeded ({shown_command(command)})"
    else:
        what = f"this command with another env that succeeded ({shown_command(env)})"
    if later is None:
        why = "the input's jobs moved or changed since that run; add new jobs at the end"
    else:
        why = (
            f"this job succeeded in {shell_word(later)}, of a later place: the input has that "
            "run's jobs in other places (a gpuherd sweep --shuffle --dry-run draws a new order "
            "each time: rerun it with the --seed the first one printed); keep each job in its place"
        )
    return f"{shell_word(folder)} holds a run of {what}, kept: {why}, or give another --output-dir"


class Elsewhere:
    """Where jobs succeeded in the folders of later places than a job's: read at the first
    question, once (a rerun of another order asks of most jobs), and of the folders after its
    place only (later questions are of later places: the input is read in order)."""

    def __init__(self, folder_of: Callable[[int], str]) -> None:
        self._folder_of = folder_of
        self._places: dict[JobKey, list[int]] | None = None

    def after(self, number: int, key: JobKey) -> str | None:
        """The folder of the first place after `number` where the job `key` succeeded."""
        if self._places is None:
            self._places = succeeded_after(self._folder_of, number)
        return next((self._folder_of(n) for n in self._places.get(key, ()) if n > number), None)


def succeeded_after(folder_of: Callable[[int], str], number: int) -> dict[JobKey, list[int]]:
    """The places after `number` whose folder holds a success, by the job that succeeded
    there, in order: the job folders of the output folder (`folder_of` of a number)."""
    places: dict[JobKey, list[int]] = {}
    try:
        with os.scandir(os.path.dirname(folder_of(number))) as entries:
            found = sorted(
                (place, entry.path)
                for entry in entries
                if (place := _place(entry.path, folder_of)) is not None and place > number
            )
    except OSError:  # (not there, unreadable: the line says what it said before)
        return places
    for place, folder in found:
        if (held := succeeded_job(folder)) is not None:
            places.setdefault(held, []).append(place)
    return places


def _place(path: str, folder_of: Callable[[int], str]) -> int | None:
    """The number whose folder `path` is, None for another name (`job_03`, `notes`): the
    digits it ends in, or their end only where --prefix ends in digits (`r1` makes `r10`).
    Of 19 digits at most: no input has more jobs, and int() refuses a name of 5,000."""
    digits = min(len(path) - len(path.rstrip("0123456789")), 19)
    for start in range(len(path) - digits, len(path)):
        if folder_of(place := int(path[start:])) == path:
            return place
    return None


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
                # (startswith: `number != entry.name` was never true for --prefix "")
                if (
                    entry.name.startswith(prefix)
                    and ascii_digits(number)  # (`job_²`: a digit to isdigit, not to int())
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
