"""`gpuherd run`'s lines: one per event (a start, an end, a retry, a notice), a failure's log
tail, the jobs' own lines with --live, and a progress bar under them on a terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from gpuherd.cli import plain
from gpuherd.core.commands import SHOWN_MOST, flat_command, shown_command
from gpuherd.core.text import shell_word, visible, visible_command
from gpuherd.core.units import format_duration
from gpuherd.log_text import tail, tail_lines

TAILS_SHOWN = 10
"""Failures whose last stderr lines are shown; later ones get their one line."""
TAIL_LINES = 5
TAIL_WIDTH = 200


class LineReporter:
    """One line per event; a live progress bar under them when the terminal is interactive.
    `quiet`: no line for a start or a success (a run of thousands of jobs). `prefix`: the job
    folders' (job_ for job_0, ...), where a command cut short is whole (their job.json).
    `bar`: False for none (the commands are typed on that terminal)."""

    def __init__(
        self, stream: TextIO, quiet: bool = False, prefix: str = "job_", bar: bool = True
    ) -> None:
        self._stream = stream
        self._quiet = quiet
        self._prefix = prefix
        self._progress: Any = None
        self._task: Any = None
        self._total = 0
        self._done = 0
        self._failures = 0
        if bar and stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            bold = "bold" if plain.Terminal(stream).styled else "none"  # (NO_COLOR: none)
            self._progress = Progress(
                TextColumn("gpuherd run", style=bold),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                console=Console(file=stream),  # its refresh thread writes there too
                transient=True,
            )
            self._task = self._progress.add_task("", total=0)
            self._progress.start()

    def _say(self, text: str) -> None:
        text = plain.clean(text)  # commands and messages may hold escape sequences: never raw
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:  # flushed once per burst of events (flush), not once per line
            self._stream.write(text + "\n")

    def started(self, number: int, gpus: list[int], command: str) -> None:
        if self._quiet:
            return
        indices = ",".join(map(str, gpus))
        where = f"GPU {indices}" if len(gpus) == 1 else f"GPUs {indices}" if gpus else "no GPU"
        shown = flat_command(command)  # (once a job: a run of thousands prints this line)
        if len(shown) > SHOWN_MOST:  # cut: say where it is whole
            whole = f"{len(command):,} characters, whole in {self._prefix}{number}/job.json"
            shown = f"{visible_command(shown_command(command))} ({whole})"
        else:
            shown = visible_command(shown)
        self._say(f"[{number}] started on {where}: {shown}")

    def skipped(self, number: int, folder: str) -> None:
        if not self._quiet:  # as a success: nothing went wrong
            self._say(f"[{number}] skipped: succeeded before ({shell_word(folder)})")

    def ended(self, number: int, state: str, detail: str, seconds: float, folder: str) -> None:
        self._done += 1
        if state == "succeeded":
            if not self._quiet:
                self._say(f"[{number}] succeeded in {format_duration(max(seconds, 0.0))}")
        else:
            why = f" ({detail})" if detail and detail != state else ""
            log, last_lines = failure_log(Path(folder))
            see = f": see {shell_word(f'{folder}/{log}')}" if log else ""
            if log == "stdout.log":
                see += " (nothing in stderr.log)"
            self._say(f"[{number}] {state}{why} after {format_duration(max(seconds, 0.0))}{see}")
            self._failures += 1
            if self._failures <= TAILS_SHOWN:  # a sweep gone wrong must not flood the screen
                for line in last_lines:
                    self._say(f"    {visible(line)[:TAIL_WIDTH]}")
        self._update()

    def retrying(self, number: int, detail: str) -> None:
        self._say(f"[{number}] failed ({detail}); queued again")

    def output(self, number: int, stream: str, line: str) -> None:
        """A job's own line (--live), tagged as GNU parallel's --tag does: `[3]| ` for its
        stdout, `[3]! ` for its stderr; shown as a failure's tail is (visible: no escape
        sequence, a NUL as ^@)."""
        self._say(f"[{number}]{'!' if stream == 'stderr' else '|'} {visible(line)}")

    def notice(self, text: str) -> None:
        self._say(text)
        self.flush()  # notices come outside bursts (an interrupt, a refused line)

    def submitted(self, count: int) -> None:
        self._total = count
        self._update()

    def flush(self) -> None:
        if self._progress is None:
            self._stream.flush()

    def _update(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, total=self._total, completed=self._done)

    def close(self) -> None:
        self.flush()
        if self._progress is not None:
            self._progress.stop()


def failure_log(folder: Path) -> tuple[str, list[str]]:
    """The log that says why a job failed, and its last lines: its stderr.log, unless that
    holds no text and its stdout.log does (a script that prints its error, as `echo ...;
    exit 1` does: the run showed nothing of it, and named an empty file). No name ("") when
    it has neither: its shell never started (its line says why), so there is none to see."""
    if not any((folder / log).exists() for log in ("stderr.log", "stdout.log")):
        return "", []
    if not tail(folder / "stderr.log").strip() and tail(folder / "stdout.log").strip():
        return "stdout.log", tail_lines(folder / "stdout.log", TAIL_LINES)
    return "stderr.log", tail_lines(folder / "stderr.log", TAIL_LINES)
