"""Following a job's log from the client side (`gpuherd log -f`, `Job.follow()`).

A follow outlives the daemon: when the connection drops (a crash, a restart, `daemon stop`)
the next daemon is waited for, as `wait` does, and the follow resumes at the attempt and byte
it had reached, so no text is lost or printed twice. A daemon that holds the home but stopped
answering (SIGSTOP, or hung: its keep-alives stopped, keep_alive.py) ends the follow at once,
with a line that names it and what to do (NoAnswer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from gpuherd import client as client_module
from gpuherd.client import Client
from gpuherd.errors import DaemonError, NoAnswer, NotFound, NotRunning
from gpuherd.typed_name import as_typed

Piece = tuple[str, Any]
"""("text", new log text), ("attempt", number) when a later attempt's log begins,
("deleted", path) when the log followed was deleted under the job (read on all the same), or
("truncated", path) when it was emptied or cut under the follow (read on from its start)."""


def follow_log(
    client: Client,
    job_id: int,
    stream: str = "stdout",
    attempt: int | None = None,
    lines: int | None = None,
    on_gone: Callable[[], None] | None = None,
    raw: bool = False,
    again: str | None = None,
) -> Iterator[Piece]:
    """The job's log as it comes (its `attempt` only, if given; from the last `lines` lines,
    if given) until the job ends; NotFound when the job is removed before it ran (`gpuherd rm`
    of a held job). A daemon that goes away midway gets RESTART_GRACE seconds to come back
    (`on_gone` is called when it went); none running at the start is an error at once.
    `raw`: bytes that are not UTF-8 come as surrogates (surrogateescape), to be written back
    as they were; else as U+FFFD. `again`: what follows on, as the caller's user types it,
    in the line that ends a follow (None: `gpuherd log -f ID`; the Python API's differs)."""
    again = again or f"`gpuherd log -f {job_id}`"
    query: dict[str, Any] = {"stream": stream, "attempt": attempt, "lines": lines}
    query["raw"] = raw or None  # (left out when not asked: as older clients ask)
    resume: dict[str, Any] | None = query  # where to go on if the daemon goes away now
    first = True
    while True:
        try:
            for event, data in client.stream(f"/jobs/{job_id}/log/follow", **query):
                first = False
                if event == "end":
                    # Removed before any attempt began: no log came, nor will. (Removed once
                    # an attempt ran, ended or held for a retry: its log was followed, whole.)
                    if data.get("state") == "removed" and not data.get("ran"):
                        raise NotFound(f"job {job_id} was removed before it ran: it has no log")
                    return
                if event == "deleted":  # (the follow reads on: the text is still to come)
                    yield "deleted", data["path"]
                elif event in ("attempt", "truncated"):  # (read on from that log's start)
                    yield event, data["path" if event == "truncated" else "attempt"]
                    resume = _resume_at(stream, attempt, data.get("attempt"), 0)
                elif event == "message":
                    yield "text", data["text"]
                    resume = _resume_at(stream, attempt, data.get("attempt"), data["offset"])
            lost = DaemonError("the daemon stopped")  # its stream ended without an `end`
        except DaemonError as exc:
            if (ending := _ends_follow(exc, first, job_id, again)) is not None:
                raise ending from None
            lost = exc
        first = False
        if resume is None:
            raise lost  # (an older daemon's follow: where to go on is not known)
        query = {**resume, "raw": raw or None}
        if not client.comes_back(None, on_gone):
            raise DaemonError(none_came_back(job_id, again)) from lost


def none_came_back(job_id: int, again: str) -> str:
    """The line for a follow whose daemon went away and none came back: the lost
    connection's own line ("lost the connection to the daemon: ...") is its cause."""
    within = f"{client_module.RESTART_GRACE:.0f} s"  # (read when said: a test shortens it)
    how = "start it again (`gpuherd daemon start`), then "
    how += f"{again} follows on"
    return (
        f"stopped following job {job_id}'s log: the daemon went away, and no daemon came back "
        f"within {within}: {as_typed(how)}"
    )


def _ends_follow(exc: DaemonError, first: bool, job_id: int, again: str) -> DaemonError | None:
    """The error that ends a follow at once, without waiting for a daemon to come back: none
    ran to begin with, or one holds the home but does not answer (stopped or hung)."""
    if isinstance(exc, NoAnswer):
        return stopped_answering(exc, job_id, again)
    return exc if first and isinstance(exc, NotRunning) else None


def stopped_answering(exc: NoAnswer, job_id: int, again: str) -> NoAnswer:
    """The line for a follow whose daemon stopped answering (its keep-alives stopped, or it
    is seen stopped): it held `log -f` and `job.follow()` for ever. Waiting for it as for a
    restart would not do: it still holds the home, and no other daemon can take it over."""
    return type(exc)(
        f"stopped following job {job_id}'s log: {exc}; "
        + as_typed(f"`gpuherd daemon status` looks again, {again} follows on")
    )


def _resume_at(
    stream: str, attempt: int | None, number: int | None, offset: int
) -> dict[str, Any] | None:
    """The query that goes on from byte `offset` of attempt `number`'s log; None from an
    older daemon, which does not say which attempt its text came from."""
    if number is None:
        return None
    if attempt:  # that attempt only
        return {"stream": stream, "attempt": attempt, "offset": offset}
    return {"stream": stream, "from_attempt": number, "offset": offset}
