"""A job's end is seen only once its files are written (SUCCESS or FAILURE, and job.json with
its end): by watchers of the engine's changes (what `gpuherd wait`, `ls`, events and `run`'s
report follow), and by a job that waited for it (`--after`), which may read its marker.

The engine writes them after the spawns of the GPUs' next jobs, but before that of a job
waiting for them. Here every job's end files take 50 ms to write (a slow disk): an end seen
too early finds them missing. In-process engine on one fake GPU, real processes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import item, one_gpu_engine, serving
from gpuherd import jobfiles
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store

SLOW_WRITE = 0.05
ENDED = {JobState.SUCCEEDED.value, JobState.FAILED.value}


@pytest.fixture
def slow_end_files(monkeypatch: pytest.MonkeyPatch) -> None:
    written = jobfiles.record_end

    def slowly(*args: Any, **kwargs: Any) -> None:
        time.sleep(SLOW_WRITE)
        written(*args, **kwargs)

    monkeypatch.setattr(jobfiles, "record_end", slowly)


def end_files(job_dir: Path) -> tuple[list[str], object]:
    """The job folder's markers, and the end its job.json gives (None: no end, no file)."""
    markers = [name for name in jobfiles.MARKERS if (job_dir / name).exists()]
    try:
        ended = json.loads((job_dir / "job.json").read_text()).get("ended_at")
    except OSError:
        ended = None
    return markers, ended


def test_an_end_is_heard_after_its_files(tmp_path: Path, slow_end_files: None) -> None:
    store = Store(tmp_path / "herd.db")
    commands = ["true", "exit 3", "true", "exit 3", "true", "true"]

    async def main() -> dict[int, tuple[str, tuple[list[str], object]]]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        heard = engine.changes.subscribe(backlog=0)
        found: dict[int, tuple[str, tuple[list[str], object]]] = {}
        async with serving(engine, tmp_path) as service:
            ids = service.submit([item(tmp_path, command) for command in commands])
            while len(found) < len(ids):
                change = await asyncio.wait_for(heard.get(), 30)
                if change is not None and change.get("state") in ENDED:
                    job = store.get_job(change["id"])
                    assert job is not None
                    # (looked at as the change is heard, before anything else runs)
                    files = end_files(engine.layout.job_dir(job))
                    found[job.id] = (change["state"], files)
        return found

    found = asyncio.run(main())
    store.close()
    for job_id, (state, (markers, ended)) in found.items():
        marker = "SUCCESS" if state == JobState.SUCCEEDED.value else "FAILURE"
        assert markers == [marker], f"job {job_id} heard {state}, its folder had {markers}"
        assert isinstance(ended, float), f"job {job_id} heard {state}, job.json ended {ended}"


@pytest.mark.parametrize(
    ("first", "kind", "marker"),
    [
        ("true", "after", "SUCCESS"),
        ("exit 3", "after_any", "FAILURE"),
        ("exit 3", "after_fail", "FAILURE"),
    ],
)
def test_a_job_after_another_finds_its_marker(
    tmp_path: Path, slow_end_files: None, first: str, kind: str, marker: str
) -> None:
    store = Store(tmp_path / "herd.db")

    async def main() -> list[JobState]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        states: list[JobState] = []
        async with serving(engine, tmp_path) as service:
            for _ in range(3):  # (both queued before the next tick: the second waits)
                [waited] = service.submit([item(tmp_path, first)])
                job = store.get_job(waited)
                assert job is not None
                files = engine.layout.job_dir(job)
                check = f"test -e {files / marker} && grep -q ended_at {files / 'job.json'}"
                [then] = service.submit([item(tmp_path, check, **{kind: [waited]})])
                deadline = time.monotonic() + 30
                while (ended := store.get_job(then)) is None or ended.state.value not in ENDED:
                    assert time.monotonic() < deadline, f"job {then} never ended"
                    await asyncio.sleep(0.02)
                states.append(ended.state)
        return states

    states = asyncio.run(main())
    store.close()
    assert states == [JobState.SUCCEEDED] * 3
