"""Stopping, pausing and resuming a Ray attempt (daemon side): part of RayExecutor (ray.py).

A stop is the actor's `terminate(grace)` (its supervisor sends SIGTERM, then SIGKILL after
the grace), and, if the actor has not ended within the grace plus kill_margin(), `ray.kill` of
the actor (the supervisor, told by the kernel, kills the whole job). While the cluster does
not answer, either may not get through: `ray.kill` is refused at once (ray_link.py), and a
`terminate` sent to an actor out of reach may fail. Neither is then forgotten: each stays
owed (`Run.stop`, `Run.kill_owed`) and is sent again once the actor answers a pull or the
cluster answers again (`deliver`), the SIGKILL still due at the grace's end counted from the
stop's request (a stop late by more than its grace kills at once), as for a local job.
A stop asked again with another grace (`kill --grace 0` of a job stopping already) goes to the
actor too, once the one before it has been answered: the supervisor moves its SIGKILL, and
sends no second SIGTERM.
A stop asked while the actor is still being created (RayExecutor.launch) kills it once it is:
its job has not started, and must not.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import os
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import ray

from gpuherd.executors.ray_errors import first_line
from gpuherd.executors.ray_link import ClusterDown, ClusterLink

log = logging.getLogger("gpuherd.ray")


def kill_margin() -> float:
    """Seconds past the grace period after which an unanswering actor is killed outright: 5 s.
    (GPUHERD_TEST_KILL_MARGIN, seconds, is the tests': one that lets a kill fall due while the
    cluster is away would wait out the whole 5 s. Read at each use, not at import: their
    daemons are forks of a process that has imported gpuherd, tests/forks.py.)"""
    return float(os.environ.get("GPUHERD_TEST_KILL_MARGIN") or 5.0)


SENDER = uuid.uuid4().hex
"""This daemon, to the actors: with the number each signal gets, the stamp by which an actor
applies this daemon's signals in the order they were sent (ray_actor.supersedes)."""
_signal_numbers = itertools.count(1)


class Sent(enum.Enum):
    OWED = "owed"
    """Not sent, or its sending failed: sent (again) once the actor answers."""
    SENDING = "sending"
    """Sent, its answer awaited (an actor frozen or cut off answers once back, or fails)."""
    DONE = "done"
    """The actor answered it."""


@dataclass
class Stop:
    """A stop's SIGTERM to the actor, and when its SIGKILL is due (monotonic)."""

    kill_due: float
    sent: Sent = Sent.OWED
    on_sent: Callable[[], object] | None = None
    """Called once the actor took the SIGTERM (Executor.terminate's `sent`)."""

    def grace_left(self) -> float:
        return max(0.0, self.kill_due - time.monotonic())


class Stopping:
    """Part of RayExecutor (ray.py), which sets these attributes (a Run: ray_follow.py)."""

    link: ClusterLink
    _runs: dict[int, Any]

    def signal(self, pid: int, signum: int) -> None:
        run = self._runs.get(pid)
        if run is None:
            return
        if run.actor is None:
            run.signal_asked = signum  # sent once it is found (`_attach`)
        else:
            self._send_signal(run, signum)

    def _send_signal(self, run: Any, signum: int) -> None:
        """Not waited for: the actor drops a signal that comes after a later one. An actor
        made by an older gpuherd (a job that ran on across the daemon's upgrade) has only
        `signal(signum)`, in no guaranteed order: it gets that rather than nothing."""
        with contextlib.suppress(Exception):
            in_order = getattr(run.actor, "signal_in_order", None)  # (a handle lists its methods)
            if in_order is None:
                ref = run.actor.signal.remote(signum)
            else:
                ref = in_order.remote(signum, SENDER, next(_signal_numbers))
            run.signal_sent = (ref, time.monotonic())  # (RayExecutor.close waits for it)

    def terminate(
        self, pid: int, grace: float, begun: bool = False, sent: Callable[[], object] | None = None
    ) -> None:
        run = self._runs.get(pid)
        if run is None:
            return
        if run.creation is not None:
            # Its actor is still being created: no job runs yet, and none must. It is killed
            # once created (`_attach`); never created, the attempt ends stopped (`_created`).
            run.killed = run.kill_owed = True
            return
        # A stop under way (`begun`: its SIGTERM went, or is on its way) goes again with the
        # new grace: the supervisor then moves its SIGKILL and sends no second SIGTERM
        # (ray_supervisor._stop). Before, it kept the first grace: after `kill --grace 0`
        # the job's processes outlived the actor's kill, on GPUs given to the next job.
        before = run.stop
        if begun:  # (the note that the SIGTERM went, if it has not yet: still to be written)
            sent = before.on_sent if before is not None and before.sent is not Sent.DONE else None
        run.stop = Stop(time.monotonic() + grace, on_sent=sent)
        self.deliver(run)  # (or once its actor is found: `_attach`)
        if run.kill_timer is not None:
            run.kill_timer.cancel()
        loop = asyncio.get_running_loop()
        run.kill_timer = loop.call_later(grace + kill_margin(), self._kill_actor, pid)

    def _kill_actor(self, pid: int) -> None:
        run = self._runs.get(pid)
        if run is None or run.done:
            return
        log.warning("job actor %s did not stop within its grace period; killing it", run.name)
        run.killed = run.kill_owed = True
        self.deliver(run)

    def deliver(self, run: Any) -> None:
        """Send what is owed to the run's actor: its kill, else its stop's SIGTERM (with the
        grace left). Called when asked, and again whenever the actor or the cluster answers."""
        if run.actor is None or run.done:
            return  # (a run not found yet: `_attach` calls this once it is)
        if run.kill_owed:
            run.kill_owed = (sent := self._kill(run.actor)) is None
            if sent is not None:
                loop = asyncio.get_running_loop()

                def failed(done: Future[None]) -> None:  # (in the call's thread)
                    if done.exception() is not None:  # the GCS took it, then failed: owed
                        with contextlib.suppress(RuntimeError):  # (the loop has ended)
                            loop.call_soon_threadsafe(setattr, run, "kill_owed", True)

                sent.add_done_callback(failed)
        elif run.stop is not None and run.stop.sent is Sent.OWED and not self._stopping(run):
            run.stop.sent = Sent.SENDING
            run.stop_task = asyncio.ensure_future(self._send_stop(run, run.stop))

    @staticmethod
    def _stopping(run: Any) -> bool:
        """Whether a stop sent to the run's actor awaits its answer: a later one waits for it,
        so that the actor, whose methods run in threads in no set order, takes the last grace
        asked last."""
        return run.stop_task is not None and not run.stop_task.done()

    async def _send_stop(self, run: Any, stop: Stop) -> None:
        try:
            await run.actor.terminate.remote(stop.grace_left())
        except Exception as exc:  # out of reach (ActorUnavailableError, ...): owed again
            if stop is run.stop and not run.done:
                log.warning("job actor %s: stop not delivered (%s)", run.name, first_line(exc))
            stop.sent = Sent.OWED
        else:
            stop.sent = Sent.DONE
            if stop.on_sent is not None:
                stop.on_sent()
        if stop is not run.stop:  # a later stop waited for this one (`_stopping`): its turn
            asyncio.get_running_loop().call_soon(self.deliver, run)

    def _kill(self, actor: Any) -> Future[None] | None:
        """Kill an actor (frees its GPUs), in a thread, not waited for: None when refused at
        once (the cluster away: `deliver`, or `_cluster_back`, does it later)."""
        try:
            return self.link.begin(lambda: ray.kill(actor, no_restart=True))
        except ClusterDown:
            return None
