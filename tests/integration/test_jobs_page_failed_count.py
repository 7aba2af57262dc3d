"""The jobs page's *Retry all failed* asks with the number of failed jobs it retries, counted
again at each live refresh of the table: a second COUNT, over every job a search or a sweep
names, every 10 s of a quiet queue. It is counted again only once a change is published, and
not at all on a page of each sweep point's latest failed jobs alone (its total is that
number). Two COUNTs: the jobs it retries, and every failed job, as it leaves out older runs
of points run again since (`retry` refuses them) and its question says so; a page of failed
jobs alone has the second as its total."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from conftest import item, one_gpu_engine, serving
from gpuherd.api.views import JobFilter
from gpuherd.api.views_jobs import jobs_page
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.service import Service
from gpuherd.store import Store


async def _ended(store: Store, ids: list[int], timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        jobs = [store.get_job(i) for i in ids]
        if all(job is not None and job.state is JobState.FAILED for job in jobs):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"jobs {ids} did not fail: {[store.get_job(i) for i in ids]}")


def _counting(service: Service, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """The failed jobs' counts that the page asks Service.page_jobs for (limit 0)."""
    asked: list[tuple[Any, ...]] = []
    real = service.page_jobs

    def page_jobs(*args: Any) -> tuple[int, list[dict[str, Any]]]:
        if args[0] == (JobState.FAILED.value,) and args[5] == 0:
            asked.append(args)
        return real(*args)

    monkeypatch.setattr(service, "page_jobs", page_jobs)
    return asked


def test_the_failed_jobs_are_counted_again_only_after_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def main() -> None:
        store = Store(tmp_path / "herd.db")
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            failing = service.submit([item(tmp_path, "exit 3", gpus=0)] * 2)
            service.submit([item(tmp_path, "true", hold=True)])
            await _ended(store, failing)
            asked = _counting(service, monkeypatch)
            searched = JobFilter(text="exit")
            first = jobs_page(service, searched)
            assert (first.total, first.failed, first.older, len(asked)) == (2, 2, 0, 2)
            again = jobs_page(service, searched)  # a live refresh, nothing changed since
            assert (again.failed, len(asked)) == (2, 2)
            assert again.retry_question == "Retry all 2 failed jobs of this filter, on every page?"
            # A change (a third job failed): counted again, and the question says so.
            await _ended(store, service.submit([item(tmp_path, "exit 4", gpus=0)]))
            after = jobs_page(service, searched)
            assert (after.failed, len(asked)) == (3, 4)
            # A page of failed jobs alone: its total is every failed job, one count less.
            failed_only = jobs_page(service, JobFilter(states=(JobState.FAILED.value,)))
            assert (failed_only.total, failed_only.failed, len(asked)) == (3, 3, 5)
            # Of the latest runs of points alone: its total is the number, no count at all.
            latest = JobFilter(states=(JobState.FAILED.value,), latest=True)
            assert (jobs_page(service, latest).failed, len(asked)) == (3, 5)

    asyncio.run(asyncio.wait_for(main(), 60))
