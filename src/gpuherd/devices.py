"""The GPUs as the engine sees them: the user's configuration (slots, draining) merged with
the probe's latest reading, refreshed on a telemetry timer."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from gpuherd.core.model import MAX_SLOTS, Device, DeviceState
from gpuherd.errors import InvalidValue, NotFound
from gpuherd.gpu_processes import (
    GpuProcessView,
    RunKey,
    RunningJob,
    attribute,
    unlisted_memory,
    user_of,
)
from gpuherd.gpus.base import GpuProbe, GpuReading, JobOnGpus, ProbeError
from gpuherd.gpus.static import StaticProbe
from gpuherd.host_memory import host_memory_total as host_memory_total  # (tests import it here)
from gpuherd.host_room import HostMemory, HostRoom, RamRun
from gpuherd.removed_gpus import keep_removed, removed_gpus
from gpuherd.store import DeviceConfig, Store

log = logging.getLogger("gpuherd.devices")

TELEMETRY_INTERVAL = 2.0
HISTORY_LENGTH = 300
"""Readings kept per GPU: ten minutes at the default interval."""


class DeviceTable:
    on_cluster = False
    """Whether the GPUs are a Ray cluster's (ClusterDeviceTable), not this machine's."""

    def __init__(self, store: Store, probe: GpuProbe, interval: float = TELEMETRY_INTERVAL) -> None:
        self.store = store
        self.probe = probe
        self.interval = interval
        self._config = {d.index: d for d in store.devices()}
        self._readings: dict[int, GpuReading] = {}
        self._seen: dict[int, GpuReading] = {}
        """Each GPU's last reading, kept when it vanishes: a lost GPU as last seen."""
        self.failure: ProbeFailure | None = None
        """Set while the probe fails: the readings are then those of `read_at`."""
        self.read_at: float | None = None
        """When (epoch seconds) the readings were taken."""
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_change: Callable[[], None] = lambda: None
        self._jobs: Callable[[], list[RunningJob]] = list
        self._read_at = -math.inf
        self._host = HostRoom()
        self._processes: dict[int, list[GpuProcessView]] = {}
        self.history: dict[int, deque[tuple[float, int | None, int | None]]] = {}
        """Per GPU, the last readings: (time, utilisation %, memory used), for sparklines."""
        self.usage: dict[RunKey, int] = {}
        """(job id, attempt) -> the most memory that run's processes use on one of its GPUs,
        last reading: by run, as two runs of one job may run at once (RunKey)."""
        self.refresh()

    def start(
        self,
        loop: asyncio.AbstractEventLoop,
        on_change: Callable[[], None],
        jobs: Callable[[], list[RunningJob]],
    ) -> None:
        self._loop, self._on_change, self._jobs = loop, on_change, jobs
        if not isinstance(self.probe, StaticProbe):  # a static probe never changes
            self._timer = loop.call_later(self.interval, self._tick)

    def stop(self) -> None:
        if self._timer:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        if self.refresh():
            self._on_change()
        if self._loop is not None:
            self._timer = self._loop.call_later(self.interval, self._tick)

    def refresh_if_older(self, seconds: float) -> None:
        """Read again before a placement when the last reading is older than `seconds`."""
        if time.monotonic() - self._read_at > seconds and not isinstance(self.probe, StaticProbe):
            self.refresh()

    def mark_stale(self) -> None:
        """Have the next placement read the GPUs again, past the probe's own cache: an attempt
        was lost, or did not start, maybe with its machine (a Ray node that died), whose GPUs
        must be gone from the reading before anything is placed on them. Not per job: a tick
        that places reads only when its reading is old (`refresh_if_older`)."""
        self._read_at = -math.inf
        if (forget := getattr(self.probe, "forget", None)) is not None:
            forget()

    def cores(self) -> int | None:
        """How many CPU-only jobs `cpu-jobs auto` lets run at once: the cores this process
        may use (its affinity, so `taskset` and cpusets count)."""
        return len(os.sched_getaffinity(0))

    def outage(self) -> str | None:
        """Why no job can start now, whatever the GPUs show (a Ray cluster that does not
        answer: executors/ray_cluster.py); None while jobs can start."""
        return None

    def host_memory(self, max_age: float, runs: Iterable[RamRun]) -> HostMemory:
        """Available host memory and what the running attempts `runs` hold of it by their
        --ram, read at most once per `max_age` seconds (file reads, and a busy queue ticks
        hundreds of times a second): host_room.py. A Ray cluster's jobs run on its nodes,
        not on this host: nothing is held for them (their pids are not this host's)."""
        return self._host.read(max_age, () if self.on_cluster else runs)

    def refresh(self) -> bool:
        """Read the probe; True when what placement sees has changed."""
        jobs = self._jobs()
        observe = getattr(self.probe, "observe_jobs", None)
        if observe is not None:
            observe([JobOnGpus(j.pgid, j.gpus, j.job_dir) for j in jobs])
        # A failed read counts as a reading for `refresh_if_older`: a failing probe is tried
        # once per tick, not again before every placement.
        self._read_at = time.monotonic()
        stamp = time.time()
        try:
            readings = {r.index: r for r in self.probe.read()}
        except ProbeError as exc:
            self._failed(str(exc), stamp)
            return False
        if self.failure is not None:
            since = local_time(self.failure.since)
            log.info("GPU probe works again (it failed from %s on)", since)
            self.failure = None
        self.read_at = stamp
        self._seen.update(readings)
        for index, r in readings.items():
            series = self.history.setdefault(index, deque(maxlen=HISTORY_LENGTH))
            series.append((stamp, r.utilization, r.memory_used))
        changed = readings != self._readings
        self._readings = readings
        self._processes, self.usage = attribute(self._readings, jobs)  # whose each process is
        return changed

    def _failed(self, reason: str, now: float) -> None:
        """Log a failing probe once (and again only when the reason changes), not every tick."""
        if self.failure is None or self.failure.reason != reason:
            kept = f"the reading of {local_time(self.read_at)}" if self.read_at else "no reading"
            log.warning("GPU probe failed, keeping %s until it works again: %s", kept, reason)
        since = now if self.failure is None else self.failure.since
        self.failure = ProbeFailure(since, reason)

    # ---- views ----------------------------------------------------------------------------

    def listing(self) -> list[Device]:
        """Configured GPUs that the probe sees now, with their telemetry."""
        return [
            self._device(index, cfg, reading)
            for index, cfg in sorted(self._config.items())
            if (reading := self._readings.get(index)) is not None
        ]

    def _device(self, index: int, cfg: DeviceConfig, reading: GpuReading) -> Device:
        listed = self._processes.get(index, [])
        foreign = [p for p in listed if p.job_id is None]
        return Device(
            index=index,
            uuid=reading.uuid,
            name=reading.name,
            slots=cfg.slots,
            state=cfg.state,
            memory_total=reading.memory_total,
            memory_used=reading.memory_used,
            foreign_processes=len(foreign),
            foreign_memory=sum(p.memory or 0 for p in foreign) + unlisted_memory(reading, listed),
            max_jobs=cfg.max_jobs,
            utilization=reading.utilization,
            links=reading.links,
            node=reading.node,
            host=reading.host,
        )

    def unlisted(self, index: int) -> tuple[Device, str]:
        """A GPU `listing` leaves out (a job may still run there) and why (`_why_unlisted`),
        as seen now or last seen; its memory use and utilisation are unknown while it is not
        seen."""
        cfg = self._config.get(index)
        reading = self._readings.get(index)
        if reading is None:
            last = self._seen.get(index) or self._never_seen(index)
            reading = replace(last, memory_used=None, utilization=None, processes=())
        gone = DeviceConfig(index, 1, DeviceState.ENABLED)
        return self._device(index, cfg or gone, reading), self._why_unlisted(index)

    def _why_unlisted(self, index: int) -> str:
        """ "lost" (configured, not seen now), "removed" (by `gpus remove`), or "unconfigured":
        not among the GPUs this daemon was started with (a job ran there under an earlier
        setup: `--fake-gpus 4`, then `--fake-gpus 2`), which no one removed."""
        if index in self._config:
            return "lost"
        return "removed" if index in self._removed() else "unconfigured"

    def _never_seen(self, index: int) -> GpuReading:
        """A GPU this daemon has not seen: nothing known of it, its name neither ("-", as
        other unknowns are shown; it was "GPU")."""
        return GpuReading(index, None, "-", None, None, None, ())

    def gone(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        """Of `indices` (a running job's GPUs), each that `listing` leaves out now, and why, as
        `unlisted` says it: `{"index": 1, "state": "lost"}` (or "removed", "unconfigured")."""
        return [
            {"index": i, "state": self._why_unlisted(i)}
            for i in indices
            if i not in self._config or i not in self._readings
        ]

    def processes(self, index: int) -> list[GpuProcessView]:
        """What runs on a GPU, with the user of each foreign process."""
        return [
            replace(p, user=user_of(p.pid)) if p.job_id is None else p
            for p in self._processes.get(index, [])
        ]

    def missing(self) -> list[Device]:
        """Configured GPUs the probe does not see now, as last seen (of unknown size when
        never seen): they may come back, so a job only they could run is not refused."""
        return [self.unlisted(i)[0] for i in sorted(set(self._config) - set(self._readings))]

    @property
    def adds_any(self) -> bool:
        """Whether `gpuherd gpus add N` takes any N (a static `--gpus` list, no driver)."""
        return isinstance(self.probe, StaticProbe)

    def unused(self) -> list[int]:
        """GPUs the probe sees that are not configured (removed, or never added)."""
        return sorted(set(self._readings) - set(self._config))

    def reading(self, index: int) -> GpuReading | None:
        return self._readings.get(index)

    def configured(self) -> dict[int, DeviceConfig]:
        return dict(self._config)

    # ---- changes (take effect at the next tick, no restart) -------------------------------

    def add(self, index: int, slots: int | None) -> tuple[DeviceConfig | None, DeviceConfig]:
        """Use GPU `index` with `slots`; a GPU already configured keeps its state (a
        draining one goes on draining). Without `slots`, a GPU keeps the slots it has, or had
        when it was removed (re-adding it must not undo the slots chosen for it); a new one
        gets 1. Returns its configuration before (None if not configured) and now."""
        if slots is not None and not 1 <= slots <= MAX_SLOTS:
            raise InvalidValue(f"slots (--slots) must be 1 to {MAX_SLOTS}, got {slots}")
        if isinstance(self.probe, StaticProbe) and index not in self._readings:
            self.probe = StaticProbe([*self._readings, index])
            self.refresh()
        if index not in self._readings:
            raise NotFound(self._not_seen(index))
        before = self._config.get(index)
        removed = self._removed()
        kept = before or removed.get(index)
        if slots is None and kept is not None:  # its cap on --mem jobs too (`--gpus 0,0`)
            slots, max_jobs = kept.slots, kept.max_jobs
        else:
            slots = slots or 1
            max_jobs = slots if slots > 1 else None
        # A removed GPU given back is one to use: not draining, whatever it was.
        state = DeviceState.ENABLED if before is None else before.state
        if removed.pop(index, None) is not None:
            self._keep_removed(removed)
        self._put(now := DeviceConfig(index, slots, state, max_jobs))
        return before, now

    def remove(self, index: int) -> bool:
        """Stop using GPU `index`; False when it was removed already (nothing done): asked
        again, a removal holds, as a drain asked again does (`set_state`)."""
        if index not in self._config and index in self._removed():
            return False
        if index not in self._config and self._heard_of(index):
            # (not `_require`'s "`gpuherd gpus add N` adds it": the opposite of what was asked)
            raise NotFound(f"{self._not_configured(index)}: nothing to remove")
        cfg = self._require(index)
        self.store.remove_device(index)
        del self._config[index]
        self._keep_removed({**self._removed(), index: cfg})
        self._on_change()
        return True

    def _removed(self) -> dict[int, DeviceConfig]:
        return removed_gpus(self.store)

    def _keep_removed(self, removed: dict[int, DeviceConfig]) -> None:
        keep_removed(self.store, removed)

    def removed(self) -> list[int]:
        """The GPUs removed (`gpuherd gpus remove`) and not added since, seen or not."""
        return sorted(set(self._removed()) - set(self._config))

    def removed_seen(self) -> list[int]:
        """The GPUs removed (`gpuherd gpus remove`) that the probe sees: those a start keeps
        out, said at start as drains are (daemon_status_text.start_notes)."""
        return sorted(set(self._removed()) & set(self._readings) - set(self._config))

    def set_state(self, index: int, state: DeviceState) -> DeviceState:
        """Put GPU `index` in `state`; the state it was in (the same: nothing done)."""
        cfg = self._require(index)
        if cfg.state is not state:
            self._put(replace(cfg, state=state))
        return cfg.state

    def _require(self, index: int) -> DeviceConfig:
        """A GPU's configuration; NotFound says what to do: add it, or name another one."""
        if (cfg := self._config.get(index)) is not None:
            return cfg
        if index in self._readings or self.adds_any:  # `add` takes it
            raise NotFound(f"{self._not_configured(index)}: `gpuherd gpus add {index}` adds it")
        raise NotFound(self._not_seen(index))

    def _heard_of(self, index: int) -> bool:
        """Seen, removed, running jobs, or any of a static `--gpus` list: not a typo."""
        known = index in self._readings or index in self._removed() or self._has_jobs(index)
        return known or self.adds_any

    def _has_jobs(self, index: int) -> bool:
        return any(index in job.gpus for job in self._jobs())

    def _not_configured(self, index: int) -> str:
        known = ",".join(str(i) for i in sorted(self._config)) or "none"
        return f"GPU {index} is not configured (configured: {known})"

    def _not_seen(self, index: int) -> str:
        """A GPU the probe does not see, as every verb says it (`add`: "is not present")."""
        seen = ",".join(str(i) for i in sorted(self._readings)) or "none"
        if index in self._config:  # (`add` alone gets here: a configured GPU gone missing)
            return (
                f"GPU {index} is configured but missing (the probe sees: {seen}): "
                f"`gpuherd gpus add {index}` again once the probe sees it"
            )
        if index in self._removed():
            # A lost GPU removed (its jobs still listed on its `removed` row) was told "nor
            # seen by the probe: name a GPU that `gpuherd gpus` lists", which lists it.
            return (
                f"GPU {index} was removed (gpuherd gpus remove) and the probe does not see it "
                f"now (it sees: {seen}): `gpuherd gpus add {index}` once the probe sees it again"
            )
        said = self._not_configured(index)
        if self._has_jobs(index):
            # Its row (`unconfigured`) is kept for the jobs that run there: it was told to
            # "name a GPU that `gpuherd gpus` lists", which listed it.
            if self.on_cluster:
                return f"{said}: no node of the cluster has it now (its row stays for its jobs)"
            return (
                f"{said}: not among the GPUs this daemon started with (its row stays while "
                f"its jobs run), and the probe does not see it (it sees: {seen}): to use it "
                "again, `gpuherd daemon stop`, then `gpuherd daemon start` with GPUs that "
                "include it (--gpus or --fake-gpus; running jobs go on)"
            )
        return f"{said}, nor seen by the probe: name a GPU that `gpuherd gpus` lists"

    def _put(self, cfg: DeviceConfig) -> None:
        self.store.put_device(cfg)
        self._config[cfg.index] = cfg
        self._on_change()


@dataclass(frozen=True)
class ProbeFailure:
    """The probe fails since `since` (epoch seconds), for `reason` (the latest)."""

    since: float
    reason: str


def local_time(stamp: float) -> str:
    """An epoch time as the daemon's log and `gpuherd gpus` show it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))
