"""What `gpuherd ls` prints as a table or as CSV, in the columns a user chooses (`--columns`).

Each column is one entry of COLUMNS: its header, how the table shows a job's value, and the
value `--csv` writes, which is the one `--json` gives (run time in seconds, times in epoch
seconds, numbers as numbers), under that field's name, as `sweep status --csv` does. `--json`
and `--csv` say on stderr what a --limit left out (job_document).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click

from gpuherd.cli import plain
from gpuherd.cli.json_text import indented
from gpuherd.cli.render import STATE_STYLE, info, runtime
from gpuherd.core.commands import flat_command
from gpuherd.core.text import one_line
from gpuherd.core.units import plural
from gpuherd.core.when import format_moment
from gpuherd.damaged_rows import unlisted
from gpuherd.typed_name import prefixed, typed_name

DEFAULT_LS_LIMIT = 100
NAME_WIDTH = 40
"""`ls` cuts longer names: one long name must not push every command off the screen."""
SHORT_SHA = 12
"""Hex digits of a commit the table shows (`git log --oneline`'s, in a large repository)."""

Job = dict[str, Any]


@dataclass(frozen=True)
class Column:
    header: str
    key: str
    """The field of `ls --json` the value is (CSV's header): `seconds` for TIME."""
    cell: Callable[[Job, float], plain.Cell]
    """The table's text of a job at `now` (a run time grows while the job runs)."""
    value: Callable[[Job], Any] | None = None
    """CSV's value, where it is not the field as it is (a list, a number to round)."""


def _command(job: Job) -> str:
    """The command on its row: its lines joined with ⏎, as `config` shows a multi-line hook
    (`echo 1⏎echo 2`: blanks read as one command, `echo 1 echo 2`); a line continued with
    `\\` is one line, as the shell reads it (flat_command)."""
    return one_line(flat_command(job["command"]))


def _text(key: str) -> Callable[[Job, float], plain.Cell]:
    return lambda job, now: "" if job.get(key) is None else str(job[key])


def _moment(key: str) -> Callable[[Job, float], plain.Cell]:
    """23:30:12 today, Nov 26 02:00:00 another day: the seconds always (as `ls` says a --begin
    time, without them at :00, a column mixed 18:26 and 18:26:01)."""
    return lambda job, now: format_moment(job[key], now, seconds=True) if job.get(key) else ""


def _rounded(key: str) -> Callable[[Job], Any]:
    """Seconds to the millisecond (`sweep status --csv` too): full floats say nothing more."""
    return lambda job: None if job.get(key) is None else round(job[key], 3)


def _state(job: Job, now: float) -> plain.Cell:
    return job["state"], STATE_STYLE.get(job["state"], "")


def _gpus(job: Job, now: float) -> plain.Cell:
    """The GPUs it runs or ran on; a waiting job has none yet: how many it asks for, `(2)`."""
    if job["state"] in ("queued", "held"):
        return f"({job['gpus_requested']})"
    return ",".join(str(g) for g in job["gpus"])


def _short_commit(commit: str | None) -> plain.Cell:
    """The git commit as `git log --oneline` shortens it, its `+dirty` kept (`--csv`: whole)."""
    if not commit:
        return ""
    sha, dirty, rest = commit.partition("+")
    return sha[:SHORT_SHA] + dirty + rest


def _live_pid(job: Job, now: float) -> plain.Cell:
    """A running or paused job's pid (for `kill -9`, or to find it in nvidia-smi); an ended
    job's pid may name another program by now, so it is not shown (`--json` keeps it)."""
    return str(job["pid"]) if job.get("pid") and job["state"] in ("running", "paused") else ""


def _log(stream: str) -> Callable[[Job], Any]:
    """The file of `log_files` (as `show --json`'s) that the job's latest attempt's `stream`
    is in; "" from a daemon older than `ls --json`'s `log_files`."""
    return lambda job: job.get("log_files", {}).get(stream, "")


_stdout, _stderr = _log("stdout"), _log("stderr")  # (made once, not per row)

COLUMNS = {
    "id": Column("ID", "id", _text("id")),
    "state": Column("STATE", "state", _state),
    "name": Column("NAME", "name", _text("name")),
    "gpus": Column("GPUS", "gpus", _gpus, lambda job: ",".join(str(g) for g in job["gpus"])),
    "prio": Column("PRIO", "priority", _text("priority")),
    "time": Column("TIME", "seconds", lambda job, now: runtime(job, now), _rounded("seconds")),
    "info": Column("INFO", "info", lambda job, now: info(job), info),
    "command": Column("COMMAND", "command", lambda job, now: _command(job)),
    "project": Column("PROJECT", "project", _text("project")),
    "sweep": Column("SWEEP", "sweep", _text("sweep")),
    "git": Column("GIT", "git", lambda job, now: _short_commit(job.get("git"))),
    "exit": Column("EXIT", "exit_code", _text("exit_code")),
    "pid": Column("PID", "pid", _live_pid),
    "submitted": Column("SUBMITTED", "created_at", _moment("created_at"), _rounded("created_at")),
    "started": Column("STARTED", "started_at", _moment("started_at"), _rounded("started_at")),
    "ended": Column("ENDED", "ended_at", _moment("ended_at"), _rounded("ended_at")),
    "folder": Column("FOLDER", "job_dir", _text("job_dir")),
    "stdout": Column("STDOUT", "stdout", lambda job, now: _stdout(job), _stdout),
    "stderr": Column("STDERR", "stderr", lambda job, now: _stderr(job), _stderr),
}
DEFAULT_COLUMNS = ("id", "state", "name", "gpus", "prio", "time", "info", "command")
_DROPPED = ("prio", "name", "gpus", "info", "time")
"""A terminal that the default columns do not fit even cut (about 70 columns; wider only for
rows of very wide cells) loses its least useful ones, in this order (an empty one first):
ID, STATE and COMMAND stay."""
_COMMAND_ROOM = 16
"""Columns the command keeps on a narrow terminal while there is a column to drop for it,
and at any width while NAME or INFO can be cut for it."""
_MIN_WIDTH = 10
"""plain.table's floor for a column it cuts."""
_CUTS = (
    ("command", _COMMAND_ROOM),
    ("name", _MIN_WIDTH),
    ("info", _MIN_WIDTH),
    ("command", _MIN_WIDTH),
)
"""Too wide for the terminal: the columns cut, in this order, each down to that many columns:
the command, then the free-text NAME and INFO, then the command again. The same at every
width, so a wider terminal never cuts the command harder: 80 columns and more cut it first,
to 10, and narrower ones NAME and INFO first, so `COLUMNS=80` showed less of it than 79."""


def parse_columns(text: str) -> tuple[str, ...]:
    """`id,state,TIME`: the columns named, in that order (any case). ValueError names the
    ones there are."""
    names = tuple(part.strip().lower() for part in text.split(","))
    unknown = next((name for name in names if name not in COLUMNS), None)
    if unknown is None:
        return names
    if unknown:
        said = f"unknown column {unknown!r}"
    elif any(names):  # `id,`: said `no column in 'id,'`, which names one (as --state says it)
        said = f"{text!r} has an empty word (a comma too many?)"
    else:
        said = f"no column in {text!r}"
    raise ValueError(f"{said}: the columns are {', '.join(COLUMNS)} (e.g. --columns id,state,time)")


def job_lines(
    jobs: list[Job],
    more: int = 0,
    filtered: bool = False,
    term: plain.Terminal | None = None,
    hint: str = "",
    all_jobs: bool = False,
    columns: Sequence[str] = DEFAULT_COLUMNS,
    earlier: int | None = 0,
    limit: int | None = None,
) -> list[str]:
    """`ls`: the jobs, and what the limit left out (`more`), `earlier` of them the oldest
    finished jobs, said above the rows, the rest the last waiting jobs to start, said below
    (core/nearest_now.py); `earlier` None: a daemon that does not say, its `more` said as it
    was. `filtered`: by state, project, sweep, name or time; with it or --all (`all_jobs`)
    a higher --limit shows the jobs left out (else `ls --all`). `limit`: where it counts
    every job listed (--all, --state), as running jobs are always listed, past it if need
    be (said so). Only a filter makes an empty listing "no jobs match": --all leaves nothing
    out. `hint`: what to try when none matched."""
    term = term or plain.Terminal()
    if not jobs:
        return [("no jobs match" if filtered else "no jobs") + (f": {hint}" if hint else "")]
    now = time.time()
    rows = [[COLUMNS[name].cell(job, now) for name in columns] for job in jobs]
    # At every width (not only below 80): a row of wide cells (8 GPUs, a priority of 9 digits)
    # cut the command to 10 at 80 columns where 79 dropped PRIO and kept it 16.
    columns, rows = _narrowed(term.width, columns, rows)
    chosen = [COLUMNS[name] for name in columns]
    shrink = [
        (i, least) for name, least in _CUTS for i, given in enumerate(columns) if given == name
    ]
    widest = {i: NAME_WIDTH for i, given in enumerate(columns) if given == "name"}
    headers = [column.header for column in chosen]
    lines = plain.table(term, headers, rows, shrink=shrink, widest=widest)
    if earlier is None:  # (an older daemon: its limit cut the listing's end)
        if more:
            lines.append(_more_at_the_end(more, filtered or all_jobs, "more"))
        return lines
    if earlier:  # under the header, where those rows would be
        whole = len(jobs) + more  # (a command to type: not grouped)
        said = plural(earlier, "earlier finished job")
        lines.insert(1, f"… {said} not shown (--limit {whole} shows them)")
    if more > earlier:
        lines.append(_more_at_the_end(more - earlier, filtered or all_jobs, "more waiting"))
    live = sum(job["state"] in ("running", "paused") for job in jobs)
    if limit is not None and live > limit:
        lines.append(f"… all {live:,} running or paused jobs shown, past --limit {limit}")
    return lines


def _narrowed(
    width: int, columns: Sequence[str], rows: list[list[plain.Cell]]
) -> tuple[Sequence[str], list[list[plain.Cell]]]:
    """The default columns that fit a terminal `width` columns wide, and their rows: those of
    _DROPPED go, empty ones first, then in that order, until the others fit cut (NAME and INFO
    to _MIN_WIDTH) with _COMMAND_ROOM for the command. Columns chosen (--columns) all stay."""
    if tuple(columns) != DEFAULT_COLUMNS:
        return columns, rows
    sizes = {
        name: plain.table_width([COLUMNS[name].header], [[row[i]] for row in rows])
        for i, name in enumerate(columns)
    }
    sizes["name"] = min(sizes["name"], NAME_WIDTH)

    def room(name: str) -> int:  # what it takes at the least
        if name == "command":
            return min(sizes[name], _COMMAND_ROOM)
        if name in ("name", "info"):
            return min(sizes[name], max(_MIN_WIDTH, len(COLUMNS[name].header)))
        return sizes[name]

    empty = [name for name in _DROPPED if sizes[name] == len(COLUMNS[name].header)]
    empty = [name for i, name in enumerate(columns) if name in empty and _blank(rows, i)]
    kept = list(columns)
    for name in [*empty, *(name for name in _DROPPED if name not in empty)]:
        if sum(room(kept_name) for kept_name in kept) + len(plain.GAP) * (len(kept) - 1) <= width:
            break
        kept.remove(name)
    at = [columns.index(name) for name in kept]
    return tuple(kept), [[row[i] for i in at] for row in rows]


def _blank(rows: list[list[plain.Cell]], index: int) -> bool:
    """Whether no row has text in the column."""
    cells = (row[index] for row in rows)
    return not any(cell if isinstance(cell, str) else cell[0] for cell in cells)


def _more_at_the_end(count: int, higher_limit: bool, what: str) -> str:
    """The last line: how many the limit left out at the end, and what shows them."""
    if higher_limit:
        return f"… and {count:,} {what} (a higher --limit shows them)"
    return f"… and {plural(count, 'more waiting job')} ({typed_name()} ls --all)"


def job_document(
    answer: dict[str, Any], csv_columns: Sequence[str] | None, waiting_limit: int | None
) -> None:
    """`ls --json` (`csv_columns` None) or `--csv`: the jobs of the daemon's answer on
    stdout, and on stderr one line when a --limit left some out (stdout stays the document),
    as the table says it in its own lines, with the limit that shows them: that many more
    than it counted, the jobs listed (with --all or --state), or `waiting_limit` (of the
    waiting jobs alone, without)."""
    jobs, more = answer["jobs"], answer.get("more", 0)
    warned([], answer, watched=False)
    if csv_columns is None:
        click.echo(indented(jobs))
    else:
        job_csv(jobs, csv_columns)
    if more:
        counted = len(jobs) if waiting_limit is None else waiting_limit
        said = f"{plural(more, 'more job')} not shown (--limit {counted + more} shows them)"
        click.echo(prefixed(said), err=True)


def warned(lines: list[str], answer: dict[str, Any], watched: bool) -> list[str]:
    """`lines`, and a herd.db replaced under the daemon said as `daemon status` says it (a
    listing from it is no longer what the file holds): on stderr, or above a watched table,
    whose redraw would wipe stderr's line."""
    said = [
        (kind, text)
        for kind, text in (
            ("warning", answer.get("database_replaced")),  # (absent from an older daemon)
            ("error", unreadable(answer)),
        )
        if text
    ]
    if watched:
        return [*(f"{kind}: {text}" for kind, text in said), *lines]
    for kind, text in said:
        click.echo(prefixed(kind, text), err=True)
    return lines


def warned_jobs(answer: dict[str, Any]) -> list[Job]:
    """The answer's jobs, its warnings said on stderr (`warned`)."""
    warned([], answer, watched=False)
    jobs: list[Job] = answer["jobs"]
    return jobs


def unreadable(answer: dict[str, Any]) -> str | None:
    """What the listing left out as the jobs' rows cannot be read (damaged_rows.unlisted)."""
    found = answer.get("unreadable") or []  # (absent from an older daemon)
    return unlisted([(job["id"], job["error"]) for job in found])


def job_csv(jobs: list[Job], columns: Sequence[str] = DEFAULT_COLUMNS) -> None:
    """A header row of the fields, then a row per job (none for no job: a script reads the
    header alone)."""
    chosen = [COLUMNS[name] for name in columns]
    writer = plain.csv_writer()
    writer.writerow([column.key for column in chosen])
    for job in jobs:
        writer.writerow(
            [column.value(job) if column.value else job.get(column.key) for column in chosen]
        )
