"""How a `gpuherd run` went: its jobs counted by how they ended, and its exit status; and
what it tells the user as it goes (Reporter)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from gpuherd.core.commands import shown_command
from gpuherd.core.text import visible_command
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


def unwritten_words(unwritten: dict[str, OSError], output_dir: str) -> str:
    """What the run's end says of job folders whose end it could not record (an error)."""
    folders = sorted(unwritten, key=lambda name: (len(name), name))  # (job_2 before job_10)
    why = next(iter(unwritten.values()))
    why_words = why.strerror or str(why)
    if len(folders) == 1:
        return (
            f"the end of {folders[0]} could not be recorded in {output_dir} ({why_words}): it "
            "has no job.json or SUCCESS/FAILURE, and its logs may be cut short; free some "
            "space, then run again with --skip-succeeded, which runs it again (as it does the "
            "jobs that failed)"
        )
    more = len(folders) - 5
    named = ", ".join(folders[:5]) + (f" and {more:,} more" if more > 0 else "")
    return (
        f"the ends of {len(folders):,} jobs could not be recorded in {output_dir} ({why_words}):"
        f" {named} have no job.json or SUCCESS/FAILURE, and their logs may be cut short; free "
        "some space, then run again with --skip-succeeded, which runs them again (as it does "
        "the jobs that failed)"
    )
