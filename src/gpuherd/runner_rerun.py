"""What a rerun into the same `gpuherd run --output-dir` finds there.

`--skip-succeeded` (GPU Task Scheduler's `force_rerun=False`): a job whose folder holds SUCCESS
and a job.json naming the same command and env overrides succeeded before; it is not run
again and its folder is left exactly as it is (its logs, markers and job.json are what a later
`--times-from` and the user's own scripts read). Anything else (another command, FAILURE, no
marker, no readable job.json) runs as without the option.

And folders of more jobs than this input has (an earlier, longer run's `job_7` after a rerun
of 5 jobs) are kept, never removed, but named once, so that nobody takes them for this run's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator

from gpuherd.core.units import plural
from gpuherd.errors import Forbidden
from gpuherd.jobfiles import open_job_file
from gpuherd.runner_input import Numbered, Skipped
from gpuherd.wire import SubmitItem

NAMED_MOST = 5
"""Left-over folders named in the notice; the others are counted."""


def skipping(
    numbered: Iterable[Numbered],
    folder_of: Callable[[int], str],
    on_skip: Callable[[Skipped], None],
) -> Iterator[Numbered]:
    """The jobs to run; each one that succeeded before goes to `on_skip` instead. A generator
    on the input's thread: the job.json files are read there, not on the run's loop, and
    before --order longest-first orders the rest (the skipped are reported in input order)."""
    for number, item in numbered:
        folder = folder_of(number)
        if succeeded_before(folder, item):
            on_skip(Skipped(number, folder))
        else:
            yield number, item


def succeeded_before(folder: str, item: SubmitItem) -> bool:
    """`folder` holds SUCCESS, and its job.json says it ran this command with these env
    overrides (what a job's line or yield gives; not its GPUs, name, nor the run's options)."""
    if not os.path.isfile(os.path.join(folder, "SUCCESS")):
        return False
    try:
        with open_job_file(os.path.join(folder, "job.json")) as f:
            info = json.loads(f.read(1 << 20))
    except (OSError, ValueError, Forbidden):  # none, unreadable, a link, cut short
        return False
    if not isinstance(info, dict):
        return False
    return info.get("command") == item.command and (info.get("env_overrides") or {}) == (
        item.env_overrides or {}
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
        f"{output_dir} also holds {shown} (from an earlier run of more jobs than this input's "
        f"{plural(count, 'job')}): kept as they were; remove them if they are not wanted"
    )
