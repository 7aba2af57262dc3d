"""How a `gpuherd run` went: its jobs counted by how they ended, and its exit status; and
what it tells the user as it goes (Reporter)."""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from gpuherd.core.commands import shown_command
from gpuherd.core.text import shell_word, visible_command
from gpuherd.errors import HerdError
from gpuherd.executors.base import RUN_FOLDER_GONE
from gpuherd.runner_signals import HANGUP_STATUS, INTERRUPT_STATUS


class Reporter(Protocol):
    """What the runner tells the user; the CLI prints it, tests may record it."""

    def started(self, number: int, gpus: list[int], command: str) -> None: ...
    def ended(self, number: int, state: str, detail: str, seconds: float, folder: str) -> None: ...
    def retrying(self, number: int, detail: str) -> None: ...
    def skipped(self, number: int, folder: str) -> None: ...  # (--skip-succeeded)
    def notice(self, text: str) -> None: ...
    def submitted(self, count: int) -> None: ...
    def output(self, number: int, stream: str, line: str) -> None: ...  # (--live)
    def flush(self) -> None:
        """The lines said so far are complete: show them (called once per burst)."""


@dataclass
class RunSummary:
    succeeded: int = 0
    failed: int = 0
    could_not_run: int = 0
    """Jobs refused before they were queued: they can never run here (more GPUs or memory than
    there is) or are not valid jobs (an empty command); each one's line says why."""
    not_run: int = 0
    skipped: int = 0
    """Jobs not run because they succeeded before (--skip-succeeded): as good as succeeded."""
    interrupted: bool = False
    hung_up: bool = False
    input_failed: bool = False
    """The input could not be read to its end (not text, a line too long, a read error):
    a failure of the run, not an interruption by the user."""
    failed_folders: list[str] = field(default_factory=list)
    state_left_in: Path | None = None
    """--keep-state could not move the database to the output folder: where it stayed."""
    output_failed: bool = False
    """What the run said could not be written (a full disk: runner_stdout.py)."""
    engine_failed: str | None = None
    """The scheduler's unexpected error, which stopped the run (runner_failure.py)."""
    unwritten: dict[str, OSError] = field(default_factory=dict)
    """Job folders whose job.json, SUCCESS or FAILURE could not be written as the job ended
    (a full disk), and why: the run's record of it (unwritten_words)."""

    @property
    def jobs(self) -> int:
        """The input's jobs counted so far (all of them once the run is over)."""
        counts = (self.succeeded, self.failed, self.skipped, self.could_not_run, self.not_run)
        return sum(counts)

    @property
    def exit_status(self) -> int:
        if self.hung_up:
            return HANGUP_STATUS
        if self.interrupted:
            return INTERRUPT_STATUS
        bad = self.failed or self.could_not_run or self.not_run or self.input_failed
        broken = self.state_left_in or self.output_failed or self.engine_failed or self.unwritten
        return 1 if bad or broken else 0


_STARTING_JOB = re.compile(r"starting job (\d+)(?: \(attempt \d+\))?: ")

EMPTY_COMMAND = "the command is empty: yield the command to run (a string, or a dict's 'command')"


def in_run_words(detail: str, job_id: int) -> str:
    """How an attempt ended, as the engine says it, for the run's line `[N] failed (...)`: the
    engine names the job by its id in the queue (`starting job 3 (attempt 1): cannot ...`),
    which is not the run's number N (job_2 there): the line's [N] names it."""
    said = _STARTING_JOB.match(detail)  # (one pattern: one compiled per job id cost ~0.2 ms)
    return detail[said.end() :] if said and said[1] == str(job_id) else detail


_RETRY_WAIT = re.compile(r"; (?:runs again in |its --retry-delay )[^;]*\Z")
"""What a retry's event adds to how its attempt ended: its --retry-delay (lifecycle.retry_wait)."""


def unretried(detail: str | None) -> str:
    """How a job ended whose retry never started (the run stopped first): its last attempt's
    end, and why no retry came; not the wait for the retry (`runs again in 20s`) that was."""
    ended = _RETRY_WAIT.sub("", detail or "")
    return "; ".join(filter(None, [ended, "not retried: the run stopped"]))


def could_not_run(number: int, command: str, refusal: Exception, cwd: str) -> str:
    """The line of job `number` of the input, refused before it was queued (its folder `cwd`
    removed since: the submission's advice, --cwd, is not the run's). An empty command
    comes from a yielder (a job file has no empty line to run): submit's advice for it is for a
    command line. One of blanks alone (`yield "  "`) is as empty: the submission strips it.
    Its control characters are shown as `started` lines show them (a yielded NUL as ^@: as a
    blank, the line named a command that had none, refused for the NUL it did not show)."""
    if not os.path.isdir(cwd):
        refusal = HerdError(f"working directory {cwd} does not exist: {RUN_FOLDER_GONE}")
    shown = visible_command(shown_command(command))
    why = f"{shown}: {refusal}" if command.strip() else EMPTY_COMMAND
    return f"[{number}] could not run: {why}"


_FULL = (errno.ENOSPC, errno.EDQUOT)
_GONE = (errno.ENOENT, errno.ENOTDIR)
_BARRED = (errno.EACCES, errno.EPERM, errno.EROFS)


def unwritten_words(unwritten: dict[str, OSError], output_dir: Path) -> str:
    """What the run's end says of job folders whose end it could not record (an error), with
    the way out that fits the error (the first folder's). Logs cut short only by a full disk,
    and only where a job ran to write them: one refused its folder never started."""
    folders = sorted(unwritten, key=lambda name: (len(name), name))  # (job_2 before job_10)
    why, where, one = unwritten[folders[0]], shell_word(str(output_dir)), len(folders) == 1
    if one:
        what, whose, them = f"the end of {folders[0]}", "it has", "it"
    else:
        more = len(folders) - 5
        named = ", ".join(folders[:5]) + (f" and {more:,} more" if more > 0 else "")
        what, whose, them = f"the ends of {len(folders):,} jobs", f"{named} have", "them"
    said = f"{what} could not be recorded in {where} ({why.strerror or why}): {whose} no job.json"
    said += " or SUCCESS/FAILURE"
    if why.errno in _FULL and any((output_dir / name / "stdout.log").exists() for name in folders):
        said += f", and {'its' if one else 'their'} logs may be cut short"
    return (
        f"{said}; {_way_out(why, where)}, then run again with --skip-succeeded, which runs "
        f"{them} again (as it does the jobs that failed)"
    )


def _way_out(why: OSError, where: str) -> str:
    """What to do about `why` before running again."""
    if why.errno == errno.EDQUOT:
        return "free some space (or have your disk quota raised)"
    if why.errno in _FULL:
        return "free some space"
    if why.errno in _GONE:
        return f"{where} (or a job folder in it) was removed or moved as the run ran: keep it there"
    if why.errno in _BARRED:
        return f"make {where} writable for you (its permissions, or a read-only mount)"
    return f"see that {where} can be written in"
