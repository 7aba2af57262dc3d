"""The engine's placement pass alone, over a real herd.db: what it reads of the queue and
`place`, nothing recorded, no process run (W7 in run.py, and tick_cost.py).

The engine is made to see `busy` of `gpus` GPUs taken (reservations it is handed, not jobs
that run), and `queued` jobs of `per_job` GPUs each, queued `waited` seconds ago (past the
default reserve-after, 300 s, the first one that cannot start reserves GPUs).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def pass_times(
    queued: int, gpus: int, busy: int, per_job: int, passes: int, waited: float = 0.0
) -> list[float]:
    """Seconds each of `passes` placement passes took."""
    with tempfile.TemporaryDirectory(prefix="engine-pass-") as tmp:
        return _pass_times(Path(tmp), queued, gpus, busy, per_job, passes, waited)


def _pass_times(
    tmp: Path, queued: int, gpus: int, busy: int, per_job: int, passes: int, waited: float
) -> list[float]:
    from gpuherd.core.model import JobSpec, Policy, Reservation
    from gpuherd.devices import DeviceTable
    from gpuherd.engine import Engine
    from gpuherd.executors.local import LocalExecutor
    from gpuherd.gpus.fake import FakeGpu, FakeProbe
    from gpuherd.layout import Layout
    from gpuherd.store import NewJob, Store

    store = Store(tmp / "herd.db")
    store.replace_devices(dict.fromkeys(range(gpus), 1))
    probe = FakeProbe([FakeGpu() for _ in range(gpus)])
    layout = Layout.for_run(tmp / "out", "job_", tmp)
    engine = Engine(store, DeviceTable(store, probe), LocalExecutor(), layout, Policy())
    taken = [Reservation(10**9 + i, (i,)) for i in range(busy)]
    engine.reservations = lambda: taken  # type: ignore[method-assign]
    spec = JobSpec(command="true", cwd="/tmp", gpus=per_job)
    store.add_jobs([NewJob(spec) for _ in range(queued)], time.time() - waited)
    engine.devices.refresh_if_older(0)
    devices = engine.device_listing()
    times = []
    for _ in range(passes):
        begin = time.perf_counter()
        engine._plan_starts(devices, time.time())
        times.append(time.perf_counter() - begin)
    engine.close()
    store.close()
    return times
