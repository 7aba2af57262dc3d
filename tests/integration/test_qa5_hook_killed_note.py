"""An on-end hook that still runs at its time is killed, with its process group. Its output
in hooks.log then ended on `… the hook's background processes still ran after 60s: what they
print from then on is not kept`, as though it had left a process running on purpose (its
killed `sleep` had not closed the file yet), or on nothing at all."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from conftest import item, one_gpu_engine, serving
from gpuherd.core.model import Policy
from gpuherd.executors.local import LocalExecutor
from gpuherd.hooks import EndHooks
from gpuherd.store import Store


def test_a_hook_killed_at_its_time_says_so_in_hooks_log(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    log = tmp_path / "hooks.log"

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        engine.policy = Policy(on_end="echo early; sleep 600; echo never")
        hooks = EndHooks(engine, tmp_path, timeout=1.0)
        hooks.start()
        async with serving(engine, tmp_path) as service:
            try:
                service.submit([item(tmp_path, "true")])
                deadline = time.monotonic() + 20
                while not log.exists() and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
            finally:
                hooks.stop()  # before the engine closes

    asyncio.run(main())
    store.close()
    assert log.read_text().splitlines()[1:] == [
        "early",
        "… the hook still ran after 1s: killed, with its process group",
    ]
