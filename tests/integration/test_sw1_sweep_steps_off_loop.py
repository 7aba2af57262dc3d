"""A sweep's submission plans its points and checks their jobs on worker threads (sweeps.py,
sweep_plan.py, Service.submission_check): while each of those steps runs, the daemon's loop
answers its other clients. Each step is held here until another verb has been answered on
the loop; run on the loop, the step would hold the loop instead, and wait in vain. The
submission that follows is the one made in one go: every point queued once, in order."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import one_gpu_engine, serving
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store
from gpuherd.sweeps import Sweeps
from gpuherd.wire_requests import SweepOptions, SweepRequest

POINTS = 40
STEPS = {
    "expansion": "gpuherd.sweep_specs._expand",
    "jobs-checked": "gpuherd.service.spec_from_item",
    "scripts-looked-for": "gpuherd.sweep_checks.missing_script_hints",
}


@pytest.mark.parametrize("step", STEPS.values(), ids=STEPS.keys())
def test_other_verbs_are_answered_while_a_step_of_a_sweeps_submission_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    store = Store(tmp_path / "herd.db")
    spec = {"name": "big", "command": "true {x}", "grids": [{"x": list(range(POINTS))}]}
    request = SweepRequest(spec=spec, cwd=str(tmp_path), options=SweepOptions(hold=True))
    underway, go_on = threading.Event(), threading.Event()
    released: list[bool] = []
    module, _, name = step.rpartition(".")
    real = getattr(__import__(module, fromlist=[name]), name)

    def held(*args: Any, **kwargs: Any) -> Any:
        if not underway.is_set():  # its first call waits for the loop to answer another verb
            underway.set()
            released.append(go_on.wait(20))  # False: it held the loop, which never answered
        return real(*args, **kwargs)

    monkeypatch.setattr(step, held)

    async def main() -> tuple[bool, int, dict[str, Any]]:
        async with serving(one_gpu_engine(tmp_path, store, LocalExecutor()), tmp_path) as service:
            submission = asyncio.create_task(Sweeps(service).submit(request))
            await asyncio.wait_for(_until(underway), 60)
            listed, _ = service.ls()  # another client's verb, answered on the loop meanwhile
            pending = not submission.done()
            go_on.set()
            return pending, len(listed), await submission

    pending, listed, answer = asyncio.run(main())
    assert released == [True] and pending
    assert listed == 0  # asked before the sweep was stored
    assert answer["new"] == POINTS and len(answer["ids"]) == POINTS
    jobs = store.sweep_jobs("big")
    assert [job.id for job in jobs] == answer["ids"]
    assert sorted(job.spec.folder for job in jobs) == sorted(
        str(tmp_path / "results" / "big" / f"x={x}") for x in range(POINTS)
    )


async def _until(event: threading.Event) -> None:
    while not event.is_set():
        await asyncio.sleep(0.01)
