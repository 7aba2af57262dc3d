"""Run attempts on a Ray cluster: one detached actor per attempt (daemon side).

The engine does not know it drives Ray. What the executor port calls a pid is, here, a
handle: `job id * 1000 + attempt number % 1000`, recorded as the attempt's pid (and in its
folder's `pid` file, before the actor is created, so a daemon killed at any point finds it).
The actor is named `gpuherd-<home tag>-<job>-<attempt>` in the namespace of this home, so a
restarted daemon finds it again by name.

- Placement: gpuherd's own placement chooses GPUs among the cluster's, all on one node
  (gpus/ray.py gives each GPU its node); this executor maps them to their node and their
  GPU ids there, pins the actor to that node (strict node affinity), asking Ray for that
  many GPUs and no CPU, and the actor sets `CUDA_VISIBLE_DEVICES` to exactly those ids.
  Ray's count of GPUs per node stays right; which ids Ray itself assigned is recorded
  beside (`ray.json`), never used. A node that left the cluster before its job started
  sends the job back to the queue (NotStarted; a note in its stderr says so).
- Start: `launch` does only local steps and returns the handle; the fresh read of the nodes
  and the actor's creation (GCS calls, seconds each on a slow GCS) go on in a thread, never
  on the event loop. An attempt that did not start after all ends with ExitStatus.unstarted
  (NotStarted: queued again; else failed, spawn_error); a stop asked meanwhile kills the
  actor once created: its job never runs (ray_follow.py, `_created`).
- No Ray-level re-run ever: `max_restarts=0`, `max_task_retries=0`. A node that dies takes
  the actor with it; the attempt ends without a status (`lost`) and gpuherd's retry policy
  decides on a new attempt.
- Logs and exit status: a follow loop per attempt pulls them from the actor to the attempt
  folder here, then kills the actor, which frees its GPUs in Ray (ray_follow.py).
- Stop: the actor's supervisor sends SIGTERM, then SIGKILL after the grace period; if the
  actor does not answer within the grace period plus a margin, the daemon kills the actor,
  and the supervisor (told by the kernel) kills the whole job. What did not get through while
  the cluster was away is sent again once it answers (ray_stops.py).
- A cluster that does not answer (its head away): no GCS call on the event loop without a
  deadline (ray_link.py); an actor unheard meanwhile is lost only after a while (it may come
  back with the head). Once the cluster answers again, actors no attempt owns are killed.
  A restart's recovery finds the actors all at once, with one deadline (ray_lookup.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import time
from collections.abc import Callable, Collection
from concurrent.futures import wait
from functools import partial
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from gpuherd.executors.base import (
    RAY_PLACE_FILE,
    UNKNOWN_SIGNS,
    ExitStatus,
    LaunchRequest,
    NotStarted,
    SignsOfLife,
    SpawnError,
    UnwatchedRuns,
)
from gpuherd.executors.ray_actor import START_WAIT, JobActor
from gpuherd.executors.ray_errors import first_line, reason, said_more
from gpuherd.executors.ray_files import append, read_exit, write_json
from gpuherd.executors.ray_follow import Created, Following, Run
from gpuherd.executors.ray_link import CALL_TIMEOUT, ClusterDown, ClusterLink
from gpuherd.executors.ray_lookup import Lookups, answered, find, home_actors
from gpuherd.gpus.base import ProbeError
from gpuherd.gpus.ray import RayNodes

log = logging.getLogger("gpuherd.ray")

HANDLE_BASE = 1000
CREATION_TIMEOUT = 2 * CALL_TIMEOUT + 1.0
"""Seconds an actor's creation takes at most: a read of the nodes, then the creation."""
SIGNAL_WAIT = START_WAIT + 5.0
"""Seconds a stopping daemon waits, at most, for the pauses and resumes it sent last."""

RemoteActor = ray.remote(JobActor)


def home_tag(home: Path) -> str:
    return hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:10]


def handle_of(job_id: int, attempt: int) -> int:
    return job_id * HANDLE_BASE + attempt % HANDLE_BASE


Placed = Callable[[int, int, str, str], None]
"""Told (job id, attempt, host, node id) once an attempt is placed on a node."""


class RayExecutor(Following):
    user_files = False  # (a node's files are not the daemon's: Attempts.launch refuses them)

    def __init__(
        self,
        nodes: RayNodes,
        namespace: str,
        tag: str,
        address: str = "",
        link: ClusterLink | None = None,
    ) -> None:
        self.nodes = nodes
        self.namespace = namespace
        self.tag = tag
        self.address = address
        """The cluster's address, resolved (joined_address): what the daemon remembers."""
        self.link = link or ClusterLink(address)  # (not watching: never down)
        self.on_placed: Placed | None = None
        self._runs: dict[int, Run] = {}
        self._lookups: Lookups | None = None
        """A restart's lookups of the actors, while its recovery asks (`is_running`)."""
        self._closed = False
        """Closed: the actors run on for the next daemon, and no run is followed here."""

    def actor_name(self, job_id: int, attempt: int) -> str:
        return f"{self.actors_of(job_id)}{attempt}"

    def actors_of(self, job_id: int) -> str:
        """What the names of a job's actors (any attempt's) begin with."""
        return f"gpuherd-{self.tag}-{job_id}-"

    # ---- launch -----------------------------------------------------------------------------

    def launch(self, request: LaunchRequest) -> int:
        """The attempt's handle, at once: only local steps here. What needs the cluster (a
        fresh read of its nodes, the actor's creation: each may wait seconds on a slow GCS,
        and every request to the daemon would wait with it) goes on in a thread (`_start`),
        and `watch` tells how it went: a run, or ExitStatus.unstarted."""
        indices = _indices(request.env.get("CUDA_VISIBLE_DEVICES", ""))
        handle = handle_of(request.job_id, request.attempt)
        name = self.actor_name(request.job_id, request.attempt)
        folder = Path(request.attempt_dir)
        node_id, gpu_ids = self._locate(request.job_id, indices)
        # The handle is on disk before the actor exists: a daemon killed or stopped in between
        # finds the pid file, looks for the actor, and counts the attempt as lost (never twice).
        (folder / "pid").write_text(f"{handle}\n")
        for log_name in ("stdout.log", "stderr.log"):
            (folder / log_name).touch()
        place: dict[str, Any] = {"actor": name, "namespace": self.namespace, "handle": handle}
        write_json(folder / RAY_PLACE_FILE, place)
        options: dict[str, Any] = {
            "name": name,
            "namespace": self.namespace,
            "lifetime": "detached",
            "num_gpus": len(gpu_ids),
            "num_cpus": 0,
            "max_restarts": 0,
            "max_task_retries": 0,
            "max_concurrency": 4,
        }
        args = (name, request.command, os.path.abspath(request.cwd), dict(request.env), gpu_ids)
        try:
            creation = self.link.begin(partial(self._start, request, node_id, options, args))
        except ClusterDown as exc:  # since placement: the job waits for it in the queue
            append(folder / "stderr.log", f"gpuherd: {exc}\n".encode())
            raise NotStarted(str(exc)) from exc

        def located(host: str, node: str) -> None:
            place.update(node_id=node, host=host, gpu_ids=gpu_ids)
            write_json(folder / RAY_PLACE_FILE, place)
            if self.on_placed is not None:
                self.on_placed(request.job_id, request.attempt, host, node)

        self._runs[handle] = Run(name, None, creation=creation, locate=located)
        return handle

    def _start(
        self,
        request: LaunchRequest,
        node_id: str | None,
        options: dict[str, Any],
        args: tuple[Any, ...],
    ) -> Created:
        """(In a thread: GCS calls, each with its deadline) the attempt's actor, and (host,
        node id) of the node chosen (None: Ray chooses, `_follow` asks the actor). Raises
        NotStarted (queued again) or SpawnError (fails), as `launch` did on the loop."""
        try:
            live = {n.node_id: n for n in self.nodes.nodes(max_age=0.0)}
        except ClusterDown as exc:  # since placement: the job waits for it in the queue
            raise NotStarted(str(exc)) from exc
        except ProbeError as exc:  # a GCS slow to answer, not the job's fault: try again
            raise NotStarted(f"placing job {request.job_id} on the Ray cluster: {exc}") from exc
        if node_id is not None and node_id not in live:
            # No actor, no run: the engine queues the job again (its retries untouched).
            raise NotStarted(f"Ray node {node_id} left the cluster before this attempt started")
        if node_id is not None:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
        try:
            # (Registered with the GCS.) One created after the deadline is killed then.
            create = partial(self._create, options, args)
            actor = self.link.call(create, abandoned=self._kill_late)
        except ClusterDown as exc:
            raise NotStarted(str(exc)) from exc
        except Exception as exc:  # Ray raises many kinds; all mean "not started"
            # One line for the job's detail; Ray's whole text goes to its stderr (`_created`).
            stderr = f"`gpuherd log {request.job_id} --stderr`"
            more = f"; Ray's whole error: {stderr}" if said_more(exc) else ""
            raise SpawnError(
                f"starting job {request.job_id} (attempt {request.attempt}) on the Ray "
                f"cluster: {reason(exc)}; check `gpuherd gpus` and the cluster's state "
                f"(`ray status`){more}"
            ) from exc
        return actor, None if node_id is None else (live[node_id].host, node_id)

    def _locate(self, job_id: int, indices: list[int]) -> tuple[str | None, list[int]]:
        """(the node, the GPU ids on it) of gpuherd's GPUs `indices`; (None, []) for none."""
        where = [self.nodes.locate(i) for i in indices]
        nodes = {w[0] for w in where if w is not None}
        if None in where or len(nodes) > 1:
            raise SpawnError(
                f"job {job_id}: GPUs {','.join(map(str, indices))} are not all on one known "
                "node of the Ray cluster; placement should never do this: please report it"
            )
        return (nodes.pop() if nodes else None), [w[1] for w in where if w is not None]

    def _create(self, options: dict[str, Any], args: tuple[Any, ...]) -> Any:
        """(In a thread: GCS calls) the job's actor, once any of its name is dropped."""
        self._drop_stale(options["name"])
        return RemoteActor.options(**options).remote(*args)

    def _kill_late(self, actor: Any) -> None:
        """(In a thread) an actor created after its launch gave up waiting: nothing follows it."""
        with contextlib.suppress(Exception):  # (else `end_leftovers` kills it, later)
            ray.kill(actor, no_restart=True)

    def _drop_stale(self, name: str) -> None:
        """(In a thread: GCS calls) an actor of this name, left by an attempt recorded as lost,
        or by an attempt that ended unwatched: it must not run."""
        with contextlib.suppress(Exception):  # none, or the GCS failed: nothing to drop now
            if (stale := find(name, self.namespace)) is not None:
                ray.kill(stale, no_restart=True)

    # ---- watch ------------------------------------------------------------------------------

    def watch(
        self, pid: int, attempt_dir: str, key: str, on_exit: Callable[[ExitStatus], None]
    ) -> None:
        run = self._runs.get(pid)
        loop = asyncio.get_running_loop()
        if run is None:
            loop.call_soon(on_exit, ExitStatus(exit_code=None, signal=None, ended_at=time.time()))
            return
        run.attempt_dir, run.on_exit = attempt_dir, on_exit
        run.task = loop.create_task(self._follow(pid, run))
        if self.link.on_back is None:
            self.link.on_back = partial(loop.call_soon_threadsafe, self._cluster_back)

    def _cluster_back(self) -> None:
        """The cluster answers again: the kills refused meanwhile are due (ray_stops.py), and
        so are those of the actors of attempts that ended meanwhile."""
        if self._closed:  # (said by the link's thread as the daemon stopped: every actor
            return  # would look like one no running attempt owns, and be killed)
        for run in list(self._runs.values()):
            self.deliver(run)
        log.info("%s answers again: killing the job actors no running attempt owns", self.address)
        self.end_leftovers("")

    # ---- inspect ----------------------------------------------------------------------------

    def is_running(
        self, pid: int, job_id: int, attempt: int, key: str, attempt_dir: str = ""
    ) -> bool:
        """Whether its actor is there, as recovery's lookups (all at once, one deadline:
        ray_lookup.py) find it; also True for one they could not find in time: the cluster
        cannot say, and counted lost on a guess the job could run twice. `watch` follows it
        until it is found (then as any), found gone, or given up (ClusterLink.gives_up)."""
        # The actor's name and namespace are this home's: the key adds nothing to find it by.
        if pid != handle_of(job_id, attempt):
            return False
        if pid in self._runs:
            return True
        if attempt_dir and read_exit(Path(attempt_dir)) is not None:
            return False  # written once its end was pulled: no need to ask the cluster
        if self._lookups is None:
            self._lookups = Lookups(self.link, self.namespace, f"gpuherd-{self.tag}-")
        name = self.actor_name(job_id, attempt)
        lookup = self._lookups.wait(name)
        if not answered(lookup):
            failed = lookup.exception() if lookup.done() else None
            why = "no answer" if failed is None else first_line(failed)
            log.warning("job actor %s not found in time (%s): followed as running", name, why)
            self._runs[pid] = Run(name, None, lookup=lookup)
        elif (actor := lookup.result()) is not None:
            self._runs[pid] = Run(name, actor)
        return pid in self._runs

    def end_leftovers(
        self, home_id: str, spared: Collection[int] = (), unwatched: UnwatchedRuns | None = None
    ) -> None:
        """Kill this home's actors that no live attempt owns (called once recovery has
        re-attached the live ones). Left by a daemon that ran with `--executor local` in
        between (it counted them lost, maybe ran them again), each would hold its GPUs in
        Ray for ever: gpuherd's next job there would wait in Ray, shown as running. What a
        command leaves when it ends, its supervisor kills (ray_supervisor.py): so no attempt
        is left running unwatched, and `unwatched` is never told of one."""
        recovery, self._lookups = self._lookups, None  # a later question looks again
        try:  # (recovery's listing, if it listed: no second wait on the cluster at a start)
            named = (
                recovery.listed()
                if recovery is not None
                else self.link.call(partial(home_actors, self.namespace, f"gpuherd-{self.tag}-"))
            )
        except Exception as exc:  # any failure of the GCS client: the next start tries again
            log.warning("cannot list this home's job actors: %s", first_line(exc))
            return
        owned = {run.name for run in self._runs.values()}
        # (any attempt's of a job set aside: which one runs is in its row, unreadable)
        spared_names = tuple(self.actors_of(job_id) for job_id in spared)
        for name in named:
            if name not in owned and not name.startswith(spared_names):
                log.warning("job actor %s belongs to no running attempt: killing it", name)
                with contextlib.suppress(ClusterDown):  # (not waited for: the next start does)
                    self.link.begin(partial(self._drop_stale, name))

    def recorded_exit(self, attempt_dir: str) -> ExitStatus | None:
        return read_exit(Path(attempt_dir))

    def signs_of_life(self, attempt_dir: str) -> SignsOfLife:
        """Unknown: the attempt ran on a node whose boot gpuherd does not know, and its logs
        here are the daemon's copies (written as it followed them), not the job's writes."""
        return UNKNOWN_SIGNS

    def find_leader(self, job_id: int, attempt: int, key: str) -> int | None:
        """None: an actor's handle is written before the actor is created (recorded_pid)."""
        return None

    def given_gpus(self, pid: int) -> tuple[int, ...] | None:
        """None: an actor's GPUs are its node's, not this machine's (and not in its handle)."""
        return None

    def stopped(self, pid: int) -> bool:
        """False: an actor's job runs on its node; asking would wait on the cluster."""
        return False

    def outlived(self, pid: int, key: str) -> bool:
        """False: the actor lives until the daemon has its status, and its job's supervisor
        gives what the job started the rest of the grace (ray_supervisor.py)."""
        return False

    def recorded_pid(self, attempt_dir: str) -> int | None:
        """The handle written before the actor was created."""
        try:
            return int((Path(attempt_dir) / "pid").read_text().strip()) or None
        except (OSError, ValueError):
            return None

    # ---- control (stop, pause, resume: ray_stops.py) ---------------------------------------

    def close(self) -> None:
        """Stop following; the actors and their jobs run on for the next daemon. Creations in
        flight are waited for first (each GCS call has its deadline): cut off with this
        process, an actor would never be created, and its attempt, counted lost."""
        self._closed = True
        creating = [run.creation for run in self._runs.values() if run.creation is not None]
        if creating:
            wait(creating, CREATION_TIMEOUT)
        _wait_for_signals(self._runs.values())
        for run in self._runs.values():
            for task in (run.task, run.stop_task):
                if task is not None:
                    task.cancel()
            if run.kill_timer is not None:
                run.kill_timer.cancel()
        self._runs.clear()


def _wait_for_signals(runs: Collection[Run]) -> None:
    """Wait for the pauses and resumes sent in the last SIGNAL_WAIT seconds to be taken: an
    actor takes one only once its command has started (up to START_WAIT s after its launch),
    and one still on its way went with this process. A job paused right after its start, the
    daemon stopped at once, ran on, shown paused, until a next daemon sent its pause again."""
    now = time.monotonic()
    sent = [run.signal_sent for run in runs if run.signal_sent is not None]
    refs = [ref for ref, at in sent if now - at < SIGNAL_WAIT]
    if refs:
        with contextlib.suppress(Exception):  # (an actor gone, or the cluster: nothing to wait)
            ray.wait(refs, num_returns=len(refs), timeout=SIGNAL_WAIT)


def _indices(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]
