"""The Python API in a notebook (Jupyter, IPython): what it shows of a job, a listing and a
sweep (a job's id, name and state, not `<gpuherd.Job 7>` alone; HTML tables where a notebook
renders them), `job.done()` as a future has it, and a Ctrl-C in a wait that says the jobs go
on. pyapi.py's `Job` and `Herd.wait`, pyapi_jobs' `JobList` and pyapi_sweep's `Sweep` take
them from here."""

from __future__ import annotations

import copy
import functools
import html
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuherd.errors import HerdError, NotFound

if TYPE_CHECKING:
    from gpuherd.client import Client
    from gpuherd.pyapi import Herd

ENDED = frozenset({"succeeded", "failed", "killed", "cancelled", "lost"})
SHOWN_ROWS = 50  # a table's rows, at most: the rest is said in one line
_COMMAND_CHARS = 80
SHOWN_WITHIN = 2.0
"""Seconds what a notebook shows (a job's repr, a sweep's table) waits for the daemon's answer:
one that serves answers in milliseconds. A hung one held a repr the client's 60 s, and a
`%xmode Verbose` traceback that much for each frame with a job among its variables."""


def job_text(job_id: int, row: Mapping[str, Any] | None) -> str:
    """`<gpuherd.Job 7 'train' failed (exit 1)>`: a job's id, name and state (its row as the
    daemon gave it), or `<gpuherd.Job 7>` without one."""
    if row is None:
        return f"<gpuherd.Job {job_id}>"
    name = f" {row['name']!r}" if row.get("name") else ""
    return f"<gpuherd.Job {job_id}{name} {row.get('state')}{_how(row)}>"


def _how(row: Mapping[str, Any]) -> str:
    """How a job that did not succeed ended, as `gpuherd ls` says it: "(exit 1)"."""
    if row.get("state") not in ENDED - {"succeeded"}:
        return ""
    if row.get("outcome") == "exit" and row.get("exit_code") is not None:
        return f" (exit {row['exit_code']})"
    if row.get("outcome") == "signal" and row.get("signal") is not None:
        return f" (signal {row['signal']})"
    return ""


class JobDisplay:
    """Part of `Job`: its repr, its HTML row (what a notebook shows of it), `done()`, and
    equality by job: two handles on job 7 of one daemon are equal (`job in herd.jobs()`)."""

    herd: Herd
    id: int

    if TYPE_CHECKING:

        def info(self) -> dict[str, Any]: ...

    def done(self) -> bool:
        """True once the job has ended, whichever way (succeeded, failed, killed, cancelled,
        lost): `result()` then answers at once. As a future's `done()`, it does not wait."""
        return self.info()["state"] in ENDED

    def _row_now(self) -> dict[str, Any]:
        """The job as the daemon has it now, or why it cannot say (a repr never raises)."""
        try:
            return dict(quick(self.herd.client).get(f"/jobs/{self.id}"))
        except NotFound:
            return {"id": self.id, "state": "(no such job)"}
        except HerdError:  # (no daemon, or one that does not answer)
            return {"id": self.id, "state": "(state unknown: no daemon answered)"}

    def __repr__(self) -> str:
        return job_text(self.id, self._row_now())

    def _repr_html_(self) -> str:
        return jobs_table([self._row_now()])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JobDisplay):
            return NotImplemented
        return (self.id, one_name(self.herd.client.home)) == (
            other.id,
            one_name(other.herd.client.home),
        )

    def __hash__(self) -> int:
        return hash((self.id, one_name(self.herd.client.home)))


def quick(client: Client) -> Client:
    """`client`, waiting SHOWN_WITHIN seconds for an answer, and not for a daemon that holds
    the home but does not listen (it restarts): for what a notebook shows."""
    shown = copy.copy(client)
    shown.timeout, shown.waits_for_socket = SHOWN_WITHIN, False
    return shown


@functools.lru_cache(maxsize=64)
def one_name(home: Path) -> Path:
    """A home's one name, its links and `..` resolved: handles from a herd reached as ~/herd
    and from one reached as the folder it links to (or a relative name) are on one daemon's
    jobs. Cached: `job in herd.jobs()` compares every job's."""
    return home.resolve()


def jobs_text(rows: Iterable[tuple[int, Mapping[str, Any] | None]], more: int) -> str:
    shown = ", ".join(job_text(job_id, row) for job_id, row in rows)
    return f"[{shown}]" + (f" (and {more} more: limit= shows them)" if more else "")


def pretty_jobs(
    rows: Sequence[tuple[int, Mapping[str, Any] | None]], more: int, printer: Any
) -> None:
    """IPython's text of a listing (`printer`: its RepresentationPrinter, untyped): one job a
    line, as it shows a long list."""
    with printer.group(1, "[", "]"):
        for index, (job_id, row) in enumerate(rows):
            if index:
                printer.text(",")
                printer.breakable()
            printer.text(job_text(job_id, row))
    if more:
        printer.text(f" (and {more} more: limit= shows them)")


_JOB_COLUMNS = ("id", "name", "state", "gpus", "project", "sweep", "seconds", "command")


def jobs_table(rows: Iterable[Mapping[str, Any]], more: int = 0) -> str:
    """An HTML table of jobs' rows (as `gpuherd ls --json` has them), for a notebook."""
    rows = list(rows)
    body = [_cells({key: _job_cell(key, row) for key in _JOB_COLUMNS}) for row in rows]
    more += max(0, len(rows) - SHOWN_ROWS)
    return _table(_JOB_COLUMNS, body[:SHOWN_ROWS], f"and {more} more" if more else "")


def _job_cell(key: str, row: Mapping[str, Any]) -> str:
    value = row.get(key)
    if key == "state":
        return f"{value}{_how(row)}"
    if key == "gpus":  # how many it asks for, and which it has: "2 (on 0,1)"
        asked = str(row.get("gpus_requested", ""))
        return f"{asked} (on {','.join(map(str, value))})" if value else asked
    if key == "seconds" and isinstance(value, int | float):
        return f"{value:.1f}"
    if key == "command" and isinstance(value, str) and len(value) > _COMMAND_CHARS:
        return value[: _COMMAND_CHARS - 1] + "…"
    return "" if value is None else str(value)


def sweep_table(status: Mapping[str, Any], submitted: str) -> str:
    """A sweep's results table (`sweep.status()`), as HTML: a row a point, its varying
    parameters, state, job and seconds, and its metrics."""
    varying, metrics = list(status.get("varying", [])), list(status.get("metric_keys", []))
    columns = (*varying, "state", "job", "seconds", *metrics)
    body = []
    for point in status.get("rows", [])[:SHOWN_ROWS]:
        cells = {key: point.get("params", {}).get(key) for key in varying}
        seconds = point.get("seconds")
        cells |= {"state": point.get("state"), "job": point.get("job_id")}
        cells["seconds"] = f"{seconds:.1f}" if isinstance(seconds, int | float) else None
        cells |= {key: point.get("metrics", {}).get(key) for key in metrics}
        body.append(_cells({k: "" if v is None else str(v) for k, v in cells.items()}))
    counts = ", ".join(f"{n} {state}" for state, n in sorted(status.get("counts", {}).items()))
    left = int(status.get("matched", len(body))) - len(body)
    title = f"sweep {status.get('name')}: {counts or 'no points'}" + submitted
    title += f" (results in {status.get('results_dir')})"
    table = _table(columns, body, f"and {left} more points: sweep.results()" if left else "")
    return f"<p>{html.escape(title)}</p>{table}"


def _cells(values: Mapping[str, str]) -> str:
    return "".join(f"<td>{html.escape(value)}</td>" for value in values.values())


def _table(columns: Iterable[str], rows: list[str], more: str) -> str:
    head = "".join(f"<th>{html.escape(column)}</th>" for column in columns)
    body = "".join(f"<tr>{row}</tr>" for row in rows)
    tail = f"<p>… {html.escape(more)}</p>" if more else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}"


def wait_interrupted(ids: list[int]) -> KeyboardInterrupt:
    """What Ctrl-C (or a notebook's "interrupt the kernel") in a wait raises: it stopped the
    wait, not the jobs, and says so; `ids` are the jobs waited for. A KeyboardInterrupt
    exactly, not a subclass: Python exits with the SIGINT status (130 in a shell) only for
    that, so a script stopped so is seen as interrupted (a subclass made it exit 1, and a
    shell's loop went on). IPython shows it without gpuherd's frames (the socket read the
    Ctrl-C came in): its `_render_traceback_` is the instance's."""
    kill = " ".join(map(str, ids[:10]))
    if len(ids) == 1:
        said = f"job {ids[0]}: Ctrl-C stops the wait, not the job, which goes on running"
        said += f" (job.kill() or `gpuherd kill {kill}` stops it)"
    else:
        said = f"jobs {_some(ids)}: Ctrl-C stops the wait, not the jobs, which go on"
        said += f" running (herd.job(ID).kill() or `gpuherd kill {kill}` stops them)"
    interrupt = KeyboardInterrupt(f"stopped waiting for {said}")
    interrupt.ids = ids  # type: ignore[attr-defined]
    interrupt._render_traceback_ = functools.partial(_rendered, interrupt)  # type: ignore[attr-defined]
    return interrupt


def followed_texts(pieces: Iterator[tuple[str, Any]], job_id: int) -> Iterator[str]:
    """A followed log's text (`Job.follow`); Ctrl-C says, as in the other waits, that the
    job goes on (it was a traceback of the socket read it came in)."""
    try:
        yield from (str(piece) for kind, piece in pieces if kind == "text")
    except KeyboardInterrupt:
        raise wait_interrupted([job_id]) from None


def _rendered(error: BaseException) -> list[str]:
    from gpuherd.notebook_tracebacks import render

    return render(error)


def _some(ids: list[int]) -> str:
    shown = ", ".join(map(str, ids[:10]))
    return shown + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
