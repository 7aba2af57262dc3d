"""Races around `ls` read off the loop (listing_reader.py, api/jobs.py list_jobs): a client
that goes while a big answer is sent, two listings at once, and the daemon's stop while
the listing thread lets go of its connection.

The engine runs in-process, as the daemon builds it, with its listing reader (as
test_ls_off_loop.py does); the listing thread is held at gates (threading events, never
timings)."""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from test_ls_off_loop import daemon_like, get_scope

from conftest import item, one_gpu_engine, serving
from gpuherd import gc_pause, listing_reader
from gpuherd.api import jobs as api_jobs
from gpuherd.api.app import create_app
from gpuherd.executors.local import LocalExecutor
from gpuherd.listing import ListingQuery
from gpuherd.listing_reader import ListingReader
from gpuherd.store import Store
from gpuherd.store_reader import ReadOnlyStore

BIG = 4000
"""Jobs whose listing is over a MiB of JSON: sent in pieces."""
EVERY_JOB = ListingQuery(all_jobs=True)


def test_a_client_gone_mid_answer_leaves_no_answer_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that goes after the first MiB of a big listing (`gpuherd ls` stopped with
    Ctrl-C): the daemon lets go of the answer as it ends the response. Streamed, the answer
    (68 MB for 100,000 jobs) stayed in a reference cycle (the cancelled stream's frames and
    their CancelledError) until a full collection: measured in a daemon, +70 MB of memory
    with each client gone, for as long as no full collection ran."""
    bodies: list[bytes] = []
    real_encoded = listing_reader.encoded

    def encoded(*args: Any) -> bytes:
        body = real_encoded(*args)
        bodies.append(body)
        return body

    monkeypatch.setattr(api_jobs, "encoded", encoded)

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            service.submit([item(tmp_path, "true", hold=True)] * BIG)
            app = create_app(service, pid=os.getpid(), socket_path=str(tmp_path / "herd.sock"))
            gone = asyncio.Event()
            asked = False
            received: list[bytes] = []

            async def receive() -> dict[str, Any]:
                nonlocal asked
                if not asked:
                    asked = True
                    return {"type": "http.request", "body": b"", "more_body": False}
                await gone.wait()
                return {"type": "http.disconnect"}

            async def send(message: dict[str, Any]) -> None:
                if gone.is_set():  # as uvicorn's h11 cycle does once the client went
                    return
                if message["type"] == "http.response.body" and message.get("body"):
                    received.append(bytes(message["body"]))  # (a copy: no view kept)
                    gone.set()  # the client reads the first piece, then goes

            loop = asyncio.get_running_loop()
            workers = ThreadPoolExecutor(2)  # the route's asyncio.to_thread's
            loop.set_default_executor(workers)
            gc.disable()  # a cycle must not be hidden by a collection meanwhile
            try:
                await app(get_scope("/api/v1/jobs", "all=true", "2.3"), receive, send)
                # Its threads joined: each lets go of its last work item (the encoded answer
                # in its future) whenever it gets to it.
                workers.shutdown(wait=True)
                loop.set_default_executor(ThreadPoolExecutor(2))
                (body,) = bodies
                assert len(received) == 1 and len(body) > len(received[0])
                # Held by `bodies`, `body` and getrefcount's argument alone: nothing else kept
                # it (counted outside the assert, whose rewriting holds its operands).
                held = sys.getrefcount(body)
                assert held == 3, [type(r).__name__ for r in gc.get_referrers(body)]
            finally:
                gc.enable()

    asyncio.run(main())
    assert gc.isenabled() and gc_pause._inside == 0


def test_two_big_listings_at_once_are_each_whole_and_the_loop_serves_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `ls` at once: the second waits behind the first on the one listing thread, the
    loop answers meanwhile, each answer is the whole listing, and the collector is back on
    once both are done."""
    there, go = threading.Event(), threading.Event()
    real_views: Callable[..., Any] = listing_reader.stored_views
    entered: list[str] = []

    def stored_views(*args: Any) -> Any:
        entered.append(threading.current_thread().name)
        if len(entered) == 1:  # the first listing held on its thread
            there.set()
            assert go.wait(30)
        return real_views(*args)

    monkeypatch.setattr(listing_reader, "stored_views", stored_views)

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            ids = service.submit([item(tmp_path, "true", hold=True)] * 300)
            first = asyncio.create_task(service.ls_off_loop(EVERY_JOB))
            assert await asyncio.to_thread(there.wait, 30)
            second = asyncio.create_task(service.ls_off_loop(EVERY_JOB))
            await asyncio.sleep(0)  # the second is on its way to the listing thread
            # The loop answers while the listing thread is held, the collector off.
            assert service.show(ids[0])["state"] == "held" and not gc.isenabled()
            assert entered == ["gpuherd-listing_0"] and not second.done()
            go.set()
            for views, more in await asyncio.gather(first, second):
                assert [v["id"] for v in views] == ids and more.total == 0
            assert entered == ["gpuherd-listing_0"] * 2

    asyncio.run(main())
    assert gc.isenabled() and gc_pause._inside == 0


def test_the_daemon_stops_while_the_listing_thread_lets_go_of_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's connection closed on the listing thread (herd.db replaced under the
    daemon, or a read refused) just as the daemon stops: ListingReader.close interrupted a
    connection closed by then, and its ProgrammingError left the daemon's stop half done
    (the engine never closed)."""
    home = tmp_path / "home"
    home.mkdir()
    closing, go = threading.Event(), threading.Event()
    real_close = ReadOnlyStore.close

    def close(self: ReadOnlyStore) -> None:
        real_close(self)
        if threading.current_thread() is not threading.main_thread():
            closing.set()  # closed, not yet forgotten by the reader (ListingReader._drop)
            assert go.wait(30)

    monkeypatch.setattr(ReadOnlyStore, "close", close)

    async def main() -> None:
        store = Store(home / "herd.db")
        try:
            async with serving(one_gpu_engine(home, store, LocalExecutor()), home) as service:
                reader = service.reader = ListingReader(store)
                service.submit([item(home, "true", hold=True)])
                assert len((await service.ls_off_loop(EVERY_JOB))[0]) == 1  # reader open
                other = sqlite3.connect(tmp_path / "other.db")
                other.close()
                os.replace(tmp_path / "other.db", home / "herd.db")  # the reader drops it
                listing = asyncio.create_task(service.ls_off_loop(EVERY_JOB))
                assert await asyncio.to_thread(closing.wait, 30)
                real_shutdown = reader._pool.shutdown

                def shutdown(wait: bool = True, **kwargs: Any) -> None:
                    go.set()  # past the interrupt: the thread may go on, and is joined
                    real_shutdown(wait, **kwargs)

                monkeypatch.setattr(reader._pool, "shutdown", shutdown)
                reader.close()
                views, _ = await listing  # read on the loop, of the daemon's file
                assert len(views) == 1
        finally:
            go.set()
            store.close()

    asyncio.run(main())
