"""The one small exception hierarchy: every message says what is wrong and what to do."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class HerdError(Exception):
    """A problem to show the user as one line (never a traceback)."""

    status = 400

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its arguments and attributes, rebuilt without its `__init__`: one that
        takes more than the message (JobFailed's job and state) or asks the daemon raised
        TypeError when unpickled, and a ProcessPoolExecutor's worker that raised it was
        "terminated abruptly" (BrokenProcessPool), the error itself lost."""
        return rebuilt, (type(self), self.args), self.__dict__ or None

    def _render_traceback_(self) -> list[str]:
        """What IPython and Jupyter show of it (their hook): the traceback down to the user's
        line, without gpuherd's own frames under it."""
        from gpuherd.notebook_tracebacks import render

        return render(self)


def rebuilt(kind: type[HerdError], args: tuple[Any, ...]) -> HerdError:
    """A HerdError of `kind` with `args`, as it was pickled (its attributes are set after)."""
    error = kind.__new__(kind)
    error.args = args
    return error


class NotFound(HerdError):
    status = 404


class Forbidden(HerdError):
    status = 403


class InvalidValue(HerdError):
    """A request's value that is not one the daemon takes (`?state=bogus`, `?sort=nope`): 422,
    as FastAPI answers one of the wrong type (`?limit=x`). The line names what it is and
    what to give instead."""

    status = 422


def unknown_setting(name: str, settings: Iterable[str]) -> InvalidValue:
    """A setting `gpuherd config` does not have, in one wording whoever finds it: the
    daemon refusing `config set` (config.py), the CLI `config get` (from the daemon's list).
    Another tool's setting (gpulimit's `set MAX_ERR_TIMES 3`, pueue's `callback`) is
    answered with the setting that does its job."""
    theirs = THEIR_SETTINGS.get(name.upper())
    if theirs is not None:
        hint, whose = theirs
        return InvalidValue(f"unknown setting '{name}': {hint} ({whose})")
    return InvalidValue(f"unknown setting '{name}': use one of {', '.join(settings)}")


_ON_END = "use on-end: gpuherd config set on-end CMD runs CMD each time a job ends"
THEIR_SETTINGS = {
    "MAX_ERR_TIMES": (
        "use retries: MAX_ERR_TIMES 3 (three runs in all) is retries 2",
        "gpulimit's MAX_ERR_TIMES",
    ),
    "SAFETY_KEEP_MEMORY": (
        "use keep-ram: SAFETY_KEEP_MEMORY 0.2 is keep-ram 20%",
        "gpulimit's SAFETY_KEEP_MEMORY",
    ),
    "SAFETY_KEEP_GPU_MEMORY": (
        "use keep-free for the share of each GPU's memory kept free "
        "(SAFETY_KEEP_GPU_MEMORY 0.5 is keep-free 50%), with --mem SIZE on the jobs that may "
        "share a GPU: a job without --mem takes a whole GPU slot",
        "gpulimit's SAFETY_KEEP_GPU_MEMORY",
    ),
    "TIMER_POLLING_TIME": (
        "leave it out: gpuherd starts a job as soon as a GPU frees, with no polling",
        "gpulimit's TIMER_POLLING_TIME",
    ),
    "CALLBACK": (_ON_END, "pueue's callback"),
    "TS_ONFINISH": (_ON_END, "task-spooler's TS_ONFINISH"),
    "TS_SLOTS": ("use max-running: TS_SLOTS=4 is max-running 4", "task-spooler's TS_SLOTS"),
    "TS_MAXFINISHED": (
        "leave it out: finished jobs stay until gpuherd clean removes them (clean --state "
        "succeeded keeps the failures); gpuherd ls shows the 10 latest, ls --all every one",
        "task-spooler's TS_MAXFINISHED",
    ),
}
"""Other tools' settings (gpulimit's `gpulimit set NAME VALUE`, pueue's pueue.yml, task-spooler's
variables), by their name in capitals: what does their job here, and whose they are."""


class Conflict(HerdError):
    """The request is valid but the job's state does not allow it."""

    status = 409


class OtherHomesDaemon(HerdError):
    """The daemon that answered serves another home than the one asked for (home_header.py:
    a GPUHERD_SOCKET shared by two homes): nothing was done. Not a DaemonError, which says
    that none runs: a start would make the home, then find the socket taken."""

    status = 421


class StoreError(HerdError):
    """The database cannot be used (damaged, newer schema, unsupported file system)."""

    status = 500


class DiskFull(HerdError):
    """The disk under the database has no room for a change: nothing of it was stored."""

    status = 507


class DaemonError(HerdError):
    """The daemon cannot be reached, started or stopped."""

    status = 503


class NotRunning(DaemonError):
    """No daemon listens on the home's socket."""


class StoppedMeanwhile(NotRunning):
    """No daemon listens, but one held the home's lock as the client looked, and let go of
    it while the client waited for its socket: it stopped meanwhile (for another call: two
    restarts at once), or died as it started. Not "no daemon was running" to a restart."""


class LostConnection(DaemonError):
    """The daemon closed the connection before it answered (it went: stopped, or crashed)."""


class NoAnswer(DaemonError):
    """A daemon listens on the home's socket but did not answer in the time given."""


class Suspended(NoAnswer):
    """The daemon that holds the home is stopped (SIGSTOP, Ctrl-Z): it answers nothing until
    it is resumed (`kill -CONT`), so no wait for it is worth going on."""


_STATUS_ERRORS: dict[int, type[HerdError]] = {
    404: NotFound,
    409: Conflict,
    421: OtherHomesDaemon,
    422: InvalidValue,  # a value of the request refused: a command may name its option
    503: DaemonError,
}


def refusal(status: int | None, message: str) -> HerdError:
    """The error of an HTTP status: an answer's (client.py), or a verb's refusal of one job
    (its result's `status`: the Python API's `job.edit` raises what `submit` raises)."""
    return _STATUS_ERRORS.get(status or 0, HerdError)(message)
