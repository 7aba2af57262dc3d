"""Printing a job's log (`log`, `log -f`, `submit --follow`): following it as it comes,
pointing at stderr when stdout is empty, and checking `--attempt` against the job's."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

import click

from gpuherd.cli.job_refs import FINISHED
from gpuherd.cli.main import prefixed
from gpuherd.cli.reader_watch import produced_aside
from gpuherd.client import Client
from gpuherd.errors import DaemonError, HerdError, NoAnswer, NotRunning
from gpuherd.following import Piece, follow_log
from gpuherd.typed_name import typed_name


def check_attempt(client: Client, job_id: int, attempt: int | None) -> None:
    """Refuse `--attempt 0` (or below) in words, naming the job's latest attempt when the
    daemon can tell it: a wrong number above it is the daemon's to refuse (`has no
    attempt 3: it has run once`)."""
    if attempt is None or attempt >= 1:
        return
    try:
        latest = int(client.get(f"/jobs/{job_id}")["attempt"])
    except HerdError:
        latest = None  # no such job, or no daemon: the number alone is wrong enough
    if latest is None:
        known = "leave --attempt out for the latest"
    elif latest == 0:
        known = f"job {job_id} has not started yet"
    else:
        known = f"job {job_id}'s latest is {latest} (what `{typed_name()} log {job_id}` shows)"
    raise click.UsageError(f"--attempt {attempt}: attempts are numbered from 1; {known}")


def has_text(client: Client, job_id: int, stream: str, attempt: int | None) -> bool | None:
    """Whether that log holds text; None when it cannot be read (not started, or gone)."""
    try:
        pieces = client.download(f"/jobs/{job_id}/log", stream=stream, attempt=attempt, lines=1)
        return any(pieces)
    except HerdError:
        return None


def ends_pointing(job: dict[str, Any], attempt: int | None) -> bool:
    """Whether a follow of `job`'s latest attempt ends with ended_badly's pointer at its
    stderr (it ended badly already): the "wrote nothing to stdout" one then said the same
    before it, advising `-f` of a job that had ended."""
    return attempt is None and job.get("state") in FINISHED - {"succeeded"}


def has_text_at(client: Client, job: dict[str, Any], attempt: int | None) -> bool:
    """Whether the stdout log shown holds text, or cannot be read (nothing to point at)."""
    return has_text(client, int(job["id"]), "stdout", attempt) is not False


def point_at_stderr(client: Client, job_id: int, attempt: int | None, follow: str) -> None:
    """A job whose stdout is empty but not its stderr (logging, tqdm and warnings write
    there) looks silent: say where its output is."""
    if has_text(client, job_id, "stderr", attempt):  # (None: nothing to point at)
        click.echo(
            prefixed(
                f"job {job_id} wrote nothing to stdout{so_far(client, job_id, attempt)}, but to"
                f" stderr: {typed_name()} log{follow} {job_id} --stderr"
            ),
            err=True,
        )


def so_far(client: Client, job_id: int, attempt: int | None) -> str:
    """` so far` while the attempt shown may still write; of one that ended, nothing (`so
    far` of a job that had failed read as though it still ran)."""
    try:
        job = client.get(f"/jobs/{job_id}")
    except HerdError:
        return " so far"  # (gone meanwhile, or no answer: the cautious words)
    if attempt is not None and attempt < int(job["attempt"]):
        return ""  # an earlier attempt: a later one began, so it ended
    return "" if job["state"] in FINISHED else " so far"


def ended_badly(client: Client, job: dict[str, Any], followed: str = "stdout") -> str:
    """How a followed job that did not succeed ended (`job 5: failed (exit 3)`), pointing at
    its stderr when the follow printed its stdout and stderr holds text: a traceback goes
    there, and the follow alone ended as quietly as a success."""
    from gpuherd.cli.submit_wait import ending  # (it imports this module)

    job_id = int(job["id"])
    line = f"job {job_id}: {ending(job)}"
    if (
        followed == "stdout"
        and not stderr_is_stdout(client, job)
        and has_text(client, job_id, "stderr", None)
    ):
        line += f"; its stderr: {typed_name()} log {job_id} --stderr"
    return line


def stderr_is_stdout(client: Client, job: dict[str, Any]) -> bool:
    """Whether the job's stderr goes to its stdout's file (`-o F` without `-e`, or `-o F -e
    F`), as `show` says it (`(with stdout)`): the follow printed it already, and pointing at
    `log --stderr` printed the same text again. Asked of the daemon where `job` does not
    say (a wait's endings); not known, False: the pointer, as before."""
    files = job.get("log_files")
    if files is None:
        try:
            files = client.get(f"/jobs/{job['id']}").get("log_files")
        except HerdError:
            return False
    return bool(files) and files.get("stderr") is not None and files["stderr"] == files["stdout"]


def not_started_note(job: dict[str, Any]) -> str | None:
    """What `log -f` says on stderr of a job that has not started and will not at once (held,
    waiting for its --begin time, a retry's --retry-delay, a dependency or GPUs): it waits
    silently for the job otherwise, which reads as a hang. Of one that ran before (a retry
    waiting, one held by `retry --hold`), its last attempt's log is printed first, then its
    next attempt's (it said nothing of such a job). None for one running, ended, or about
    to start."""
    if job["state"] not in ("queued", "held"):
        return None
    why = str(job.get("reason") or job["state"])
    if why == "starting":
        return None
    job_id, release = job["id"], ""
    if job["state"] == "held":
        then = "starts it now" if job.get("begin") else "lets it run"
        release = f" ({typed_name()} release {job_id} {then})"
    if job["attempt"]:
        said = f"has not run again yet: {why}; its next attempt's log follows once it starts"
    else:
        said = f"has not started yet: {why}; its log follows once it starts"
    return prefixed(f"job {job_id} {said}{release}")


def one_place(first: TextIO, second: TextIO) -> bool:
    """Whether both streams write to one place (a terminal, `2>&1`): there a note on stderr
    lands in the text of stdout."""
    try:
        a, b = os.fstat(first.fileno()), os.fstat(second.fileno())
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class FollowPrinter:
    """A followed log's text on stdout, and gpuherd's notes on stderr between it (a retry
    began, the daemon went away, how the job ended). A note that comes while the text's last
    line is unfinished (a progress bar redrawn with \r, a print without its newline) starts
    a line of its own where both streams show in one place: it was glued to that line, or
    written over by the bar's next drawing. The text itself is printed as the job wrote it."""

    def __init__(self) -> None:
        self.open_line = False

    def text(self, piece: str) -> None:
        if piece:  # the log's own bytes, also those that are not UTF-8 (follow_log's raw)
            sys.stdout.flush()
            sys.stdout.buffer.write(piece.encode("utf-8", "surrogateescape"))
            sys.stdout.buffer.flush()
            self.open_line = not piece.endswith("\n")

    def note(self, line: str) -> None:
        if self.open_line and one_place(sys.stdout, sys.stderr):
            line = "\n" + line
            self.open_line = False
        click.echo(line, err=True)


def daemon_gone() -> str:
    """What a waiting or following command says when its daemon went away."""
    return prefixed("the daemon went away; waiting for it to come back")


def say_daemon_gone() -> None:
    """Says so for a waiting command (`wait`, `submit --wait`)."""
    click.echo(daemon_gone(), err=True)


def print_follow(
    client: Client,
    job_id: int,
    stream: str = "stdout",
    attempt: int | None = None,
    lines: int | None = None,
    say_gone: bool = True,
    printer: FollowPrinter | None = None,
) -> FollowPrinter:
    """Print a job's log as it comes until the job ends (`log -f`, `submit --follow`);
    `say_gone`: say so when the daemon goes away (the follow waits for the next one).
    Returns the printer, for notes after the text."""
    out = printer or FollowPrinter()

    def produce(emit: Callable[[Piece], None]) -> None:
        gone = (lambda: emit(("gone", None))) if say_gone else None  # (in its place in the text)
        for piece in follow_log(client, job_id, stream, attempt, lines, gone, raw=True):
            emit(piece)

    try:
        # Read aside, stdout watched meanwhile: a follow whose reader went away (`| grep -m1
        # ready`) ends then, not at the job's next write, hours later maybe (reader_watch.py).
        for kind, piece in produced_aside(produce):
            if kind == "gone":
                out.note(daemon_gone())
            elif kind == "attempt":  # a retry: its log follows (said on stderr, apart from the log)
                out.note(prefixed(f"job {job_id}: attempt {piece} began"))
            elif kind == "deleted":  # read on through the daemon's open file (log_follow.py)
                out.note(
                    prefixed(
                        f"job {job_id}: its log {piece} was deleted; following what the job "
                        "still writes to it, as tail -f does, until it ends (then that text "
                        "is gone)"
                    )
                )
            elif kind == "truncated":  # (`tail: x.log: file truncated`)
                out.note(
                    prefixed(
                        f"job {job_id}: its log {piece} was truncated; following from its start"
                    )
                )
            else:
                out.text(piece)
    except DaemonError as exc:
        if isinstance(exc, NoAnswer):  # one runs, stopped or stuck: exit 1, as any command's
            raise
        raise NotRunning(str(exc)) from None  # gone, none came back: exit 3 (cli/main.py)
    return out
