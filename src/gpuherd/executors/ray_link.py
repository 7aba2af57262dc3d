"""Whether the Ray cluster answers, learned off the event loop (daemon side).

Ray's client blocks while the cluster's GCS (on its head) does not answer: `ray.nodes()`,
`ray.get_actor` or creating a named actor wait up to a minute, or until the head is back.
On the daemon's event loop one such call froze `ls`, `daemon status` and the dashboard. So:

- a watcher thread reads the cluster's nodes every POLL s, and the loop only takes its latest
  listing (`nodes`). The cluster is down once a read failed, or has not returned within
  STALE s, since that read began (`outage`); up again once a read returns (`on_back`);
- the other calls that need the GCS go through `call`: refused at once while the cluster is
  down, else run in a thread of their own that the caller waits on for a bounded time.

The watcher reads through the GCS client's own call with a deadline (`gcs_nodes`), not
`ray.nodes()`: that one waits for as long as the GCS does not answer and, once a new cluster
answers at the address (the head started again without GCS fault tolerance), fails a check
in Ray that aborts the whole process (Ray 2.60). That new cluster is told apart (`restarted`):
its GCS refuses this client (WrongClusterID) for good, so only a new daemon can use it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any, TypeVar

import ray

from gpuherd.executors.ray_errors import first_line
from gpuherd.gpus.base import ProbeError

log = logging.getLogger("gpuherd.ray")

POLL = 1.0
"""Seconds between two reads of the cluster's nodes by the watcher."""
STALE = 3.0
"""Seconds a read may take before the cluster counts as not answering."""
CALL_TIMEOUT = 5.0
"""Seconds the loop waits at most for a call that needs the GCS."""
LOST_AFTER = 300.0
"""Seconds a running job's actor may go unheard while the cluster does not answer before its
attempt counts as lost (GPUHERD_RAY_LOST_AFTER changes it)."""
UNAVAILABLE_LIMIT = 30
"""Consecutive pulls that found an actor unreachable, the cluster answering, before it is lost."""
RECONNECT_TIMEOUT = str(10 * 365 * 86400)
"""Ray's `gcs_rpc_server_reconnect_timeout_s` for the daemon's own Ray client: Ray ends a
process whose GCS has not answered for that long (60 s by default), the daemon with it."""

RESTARTED = "WrongClusterID"
"""What Ray's GCS client error says when a new cluster answers at the address."""

T = TypeVar("T")
_ray: Any = ray  # the GCS client is not in Ray's type hints


class ClusterDown(ProbeError):
    """The cluster does not answer: said at once, without asking Ray."""


@dataclass(frozen=True)
class Outage:
    since: float
    """Epoch seconds: when the first read or call that got no answer began."""
    reason: str
    restarted: bool = False
    """A new cluster answers at the address: this one is gone for good."""


def lost_after() -> float:
    """LOST_AFTER, or the daemon's GPUHERD_RAY_LOST_AFTER (seconds) when set and valid."""
    try:
        return max(0.0, float(os.environ.get("GPUHERD_RAY_LOST_AFTER") or LOST_AFTER))
    except ValueError:
        log.warning("GPUHERD_RAY_LOST_AFTER is not a number of seconds: using %g", LOST_AFTER)
        return LOST_AFTER


def gcs_nodes() -> list[dict[str, Any]]:
    """The cluster's nodes as `ray.nodes()` lists them (the fields gpuherd reads), read with
    a deadline of STALE s (the module's docstring says why not `ray.nodes()`)."""
    from ray.core.generated import gcs_pb2

    alive = getattr(gcs_pb2, "GcsNodeInfo").ALIVE  # noqa: B009 (generated: not in its stubs)
    client = getattr(_ray._private.worker.global_worker, "gcs_client", None)
    if client is None:  # a Ray Client session (ray://): its server asks the GCS for it
        return list(_ray.nodes())
    return [
        {
            "NodeID": node_id.hex(),
            "Alive": info.state == alive,
            "NodeManagerAddress": info.node_manager_address,
            "NodeManagerHostname": info.node_manager_hostname,
            "Resources": dict(info.resources_total),
        }
        for node_id, info in client.get_all_node_info(timeout=STALE).items()
    ]


def clock(stamp: float) -> str:
    """An epoch time as a reason shows it: its time of day, with the date if not today."""
    day = "%Y-%m-%d " if time.strftime("%F", time.localtime(stamp)) != time.strftime("%F") else ""
    return time.strftime(f"{day}%H:%M", time.localtime(stamp))


class ClusterLink:
    def __init__(
        self, address: str, read: Callable[[], list[dict[str, Any]]] | None = None
    ) -> None:
        self.address = address
        self._read = read or gcs_nodes
        self.lost_after = lost_after()
        self._lock = threading.Lock()
        self._nodes: list[dict[str, Any]] = []
        self._listed_at = -1e9
        """(monotonic) When the read that gave `_nodes` began: a read begun earlier, which
        may list a node that has left since, never replaces it."""
        self._reading: tuple[float, float] | None = None
        """(monotonic, epoch) start of the read in flight."""
        self._failed: Outage | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.on_back: Callable[[], object] | None = None
        """Called (in the watcher thread) when the cluster answers again after an outage."""

    # ---- the watcher --------------------------------------------------------------------

    def start(self) -> None:
        """Read once here (raising ProbeError), then go on reading in the watcher thread."""
        self.poll()
        if (down := self.outage()) is not None:
            raise ProbeError(self.says(down))
        self._thread = threading.Thread(target=self._watch, name="gpuherd-ray-link", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(POLL):
            self.poll()

    def poll(self) -> None:
        """One read of the cluster's nodes (blocks for as long as Ray does)."""
        with self._lock:
            self._reading = (began := time.monotonic(), time.time())
        try:
            raw = self._read()
        except Exception as exc:  # any failure of the GCS client
            restarted = RESTARTED in str(exc)
            with self._lock:
                if self._reading is not None and (self._failed is None or restarted):
                    since = self._reading[1] if self._failed is None else self._failed.since
                    if restarted and not (self._failed and self._failed.restarted):
                        log.error("%s", self.says(Outage(since, "", True)))
                    self._failed = Outage(since, first_line(exc), restarted)
                self._reading = None
            return
        with self._lock:
            was = self._outage()
            self._reading, self._failed = None, None
            self._keep(raw, began)
        if was is not None:
            log.warning("%s answers again (it did not from %s on)", self.cluster, clock(was.since))
            if self.on_back is not None:
                self.on_back()

    # ---- what the loop asks -------------------------------------------------------------

    @property
    def cluster(self) -> str:
        return f"the Ray cluster at {self.address}"

    def says(self, outage: Outage) -> str:
        if outage.restarted:
            return (
                f"{self.cluster} was started again (a new cluster): restart the daemon to "
                "join it (`gpuherd daemon stop; gpuherd daemon start`)"
            )
        return f"{self.cluster} does not answer (since {clock(outage.since)})"

    def outage(self) -> Outage | None:
        """Since when (and why) the cluster does not answer; None while it does."""
        with self._lock:
            return self._outage()

    def _outage(self) -> Outage | None:
        if self._failed is not None:
            return self._failed
        if self._reading is not None and time.monotonic() - self._reading[0] > STALE:
            return Outage(self._reading[1], f"no answer within {STALE:g}s")
        return None

    def reason(self) -> str | None:
        """What `says` of the outage now; None while the cluster answers."""
        down = self.outage()
        return None if down is None else self.says(down)

    def nodes(self, fresh: bool = False) -> list[dict[str, Any]]:
        """The latest listing of the cluster's nodes, or with `fresh` one read now (`call`:
        a node that left since the last listing is not placed on), which becomes the latest;
        ClusterDown while the cluster does not answer."""
        with self._lock:
            down, nodes = self._outage(), list(self._nodes)
        if down is not None:
            raise ClusterDown(self.says(down))
        return self.call(self._read_now) if fresh else nodes

    def read_again(self) -> Future[list[dict[str, Any]]]:
        """A read of the nodes begun now in a thread, which becomes the latest listing: what
        the watcher read last may still list a node that has just died (it reads every POLL
        s), and the next placement must not offer its GPUs. ClusterDown while it is down."""
        return self.begin(self._read_now)

    def _read_now(self) -> list[dict[str, Any]]:
        """(In a thread: a GCS call with its deadline) the nodes, kept as the latest listing."""
        began = time.monotonic()
        raw = self._read()
        with self._lock:
            self._keep(raw, began)
        return raw

    def _keep(self, raw: list[dict[str, Any]], began: float) -> None:
        """(Under the lock) `raw`, read from `began` on, as the latest listing, unless a read
        begun later was kept meanwhile (a fresh read and the watcher's may overlap)."""
        if began >= self._listed_at:
            self._nodes, self._listed_at = raw, began

    def gives_up(self, unavailable: int, silent: float) -> str | None:
        """Whether a job's actor out of reach (`unavailable` pulls in a row, unheard for
        `silent` s) is lost, and why: after UNAVAILABLE_LIMIT pulls while the cluster
        answers; while it does not, once unheard for `lost_after` s. Not at once: the head,
        back in time (GCS fault tolerance), may bring the actor back; without it, its node's
        raylet, and the job, end within Ray's reconnect timeout anyway."""
        down = self.outage()
        if down is None:
            if unavailable < UNAVAILABLE_LIMIT:
                return None
            return f"the job's Ray actor did not answer {unavailable} pulls in a row: lost"
        if silent < self.lost_after:
            return None
        return f"{self.says(down)}; the job's Ray actor went unheard for {silent:.0f}s: lost"

    def call(
        self,
        fn: Callable[[], T],
        timeout: float = CALL_TIMEOUT,
        abandoned: Callable[[T], object] | None = None,
    ) -> T:
        """`fn()` (a call that needs the GCS) in a thread, waited on for at most `timeout` s:
        ClusterDown at once while the cluster does not answer, or when `fn` does not return
        in time (it goes on in its thread, and `abandoned` gets what it returns, if it does:
        an actor created late, say, that nothing will follow)."""
        future = self.begin(fn)
        if not wait([future], timeout).done:
            if abandoned is not None:
                future.add_done_callback(
                    lambda late: abandoned(late.result()) if late.exception() is None else None
                )
            raise ClusterDown(f"{self.cluster} did not answer within {timeout:g}s")
        return future.result()

    def begin(self, fn: Callable[[], T]) -> Future[T]:
        """`fn()` (a call that needs the GCS) begun in a thread of its own, which may never
        end (Ray's client waits for its GCS): its future, for a caller that waits on several
        at once. ClusterDown at once while the cluster does not answer."""
        if (down := self.outage()) is not None:
            raise ClusterDown(self.says(down))
        future: Future[T] = Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the caller, raised there
                future.set_exception(exc)

        threading.Thread(target=run, name="gpuherd-ray-call", daemon=True).start()
        return future
