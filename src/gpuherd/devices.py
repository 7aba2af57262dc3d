"""The GPUs as the engine sees them: the user's configuration (slots, draining) merged with
the probe's latest reading, refreshed on a telemetry timer."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable

from gpuherd.core.model import Device, DeviceState
from gpuherd.errors import HerdError, NotFound
from gpuherd.gpus.base import GpuProbe, GpuReading, ProbeError
from gpuherd.gpus.static import StaticProbe
from gpuherd.store import DeviceConfig, Store

log = logging.getLogger("gpuherd.devices")

TELEMETRY_INTERVAL = 2.0


class DeviceTable:
    def __init__(self, store: Store, probe: GpuProbe, interval: float = TELEMETRY_INTERVAL) -> None:
        self.store = store
        self.probe = probe
        self.interval = interval
        self._config = {d.index: d for d in store.devices()}
        self._readings: dict[int, GpuReading] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_change: Callable[[], None] = lambda: None
        self.refresh()

    def start(self, loop: asyncio.AbstractEventLoop, on_change: Callable[[], None]) -> None:
        self._loop, self._on_change = loop, on_change
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

    def refresh(self) -> bool:
        """Read the probe; True when what placement sees has changed."""
        try:
            readings = {r.index: r for r in self.probe.read()}
        except ProbeError as exc:
            log.warning("GPU probe failed, keeping the last reading: %s", exc)
            return False
        changed = readings != self._readings
        self._readings = readings
        return changed

    # ---- views ----------------------------------------------------------------------------

    def listing(self, our_pgids: set[int]) -> list[Device]:
        """Configured GPUs that the probe sees now, with their telemetry."""
        out = []
        for index, cfg in sorted(self._config.items()):
            reading = self._readings.get(index)
            if reading is None:
                continue  # configured but not present (lost, or the probe no longer sees it)
            foreign = sum(1 for p in reading.processes if not _in_groups(p.pid, our_pgids))
            out.append(
                Device(
                    index=index,
                    uuid=reading.uuid,
                    name=reading.name,
                    slots=cfg.slots,
                    state=cfg.state,
                    memory_total=reading.memory_total,
                    memory_used=reading.memory_used,
                    foreign_processes=foreign,
                )
            )
        return out

    def missing(self) -> list[int]:
        """Configured GPUs the probe does not see."""
        return sorted(set(self._config) - set(self._readings))

    def reading(self, index: int) -> GpuReading | None:
        return self._readings.get(index)

    def configured(self) -> dict[int, DeviceConfig]:
        return dict(self._config)

    # ---- changes (take effect at the next tick, no restart) -------------------------------

    def add(self, index: int, slots: int) -> None:
        if slots < 1:
            raise HerdError(f"--slots must be at least 1, got {slots}")
        if isinstance(self.probe, StaticProbe) and index not in self._readings:
            self.probe = StaticProbe([*self._readings, index])
            self.refresh()
        if index not in self._readings:
            seen = ",".join(str(i) for i in sorted(self._readings)) or "none"
            raise NotFound(f"GPU {index} is not present (the probe sees: {seen})")
        self._put(DeviceConfig(index, slots, DeviceState.ENABLED))

    def remove(self, index: int) -> None:
        self._require(index)
        self.store.remove_device(index)
        del self._config[index]
        self._on_change()

    def set_state(self, index: int, state: DeviceState) -> None:
        cfg = self._require(index)
        self._put(DeviceConfig(index, cfg.slots, state))

    def set_slots(self, index: int, slots: int) -> None:
        cfg = self._require(index)
        self._put(DeviceConfig(index, slots, cfg.state))

    def _require(self, index: int) -> DeviceConfig:
        try:
            return self._config[index]
        except KeyError:
            known = ",".join(str(i) for i in sorted(self._config)) or "none"
            raise NotFound(f"GPU {index} is not configured (configured: {known})") from None

    def _put(self, cfg: DeviceConfig) -> None:
        self.store.put_device(cfg)
        self._config[cfg.index] = cfg
        self._on_change()


def _in_groups(pid: int, pgids: set[int]) -> bool:
    try:
        return os.getpgid(pid) in pgids
    except OSError:
        return False
