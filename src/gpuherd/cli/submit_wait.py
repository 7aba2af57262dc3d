"""`submit --wait` and `submit --follow`: wait for the jobs just submitted and exit with their
own exit status, as task-spooler's `tsp -w`/`-f`, Slurm's `sbatch --wait` and `srun` do.

The exit status of a job, as a shell would report its command:
- it succeeded: 0;
- its command exited with code N (outcome `exit`, or `cuda_oom`, which is an exit too): N;
- a signal N it did not get from gpuherd ended it (outcome `signal`): 128 + N;
- anything else (killed by gpuherd, timeout, stalled, spawn_error, dependency_failed,
  cancelled, lost), or removed while waited for (`gpuherd rm`: `job 7: removed (gpuherd rm
  or clean)`, the daemon's ending of it, wait_removed.py): 1.
Of several jobs (`--file`): 0 when all succeeded, else the status of the first one (in
submission order) that did not. 3 when the daemon went away and none came back, as `wait`.

With --follow, stdout is the job's stdout, byte for byte, as `log -f` prints it; what
gpuherd says itself (`submitted job 7` or --json's ids, a retry, how the job ended) goes to
stderr, in a terminal too, as pueue's `add --follow` and srun do: `| head -1` gets the job's
first line, `> out.txt` the job's output alone.

A reader that goes away (`submit --follow ... | head -1`) ends the printing, not the wait:
exiting then (0, as `log -f | head` does) would claim a success nobody knows yet.
"""

from __future__ import annotations

import functools
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import click

from gpuherd.cli import plain
from gpuherd.cli.main import drop_output, prefixed
from gpuherd.cli.stuck_notes import stuck_notes
from gpuherd.client import Client
from gpuherd.client_wait import Waited
from gpuherd.core.idspec import format_ids, summarize
from gpuherd.errors import DaemonError, NoAnswer, NotFound, NotRunning
from gpuherd.stuck_jobs import held_words
from gpuherd.typed_name import typed_name

SHELL_SIGNAL_BASE = 128
"""A shell reports a command that a signal N ended as 128 + N."""

if TYPE_CHECKING:
    from gpuherd.cli.log_output import FollowPrinter


def exit_status(job: dict[str, Any]) -> int:
    """What `submit --wait` exits with for this finished job (`show --json`'s fields)."""
    if job["state"] == "succeeded":
        return 0
    code = None
    if job.get("outcome") in ("exit", "cuda_oom"):
        code = job.get("exit_code")
    elif job.get("outcome") == "signal" and job.get("signal"):
        code = SHELL_SIGNAL_BASE + int(job["signal"])
    # Never 0 for a job that did not succeed, and within what an exit status can hold.
    return int(code) if code and 0 < int(code) < 256 else 1


def ending(job: dict[str, Any]) -> str:
    """How a job that did not succeed ended: `failed (exit 3)`, `failed (signal 9, SIGKILL)`,
    `killed`, `failed (timeout)`, `cancelled (dependency_failed: ...)`."""
    state, outcome = job["state"], job.get("outcome")
    if outcome in ("exit", "cuda_oom"):
        how = f"exit {job.get('exit_code')}"
    elif outcome == "signal":
        how = f"signal {job.get('signal')}"
        try:
            how += f", {signal.Signals(int(job['signal'])).name}"
        except (TypeError, ValueError):
            pass  # no number, or none this system names
    else:
        how = "" if outcome in (None, state) else str(outcome)
    message = str(job.get("message") or "")
    if message.startswith(f"{state} ") and not how:
        return plain.clean(message)  # `cancelled by the user`, not `cancelled (cancelled by...)`
    if message:
        how = f"{how}: {message}" if how else message
    return plain.clean(f"{state} ({how})" if how else state)


def wait_and_exit(
    client: Client,
    ids: Sequence[int],
    follow: bool,
    said: str | None,
    on_gone: Callable[[], None] | None,
    held: bool = False,
    begin: float | None = None,
) -> None:
    """Print `said` (the ids; on stderr if `follow`), wait for the jobs (printing the one
    job's stdout as it comes if `follow`), name those that did not succeed on stderr, and
    exit with the status the module's doc gives. Ctrl-C ends the waiting, not the jobs, and
    says so. `held`: the jobs were submitted held (`--hold`, or until `begin`: --begin),
    said on stderr with the way to release them: the wait until then read as a hang."""
    from gpuherd.cli.log_output import FollowPrinter, ended_badly

    printer = FollowPrinter()  # notes after a followed log's unfinished line start their own
    try:
        if said is not None and follow:  # stdout is the job's
            _unless_reader_left(functools.partial(printer.note, said), sys.stderr)
        elif said is not None:
            _unless_reader_left(lambda: click.echo(said), sys.stdout)
        if held:
            note = held_note(ids, begin)
            _unless_reader_left(functools.partial(printer.note, note), sys.stderr)
        elif on_gone is not None:  # (not -q): a job that waits for a held one, a paused queue
            for note in stuck_notes(client, ids):
                _unless_reader_left(functools.partial(printer.note, note), sys.stderr)
        if follow:
            (job_id,) = ids
            _unless_reader_left(
                lambda: _followed(client, job_id, on_gone is not None, printer, held),
                sys.stdout,
            )
        # (at once after a follow: it has ended; the daemon that took the jobs answered)
        waited = client.wait_for(ids, None, on_gone, answered=client.answered)
    except DaemonError as exc:
        if isinstance(exc, NoAnswer):  # one runs, stopped or stuck: exit 1, as any command's
            raise
        # Gone, and none came back: no verdict on the jobs, exit 3 as `wait`'s (cli/main.py),
        # where 1 read as the job's own `exit 1`.
        raise NotRunning(str(exc)) from None
    except KeyboardInterrupt:
        # srun cancels its job on Ctrl-C; this one goes on, which the user may not expect.
        them = f"job {ids[0]} goes on" if len(ids) == 1 else f"jobs {format_ids(ids)} go on"
        _unless_reader_left(
            functools.partial(
                printer.note,
                prefixed(
                    "interrupted",
                    f"{them} ({typed_name()} kill {format_ids(ids)} stops "
                    f"{'it' if len(ids) == 1 else 'them'})",
                ),
            ),
            sys.stderr,
        )
        sys.exit(130)
    bad = [_ended(client, i, waited) for i in ids if waited.states.get(i) != "succeeded"]
    if follow:  # the one job, pointing at its stderr as `log -f` does
        lines = [ended_badly(client, job) for job in bad]
    else:  # `job 5: failed (exit 3)`; `jobs 3,7: killed`
        lines = [line for _, line in summarize((int(j["id"]), True, ending(j)) for j in bad)]
    for line in lines:
        _unless_reader_left(functools.partial(printer.note, line), sys.stderr)
    sys.exit(exit_status(bad[0]) if bad else 0)


def _followed(
    client: Client, job_id: int, say_gone: bool, printer: FollowPrinter, held: bool
) -> None:
    """print_follow of the job just submitted. One removed before the follow's first ask
    reached the daemon (`gpuherd rm` at once) is said as one removed meanwhile, as the
    follow's own stream says it: the daemon's `no job 8: gpuherd ls --all lists the jobs`
    read as though it had never been there."""
    from gpuherd.cli.log_output import print_follow

    try:
        print_follow(client, job_id, say_gone=say_gone, printer=printer)
    except NotFound as exc:
        if "was removed" in str(exc):
            raise
        how = "before it ran: it has no log" if held else "(gpuherd rm or clean) as it began"
        raise NotFound(f"job {job_id} was removed {how}") from None


def held_note(ids: Sequence[int], begin: float | None = None) -> str:
    """`gpuherd: job 7 is held: waiting until it is released (gpuherd release 7 lets it
    run)`, of jobs submitted with --hold and waited for; of ones held until `begin` (their
    --begin time), `job 7 is held until 02:00 (--begin): waiting until then (...)`."""
    return prefixed(held_words(ids, begin))


def _ended(client: Client, job_id: int, waited: Waited) -> dict[str, Any]:
    """How a job that did not succeed ended, as the wait's answer told (`endings`); asked
    of the daemon where it did not: an older daemon's answer has no endings."""
    if job_id in waited.endings:
        return {"id": job_id, **waited.endings[job_id]}
    job: dict[str, Any] = client.get(f"/jobs/{job_id}")
    return job


def _unless_reader_left(write: Callable[[], object], stream: TextIO) -> None:
    """`write`, or nothing more on `stream` once its reader has gone."""
    try:
        write()
    except BrokenPipeError:
        drop_output(stream)
