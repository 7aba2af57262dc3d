"""Finding this home's job actors again by name (daemon side), for a restart's recovery.

Recovery asks, attempt by attempt, whether each runs (`RayExecutor.is_running`), and each
answer needs the cluster's GCS, which may be slow or away (its head rebooting). Asked one by
one, N attempts took N x 10 s, and a `get_actor` the GCS did not answer never returned (the
daemon's Ray client waits for its GCS for ever: ray_link.RECONNECT_TIMEOUT), so `daemon
start` hung. So the first question lists this home's actors and looks them all up at once,
each in a thread of its own, and every answer is waited for until one deadline,
LOOKUP_TIMEOUT after the first question.

An actor neither found nor found gone by then is not counted lost on a guess: its job would
run twice (a retry while it runs on). Its attempt is taken as running and followed as an
actor unheard while the head is away is (ray.py, `_attach`): found, it is followed as any;
found gone, lost; the cluster away for GPUHERD_RAY_LOST_AFTER s, lost (ClusterLink.gives_up).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, wait
from functools import partial
from typing import Any

import ray

from gpuherd.executors.ray_link import ClusterDown, ClusterLink

LOOKUP_TIMEOUT = 10.0
"""Seconds a restart's recovery gives the cluster to find the actors of all its attempts."""

Lookup = Future[Any]
"""A lookup's answer: the actor's handle, or None when there is none."""

_ray: Any = ray  # ray.util is not in Ray's type hints


def find(name: str, namespace: str) -> Any | None:
    """The job actor `name` (its handle), or None when there is none: it ended, or was never
    created. Whether it answers, its pulls tell (ray.py, `_follow`)."""
    try:
        return _ray.get_actor(name, namespace=namespace)
    except ValueError:
        return None


def home_actors(namespace: str, prefix: str) -> list[str]:
    """The names of this home's job actors that the cluster knows (a call to the GCS)."""
    named = _ray.util.list_named_actors(all_namespaces=True)
    return [
        str(entry["name"])
        for entry in named
        if entry.get("namespace") == namespace and str(entry.get("name", "")).startswith(prefix)
    ]


def look_up(link: ClusterLink, name: str, namespace: str) -> Lookup:
    """`find(name)`, begun in a thread of its own; failed at once while the cluster does not
    answer."""
    return _begun(link, partial(find, name, namespace))


def answered(lookup: Lookup) -> bool:
    return lookup.done() and lookup.exception() is None


class Lookups:
    """A restart's lookups of this home's job actors: all begun at once, waited for until
    one deadline."""

    def __init__(self, link: ClusterLink, namespace: str, prefix: str) -> None:
        self._link, self._namespace = link, namespace
        self._deadline = time.monotonic() + LOOKUP_TIMEOUT
        self._listing = _begun(link, partial(home_actors, namespace, prefix))
        wait([self._listing], LOOKUP_TIMEOUT)
        self._listed_in_time = answered(self._listing)
        names = self._listing.result() if self._listed_in_time else []
        self._lookups = {name: look_up(link, name, namespace) for name in names}

    def listed(self) -> list[str]:
        """The names the listing found (raises what it raised, or ClusterDown when it had
        not answered by the deadline)."""
        if not self._listing.done():
            raise ClusterDown("no answer within the time given to a restart's recovery")
        names: list[str] = self._listing.result()
        return names

    def wait(self, name: str) -> Lookup:
        """The lookup of the actor `name`, answered, or as it is at the deadline (not done,
        or failed: the cluster could not say in time)."""
        lookup = self._lookups.get(name)
        if lookup is None:
            if self._listed_in_time:  # not listed: there is none
                lookup = Future()
                lookup.set_result(None)
            else:  # (begun late: it gets what is left of the time, if any)
                lookup = look_up(self._link, name, self._namespace)
            self._lookups[name] = lookup
        wait([lookup], max(0.0, self._deadline - time.monotonic()))
        return lookup


def _begun(link: ClusterLink, fn: partial[Any]) -> Lookup:
    try:
        return link.begin(fn)
    except ClusterDown as exc:
        failed: Lookup = Future()
        failed.set_exception(exc)
        return failed
