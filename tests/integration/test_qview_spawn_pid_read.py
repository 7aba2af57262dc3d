"""A job's pid is written with the tick after its spawn (PID_RECORD_DELAY, engine_spawns.py):
`show` (GET /jobs/{id}) and `ls` within that window gave a running job with no pid, where a
verb on it already saw it (Engine.record_spawns). The reads record the pids first now: the
listing on the loop, before the listing thread's snapshot.

The engine runs in-process as the daemon builds it, with the daemon's listing reader; the
pid's tick is put off (PID_RECORD_DELAY: 30 s) so that only the read can have written it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from conftest import group_members, item, one_gpu_engine, serving, wait_for
from gpuherd import engine_spawns
from gpuherd.executors.base import LaunchRequest
from gpuherd.executors.local import LocalExecutor
from gpuherd.listing import ListingQuery
from gpuherd.listing_reader import ListingReader
from gpuherd.store import Store


class SaysItSpawned(LocalExecutor):
    def __init__(self) -> None:
        super().__init__()
        self.pids: list[int] = []
        self.spawned = asyncio.Event()

    def launch(self, request: LaunchRequest) -> int:
        pid = super().launch(request)
        self.pids.append(pid)
        self.spawned.set()
        return pid


@pytest.mark.parametrize("read", ["show", "ls"])
def test_a_job_read_right_after_its_spawn_shows_its_pid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    monkeypatch.setattr(engine_spawns, "PID_RECORD_DELAY", 30.0)
    store = Store(tmp_path / "herd.db")
    executor = SaysItSpawned()

    async def main() -> tuple[int | None, list[str]]:
        async with serving(one_gpu_engine(tmp_path, store, executor), tmp_path) as service:
            reader = service.reader = ListingReader(store)
            try:
                (job_id,) = service.submit([item(tmp_path, "sleep 30")])
                await asyncio.wait_for(executor.spawned.wait(), timeout=10)
                job = store.get_job(job_id)
                assert job is not None and job.pid is None  # not written yet: the read writes it
                if read == "show":
                    view = service.show(job_id)
                    return view["pid"], [e["detail"] for e in view["events"]]
                (listed,), _ = await service.ls_off_loop(ListingQuery(all_jobs=True))
                return listed["pid"], []
            finally:
                reader.close()

    try:
        pid, details = asyncio.run(main())
        (spawned,) = executor.pids
        assert pid == spawned
        if read == "show":
            assert f"pid {spawned}" in details  # its spawn event too, in order
    finally:
        for leader in executor.pids:
            os.killpg(leader, signal.SIGKILL)
            os.waitpid(leader, 0)  # the job's shell is this process's child: leave no zombie
            wait_for(lambda leader=leader: not group_members(leader), what="the job to end")
        store.close()
