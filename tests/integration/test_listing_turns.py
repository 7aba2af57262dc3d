"""The cycle collector between listings that follow one another (gc_pause.py): each `GET
/jobs` holds it off from its read to its answer's end, and listings that overlap (`ls -w`
every 2 s over a big queue, two dashboards) held it off until none was left, so clients
listing back to back kept it off for good. Each listing that ends while another is under way
is now followed by a young collection, and none is full.

The daemon's app and listing reader run in-process (test_ls_off_loop.py's daemon_like);
each listing is held in its answer's encoding (off the loop) until the test lets it go."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_ls_off_loop import _get, daemon_like

from conftest import item
from gpuherd import gc_pause, listing_reader
from gpuherd.api import jobs as api_jobs


def test_listings_back_to_back_let_the_collector_run_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A, then B while A is under way, then C while B is: after A's end and after B's, a
    collection of the young generations ran (before, none ran until C's end)."""
    events: list[tuple[str, str]] = []
    arrived = {name: threading.Event() for name in "ABC"}
    release = {name: threading.Event() for name in "ABC"}
    order = iter("ABC")
    real_encoded: Callable[..., bytes] = listing_reader.encoded

    def encoded(*args: Any) -> bytes:  # on a thread of its own (asyncio.to_thread)
        name = next(order)
        arrived[name].set()
        assert release[name].wait(30), f"listing {name} never let go"
        return real_encoded(*args)

    monkeypatch.setattr(api_jobs, "encoded", encoded)

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and arrived["A"].is_set():
            events.append(("collection", f"generation {info['generation']}"))

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            ids = service.submit([item(tmp_path, "true", hold=True)] * 50)

            async def listing(name: str) -> asyncio.Task[tuple[dict[str, Any], bytes]]:
                task = asyncio.create_task(_get(service, "/api/v1/jobs", "all=true"))
                assert await asyncio.to_thread(arrived[name].wait, 30), f"{name} never came"
                return task

            async def ended(name: str, task: asyncio.Task[tuple[dict[str, Any], bytes]]) -> None:
                events.append(("let go", name))
                release[name].set()
                _, body = await task
                assert body.count(b'"id":') == len(ids)
                events.append(("ended", name))

            gc.callbacks.append(seen)
            try:
                a = await listing("A")
                b = await listing("B")
                await ended("A", a)
                c = await listing("C")
                await ended("B", b)
                await ended("C", c)
            finally:
                gc.callbacks.remove(seen)
                for gate in release.values():
                    gate.set()

    asyncio.run(main())
    assert gc.isenabled() and gc_pause._inside == 0
    for name in "AB":
        between = events[events.index(("let go", name)) : events.index(("ended", name))]
        assert ("collection", "generation 1") in between, f"none as {name} ended: {events}"
    held_off = events[: events.index(("let go", "C"))]
    assert ("collection", "generation 2") not in held_off, events  # no full one


def test_a_collector_turned_off_by_the_program_stays_off_and_unrun() -> None:
    """A process that turned the collector off itself (a Python API user's): overlapping
    pauses neither turn it on nor collect."""
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.disable()
    gc.callbacks.append(seen)
    try:
        first, second = gc_pause.collector_paused(), gc_pause.collector_paused()
        first.__enter__()
        with gc_pause.collector_paused():
            pass  # ends the first pause's turn: the next listing waits for another
        second.__enter__()
        first.__exit__(None, None, None)  # the first pause over, the second under way
        assert not gc.isenabled()
        second.__exit__(None, None, None)
        assert not gc.isenabled() and collections == [] and gc_pause._inside == 0
    finally:
        gc.callbacks.remove(seen)
        gc.enable()
