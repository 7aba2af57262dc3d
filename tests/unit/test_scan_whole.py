"""The engine's pass over a real store (engine_scan.Scan: a window, the streams of each GPU
count behind it, the streams it leaves out) places what one pass over the whole queue does.

The window leaves out the jobs that cannot start or hold in the pass (CPU-only jobs past
cpu-jobs, jobs asking for more GPUs than are open and not starving, those after a hold):
nothing placement decides may change for it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from test_placement import NOW, PROPS, Case, cases

from gpuherd.core.caps import pass_offering
from gpuherd.core.placement import Placed, cpu_slots_left, place
from gpuherd.engine_scan import Scan
from gpuherd.store import NewJob, Store


def scanned(store: Store, case: Case) -> Placed:
    """A pass as the engine makes it (Engine._plan_starts, without sweeps)."""
    devices, reservations, policy = case.devices, case.reservations, case.policy
    offer = pass_offering({}, {}, devices, reservations, policy, NOW)
    scan = Scan(store)
    cpu_jobs = cpu_slots_left(reservations, policy) != 0
    with scan.reading(offer, cpu_jobs) as (jobs, behind, _):
        return place(
            jobs,
            devices,
            reservations,
            policy,
            NOW,
            host_free=case.host_free,
            behind=behind,
            cpu_full=scan.cpu_full,
            held=scan.held,
        )


@PROPS
@given(cases())
def test_the_engine_pass_places_what_a_pass_over_the_whole_queue_does(case: Case) -> None:
    with tempfile.TemporaryDirectory(prefix="scan-whole-") as tmp:
        store = Store(Path(tmp) / "herd.db")
        try:
            for job in case.pending:  # (in dispatch order: the store keeps it)
                store.add_jobs([NewJob(job.spec, priority=job.priority)], now=job.queued_at)
            whole = list(store.queued_ready())
            args = (case.devices, case.reservations, case.policy, NOW)
            assert scanned(store, case) == place(whole, *args, host_free=case.host_free)
        finally:
            store.close()
