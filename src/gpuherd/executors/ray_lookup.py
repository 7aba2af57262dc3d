"""Finding a job's actor again by its name (daemon side), for a restart's recovery, which
re-attaches it. (A listing asks no actor anything: the daemon watches every attempt it knows
of, a held job's unwatched run too, so it knows whether each runs.)
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import ray

from gpuherd.executors.ray_errors import first_line

log = logging.getLogger("gpuherd.ray")

LOOKUP_TIMEOUT = 10.0
"""Seconds a restart's recovery gives a found actor to answer."""

_ray: Any = ray  # ray.get's overloads do not type an actor method's result


def reattach(name: str, namespace: str) -> Any | None:
    """The job actor `name`, found and answering (a restart's recovery follows it again);
    None when there is none. One that does not answer is killed: never left to run on
    unwatched (a silent second run after a retry)."""
    try:
        actor = _ray.get_actor(name, namespace=namespace)
    except ValueError:
        return None  # no such actor: it ended, or was never created
    try:
        info: dict[str, Any] = _ray.get(actor.info.remote(), timeout=LOOKUP_TIMEOUT)
    except Exception as exc:
        log.warning("job actor %s does not answer (%s); killing it", name, first_line(exc))
        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)
        return None
    log.info("found job actor %s on %s (node %s)", name, info["host"], info["node_id"][:8])
    return actor
