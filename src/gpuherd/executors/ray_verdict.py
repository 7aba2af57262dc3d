"""Ray's verdict on a job's actor that died without an exit status (daemon side).

The daemon learns of such a death when a log pull fails, and that may be before Ray itself
counts the actor dead: a worker whose node's raylet was killed can end on its own, while
Ray counts the node, and its actors, dead only once the node has missed its health checks
(about 15 s with Ray's defaults). Ended then, the attempt's retry could be placed on the
node Ray still listed, and its stderr and history said only "died unexpectedly": the
supervisor's note that the raylet died (ray_supervisor.py) reaches the daemon through a
pull, which a worker that has ended never answers.

So the daemon asks the cluster's GCS, every VERDICT_POLL s, until it counts the actor dead,
and at most VERDICT_WAIT s: Ray's words for why (`The actor died because its node has died`,
a worker killed, out of memory) go to the attempt's stderr and decide the history's
`lost:` words (ray_errors.lost_why). An actor the GCS counts dead already (the usual case:
a live raylet reports its worker's death at once) costs one call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Any

from gpuherd.core.text import clean_lines
from gpuherd.executors.ray_link import CALL_TIMEOUT, ClusterLink

VERDICT_WAIT = 60.0
"""Seconds the daemon waits for the GCS to count a dead job actor dead (a node's death takes
Ray about 15 s to notice with its default health checks)."""
VERDICT_POLL = 0.5


def death_cause(actor_id: str) -> str | None:
    """Ray's words for why the actor `actor_id` (hex) died, once the GCS counts it dead (""
    when it says nothing, or does not know the actor); None while it counts it alive."""
    from ray._private import state  # (Ray's own reader of its actor table)

    info: dict[str, Any] = state.actors(actor_id=actor_id)
    if not info:
        return ""
    if info.get("State") != "DEAD":
        return None
    cause = info.get("DeathCause")
    which = cause.WhichOneof("context") if cause is not None else None
    if which is None:
        return ""
    return clean_lines(str(getattr(getattr(cause, which), "error_message", ""))).strip()


async def verdict(link: ClusterLink, actor: Any, stopped: Callable[[], bool]) -> str:
    """Ray's words for why `actor` died, once its GCS counts it dead; "" when they cannot be
    had: the cluster does not answer, VERDICT_WAIT has passed, the job was killed meanwhile
    (`stopped`: its end is the kill's), or the handle is not a Ray actor's (tests' fakes)."""
    actor_id = getattr(getattr(actor, "_actor_id", None), "hex", None)
    if actor_id is None:
        return ""
    ask = partial(death_cause, actor_id())
    deadline = asyncio.get_running_loop().time() + VERDICT_WAIT
    while not stopped() and asyncio.get_running_loop().time() < deadline:
        try:
            said = await asyncio.wait_for(asyncio.wrap_future(link.begin(ask)), CALL_TIMEOUT)
        except Exception:  # ClusterDown, a GCS error, a deadline: no verdict to be had
            return ""
        if said is not None:
            return said
        await asyncio.sleep(VERDICT_POLL)
    return ""
