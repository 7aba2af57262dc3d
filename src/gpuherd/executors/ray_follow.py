"""Following a Ray attempt while it runs (daemon side): part of RayExecutor (ray.py).

A follow loop per attempt long-polls the job's actor for new log bytes and appends them to
the attempt folder here (so `gpuherd log -f` works while the job runs), then writes the exit
status there and kills the actor, which frees its GPUs in Ray. An actor out of reach (a busy
node, the cluster's head away) is lost only if it stays so (ClusterLink.gives_up): it may
come back with the head. One that a restart's recovery could not find in time is followed
from its lookup on (`_attach`, ray_lookup.py); one just launched, from its actor's creation
on (`_created`: one never created ends as never started, ExitStatus.unstarted). While the
cluster does not answer, a stop cannot reach an actor unheard (`out_of_reach`): a stopping
daemon does not wait for it; and what did not reach it, it gets once it answers again
(ray_stops.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal as signals
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import ray

from gpuherd.executors.base import RAY_PLACE_FILE, ExitStatus, SpawnError
from gpuherd.executors.ray_actor import NODE_CHECK_EVERY
from gpuherd.executors.ray_errors import (
    NODE_LEFT,
    actor_died_note,
    first_line,
    lost_why,
    node_fence_note,
    said_more,
)
from gpuherd.executors.ray_files import (
    HEARD_EVERY,
    append,
    decode,
    last_heard,
    note_heard,
    size,
    tail,
    write_exit,
)
from gpuherd.executors.ray_link import CALL_TIMEOUT, ClusterDown, ClusterLink
from gpuherd.executors.ray_lookup import Lookup, answered, look_up
from gpuherd.executors.ray_stops import Stop, Stopping
from gpuherd.executors.ray_verdict import verdict

log = logging.getLogger("gpuherd.ray")

PULL_WAIT = 1.0
"""Seconds one log pull may wait on the node for new output (a long poll)."""
RELEASE_TIMEOUT = 5.0
PULL_MARGIN = 10.0
"""Seconds past PULL_WAIT after which a pull that has not returned counts as unanswered."""
UNHEARD_AFTER = PULL_WAIT + 2.0
"""Seconds without an answered pull after which an actor counts as out of reach."""
INFO_TIMEOUT = PULL_MARGIN
"""Seconds the actor of a job without GPUs has to say which node Ray chose: it answers at
once (nothing to wait for there), so as long as a pull gets past its long poll."""
FENCE_WAIT = NODE_CHECK_EVERY + 1.0
"""Seconds an attempt lost with its node waits before it ends (and its retry may start): the
node's own fence (ray_actor.JobActor._fence) kills its processes meanwhile, if they run on."""


Created = tuple[Any, tuple[str, str] | None]
"""An attempt's actor, and (host, node id) of its node when gpuherd chose it."""


@dataclass
class Run:
    name: str
    actor: Any | None
    """Its handle; None until created (`creation`) or found (`lookup`: recovery could not
    find it in time)."""
    lookup: Lookup | None = None
    creation: Future[Created] | None = None
    """The actor's creation, off the loop (RayExecutor.launch), until it is done."""
    attempt_dir: str = ""
    task: asyncio.Task[None] | None = None
    kill_timer: asyncio.TimerHandle | None = None
    killed: bool = False
    on_exit: Callable[[ExitStatus], None] | None = None
    done: bool = field(default=False)
    locate: Callable[[str, str], None] | None = None
    """Records (host, node id) of a launched attempt: once created (on the node gpuherd
    chose), or, for a job without GPUs, whose node Ray chose, once it is up."""
    heard: float = field(default_factory=time.monotonic)
    """When its actor last answered (monotonic); at first, when it was started or looked up."""
    noted: float = -HEARD_EVERY
    """When that was last noted in its folder (monotonic: ray_files.note_heard)."""
    stop: Stop | None = None
    """Its stop's SIGTERM, sent, or owed (ray_stops.py): asked before its actor was found,
    or while it was out of reach."""
    stop_task: asyncio.Task[None] | None = None
    kill_owed: bool = False
    """Its kill is due and was refused (the cluster away): done once it answers again."""
    signal_asked: int | None = None
    """The last pause or resume (SIGSTOP, SIGCONT) asked before its actor was found: idem."""
    signal_sent: tuple[Any, float] | None = None
    """The last pause or resume sent to its actor: its answer's ref, and when (monotonic)."""


class Following(Stopping):
    """Part of RayExecutor (ray.py), which sets these attributes."""

    link: ClusterLink
    namespace: str
    address: str
    _runs: dict[int, Run]

    async def _follow(self, handle: int, run: Run) -> None:
        folder = Path(run.attempt_dir)
        if run.creation is not None and not await self._created(handle, run):
            return
        if not await self._attach(run):
            self._conclude(handle, run, -1)
            return
        assert run.actor is not None
        await self._ask_node(run)
        offsets = [size(folder / "stdout.log"), size(folder / "stderr.log")]
        code: int | None = None
        ended_at: float | None = None
        died: BaseException | None = None
        said = ""
        unavailable, run.heard = 0, time.monotonic()
        while True:
            pull = run.actor.pull.remote(offsets[0], offsets[1], PULL_WAIT)
            try:
                got = await asyncio.wait_for(pull, PULL_WAIT + PULL_MARGIN)
            except (TimeoutError, ray.exceptions.ActorUnavailableError):
                # Out of reach for now (a busy node, the cluster's head away): lost only if
                # it stays so (`_given_up`).
                unavailable += 1
                if not self._given_up(run, unavailable):
                    await asyncio.sleep(1.0)
                    continue
                code = -1
                break
            except (ray.exceptions.RayActorError, ray.exceptions.RayError) as exc:
                log.info("job actor %s ended without a status: %s", run.name, first_line(exc))
                if not run.killed:  # (once Ray counts it dead: its retry goes to a live node)
                    said = await verdict(self.link, run.actor, lambda: run.killed)
                    append(folder / "stderr.log", actor_died_note(exc, said).encode())
                code, died = -1, exc
                break
            unavailable, run.heard = 0, time.monotonic()
            if run.heard - run.noted >= HEARD_EVERY:  # (for a restart that finds it gone)
                note_heard(folder, self.address)
                run.noted = run.heard
            self.deliver(run)  # it answers: what did not reach it meanwhile, it gets now
            await self._ask_node(run)  # (if it did not answer before)
            for i, key in enumerate(("out", "err")):
                chunk: bytes = got[key]
                if chunk:
                    append(folder / ("stdout.log", "stderr.log")[i], chunk)
                    offsets[i] += len(chunk)
            if got["status"] is not None and not got["out"] and not got["err"]:
                code = int(got["status"])
                # When it ended, not when this daemon (restarted since, maybe) heard of it:
                # an age on the node's clock, so that the nodes' clocks need not agree.
                ended_at = time.time() - max(0.0, float(got.get("age") or 0.0))
                break
        why = lost_why(died, said, tail(folder / "stderr.log")) if code < 0 else ""
        await self._before_end(run, code, why)
        self._conclude(handle, run, code, ended_at, why=why)

    async def _before_end(self, run: Run, code: int, why: str = "") -> None:
        """Before the attempt's end is told. Collected (`code` >= 0): everything is here, the
        node's scratch copy can go. Lost (not by a kill): with its node (`why`), first give
        the node the time to fence itself (`_let_the_node_fence`); then read the cluster's
        nodes again (off the loop), so that the engine, which reads the GPUs again then
        (DeviceTable.mark_stale), no longer offers the retry a node that died with the actor:
        the watcher's listing may be a second older than that death, and the start, which
        reads the nodes afresh, found the node gone ("not started, queued again"), once or
        twice. Not waited for past CALL_TIMEOUT, nor at all while the cluster does not
        answer."""
        assert run.actor is not None
        with contextlib.suppress(Exception):  # (ClusterDown, a GCS error, a deadline)
            if code >= 0:
                await asyncio.wait_for(run.actor.release.remote(), RELEASE_TIMEOUT)
            elif not run.killed:
                if why == NODE_LEFT:
                    await _let_the_node_fence(Path(run.attempt_dir))
                await asyncio.wait_for(asyncio.wrap_future(self.link.read_again()), CALL_TIMEOUT)

    async def _created(self, handle: int, run: Run) -> bool:
        """Wait for the run's actor to be created; False when it was not: the attempt ends as
        never started (queued again, or failed: ExitStatus.unstarted), or, stopped meanwhile,
        as its stop says. Its node, when gpuherd chose it, is recorded once it is there."""
        assert run.creation is not None
        try:
            run.actor, where = await asyncio.wrap_future(run.creation)
        except Exception as exc:  # NotStarted, SpawnError; else a bug: it fails the job
            if isinstance(exc, SpawnError) and not run.killed:  # (else a bug: the engine logs it)
                _tell_unstarted(run, exc)
            self._conclude(handle, run, -1, unstarted=exc)
            return False
        finally:
            run.creation = None
        if where is not None and run.locate is not None:
            run.locate(*where)
            run.locate = None
        return True

    async def _ask_node(self, run: Run) -> None:
        """Record the node Ray chose for the run's actor (a job without GPUs), once it is up.
        An actor that does not answer within INFO_TIMEOUT (its node hung) is not waited for
        longer: its pulls, which do not wait for ever either, tell what became of it, and it
        is asked again once it answers one."""
        if run.locate is not None and run.actor is not None:
            with contextlib.suppress(Exception):  # (TimeoutError too)
                info = await asyncio.wait_for(run.actor.info.remote(), INFO_TIMEOUT)
                run.locate(info["host"], info["node_id"])
                run.locate = None

    async def _attach(self, run: Run) -> bool:
        """Wait for the actor of a run that recovery could not find in time, looking again
        while a lookup fails (ray_lookup.py); False once it is found gone, or given up. A stop,
        pause or resume asked meanwhile reaches it once found."""
        while run.actor is None:
            assert run.lookup is not None
            if answered(run.lookup):
                if (actor := run.lookup.result()) is None:
                    note = f"gpuherd: Ray actor {run.name} is gone: it ended unwatched\n"
                    append(Path(run.attempt_dir) / "stderr.log", note.encode())
                    return False
                log.info("found job actor %s: following it", run.name)
                run.actor = actor
            else:
                if run.lookup.done():  # failed (the cluster away, or its GCS): look again
                    run.lookup = look_up(self.link, run.name, self.namespace)
                if self._given_up(run, 0):  # only while the cluster is away: lost_after
                    return False
                await asyncio.sleep(1.0)
        if run.signal_asked is not None and not run.killed:
            self._send_signal(run, run.signal_asked)
        self.deliver(run)  # its kill, or its stop (the grace counted from its request)
        return True

    def _given_up(self, run: Run, unavailable: int) -> bool:
        """Whether an actor out of reach is lost (ClusterLink.gives_up); the stderr says why."""
        note = self.link.gives_up(unavailable, time.monotonic() - run.heard)
        if note:
            log.warning("job actor %s: %s", run.name, note)
            if not run.killed:
                append(Path(run.attempt_dir) / "stderr.log", f"gpuherd: {note}\n".encode())
        return note is not None

    def _conclude(
        self,
        handle: int,
        run: Run,
        code: int,
        ended_at: float | None = None,
        unstarted: Exception | None = None,
        why: str = "",
    ) -> None:
        run.done = True
        if run.kill_timer is not None:
            run.kill_timer.cancel()
        self._runs.pop(handle, None)
        if run.actor is not None:  # (else, if it is there, `end_leftovers` kills it)
            self._kill(run.actor)
        now = time.time()
        status = decode(code, ended_at or now)
        if status.lost and run.killed:  # (one never started too: stopped, it is not queued)
            status = ExitStatus(exit_code=None, signal=signals.SIGKILL, ended_at=now)
        if not status.lost:
            write_exit(Path(run.attempt_dir), status)
        elif unstarted is not None:
            status = replace(status, unstarted=unstarted)
        elif why:
            status = replace(status, why=why)
        if run.on_exit is not None:
            run.on_exit(status)

    def gone_why(self, attempt_dir: str) -> str:
        """Why an attempt that a restart found gone (no actor, no exit status) is lost, in the
        words its history gives after `lost: `: the cluster it ran on is another (a start with
        --abandon-running), or was started again (a new cluster: it knows none of the nodes of
        the one before), or its node left it, or its actor ended, while no daemon watched."""
        folder = Path(attempt_dir)
        heard = last_heard(folder)
        if heard is not None and heard[0] != self.address:
            return (
                f"it ran on the Ray cluster at {heard[0]}, which this daemon does not use "
                "(--abandon-running): its processes may go on there"
            )
        try:
            node = json.loads((folder / RAY_PLACE_FILE).read_text()).get("node_id")
            alive = {str(n["NodeID"]): bool(n["Alive"]) for n in self.link.nodes()}
        except (OSError, ValueError, AttributeError, KeyError, ClusterDown):
            node, alive = None, {}
        if node in alive:
            if alive[node]:
                return "its Ray actor ended while no daemon watched, with no exit status"
            return "its Ray node left the cluster while no daemon watched"
        if node is not None and heard is not None:  # (the cluster's address is the same)
            return "the Ray cluster it ran on was started again (a new cluster)"
        return f"its Ray actor is gone from the Ray cluster at {self.address}"

    def out_of_reach(self, pid: int) -> str | None:
        """Why the attempt cannot be stopped now: the cluster does not answer (a kill is
        refused) and its actor has not answered for UNHEARD_AFTER s either (nor has its
        SIGTERM reached it, then); None while the actor answers, or the cluster does."""
        run = self._runs.get(pid)
        down = self.link.reason()
        if run is None or down is None:
            return None
        if run.actor is not None and time.monotonic() - run.heard < UNHEARD_AFTER:
            return None
        return down


async def _let_the_node_fence(folder: Path) -> None:
    """An attempt Ray counts lost with its node, whose end gpuherd never saw, may still run
    there (a frozen raylet: its worker lives on): its node kills it once its job actor sees
    the node counted dead, within NODE_CHECK_EVERY s. Its retry starts after that, so the two
    do not run at once; its stderr says so, and what is left (a node cut off from the GCS)."""
    append(folder / "stderr.log", node_fence_note(NODE_CHECK_EVERY, FENCE_WAIT).encode())
    await asyncio.sleep(FENCE_WAIT)


def _tell_unstarted(run: Run, exc: Exception) -> None:
    """Why the run's attempt did not start: in its stderr and the daemon's log, the one line
    its job's detail gets, then, where Ray said more (many lines, coloured), Ray's whole text:
    the detail keeps only the line that says why (ray_errors.py)."""
    more = said_more(exc.__cause__) if exc.__cause__ is not None else ""
    told = f"{exc}\n{more}".strip()
    log.warning("job actor %s not started: %s", run.name, told)
    append(Path(run.attempt_dir) / "stderr.log", f"gpuherd: {told}\n".encode())
