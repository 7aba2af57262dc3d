"""The verbs on the queue as a whole, the GPUs, the settings and the daemon (not on jobs)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gpuherd import __version__, config
from gpuherd.core.idspec import MAX_GPU_INDEX
from gpuherd.core.model import DeviceState
from gpuherd.core.units import plural
from gpuherd.engine import Engine
from gpuherd.errors import Conflict, HerdError
from gpuherd.hooks import hooks_from_now
from gpuherd.store import Store
from gpuherd.wire import device_view


class SystemVerbs:
    """Part of `Service` (which sets these attributes)."""

    engine: Engine
    home: Path
    store: Store
    started_at: float
    stop_mode: str | None = None
    """How the daemon was asked to stop (`leave`, `drain` or `kill`); None while it serves."""

    def asked_to_stop(self, mode: str) -> None:
        """The daemon was asked to stop (`gpuherd daemon stop [--drain | --kill]`)."""
        self.stop_mode = mode
        self._changed("stopping")  # open pages show it at once, as they show a pause

    def pause_queue(self, paused: bool) -> str:
        if not paused and self.engine.stopping:
            raise Conflict(
                "cannot resume dispatch while the daemon drains: it stops once its running "
                "jobs end, and the next `gpuherd daemon start` dispatches the queue again"
            )
        self.engine.set_queue_paused(paused)
        return "queue paused: running jobs go on, nothing new starts" if paused else "queue resumed"

    def gpus(self) -> dict[str, Any]:
        jobs_on: dict[int, list[int]] = {}
        for live in self.engine.live.values():
            for index in live.gpus:
                jobs_on.setdefault(index, []).append(live.job_id)
        devices = self.engine.device_listing()
        table = self.engine.devices
        return {
            "probe": table.probe.describe(),
            "gpus": [
                {
                    **device_view(d, sorted(jobs_on.get(d.index, [])), table.processes(d.index)),
                    "history": [list(sample) for sample in table.history.get(d.index, ())],
                }
                for d in devices
            ],
            "missing": self.engine.devices.missing(),
        }

    def gpu_add(self, index: int, slots: int) -> str:
        if not 0 <= index <= MAX_GPU_INDEX:  # as the CLI takes them (a typo, else)
            raise HerdError(f"GPU {index} is not a GPU index: use 0 to {MAX_GPU_INDEX}")
        self.engine.devices.add(index, slots)
        self._changed("gpus")
        return f"GPU {index} added with {plural(slots, 'slot')}"

    def gpu_remove(self, index: int) -> str:
        self.engine.devices.remove(index)
        self._changed("gpus")
        return f"GPU {index} removed; jobs running on it go on"

    def gpu_state(self, index: int, state: DeviceState) -> str:
        self.engine.devices.set_state(index, state)
        self._changed("gpus")
        if state is DeviceState.DRAINING:
            return f"GPU {index} draining: running jobs finish, nothing new starts there"
        return f"GPU {index} enabled"

    def config(self) -> dict[str, dict[str, str]]:
        return config.describe(self.engine.policy, self.store)

    def set_config(self, name: str, value: str) -> str:
        engine = self.engine
        defaults = engine.policy_defaults
        engine.policy = config.change(self.store, engine.policy, name, value, defaults)
        if name == "on-end":
            hooks_from_now(self.store)
        self._changed("config")
        engine.wake()
        return f"{name} = {config.describe(engine.policy, self.store)[name]['value']}"

    def _changed(self, what: str) -> None:
        """Tell watchers that the GPUs or settings changed: why each queued job waits may have
        (a job's page refreshes its reason on such a change)."""
        self.engine.changes.publish({"event": what})

    def status(self, pid: int, socket: str) -> dict[str, Any]:
        return {
            "pid": pid,
            "socket": socket,
            "home": str(self.home),
            "version": __version__,
            "uptime": time.time() - self.started_at,
            "queue_paused": self.engine.queue_paused,
            "stopping": self.stop_mode,
            "running_jobs": len(self.engine.live),
            "probe": self.engine.devices.probe.describe(),
            "gpus": [d.index for d in self.engine.device_listing()],
            "counts": self.store.counts(),
        }
