"""The one small exception hierarchy: every message says what is wrong and what to do."""

from __future__ import annotations

from collections.abc import Iterable


class HerdError(Exception):
    """A problem to show the user as one line (never a traceback)."""

    status = 400


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
    daemon refusing `config set` (config.py), the CLI `config get` (from the daemon's list)."""
    return InvalidValue(f"unknown setting '{name}': use one of {', '.join(settings)}")


class Conflict(HerdError):
    """The request is valid but the job's state does not allow it."""

    status = 409


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


class NoAnswer(DaemonError):
    """A daemon listens on the home's socket but did not answer in the time given."""
