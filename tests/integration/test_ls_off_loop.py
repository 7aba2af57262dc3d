"""`ls` read off the daemon's event loop (listing_reader.py): the loop serves other requests
while a listing is built, the listing is one snapshot of the database, it is the listing the
loop would have made, and a herd.db replaced under the daemon is never read.

Each test runs the engine in-process, as the daemon builds it, with the daemon's listing
reader; the listing thread is held at a gate (threading events, never timings) while the
loop does something else."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from conftest import item, kill_jobs_under, one_gpu_engine, serving
from gpuherd import listing_reader
from gpuherd.api import jobs as api_jobs
from gpuherd.api.app import create_app
from gpuherd.core.nearest_now import NOTHING, LeftOut
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.listing import ListingQuery
from gpuherd.listing_reader import ListingReader
from gpuherd.service import Service
from gpuherd.store import Store
from gpuherd.store_reader import ReadOnlyStore

HELD = 300
EVERY_JOB = ListingQuery(all_jobs=True)


@asynccontextmanager
async def daemon_like(home: Path) -> AsyncIterator[Service]:
    """An engine and its Service as the daemon runs them, with a listing reader; the reader
    is closed on the way out, as the daemon closes it, and leaves no thread behind."""
    store = Store(home / "herd.db")
    try:
        async with serving(one_gpu_engine(home, store, LocalExecutor()), home) as service:
            reader = service.reader = ListingReader(store)
            try:
                yield service
            finally:
                reader.close()
                names = [t.name for t in threading.enumerate()]
                assert not [n for n in names if n.startswith("gpuherd-listing")], names
    finally:
        store.close()
        # What the engine left running (as a daemon's leaves its jobs), killed; and the jobs
        # that ended after it closed, reaped: zombies of this process, which a later test
        # counting its children would find (test_run's thousand jobs).
        kill_jobs_under(home)
        for child in psutil.Process().children():
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)


class Gate:
    """Holds the listing thread once `owner.name` has returned, until the test opens the
    gate; says when the thread is there. The loop's own calls pass."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
        self.there = threading.Event()
        self.open = threading.Event()
        real: Callable[..., Any] = getattr(owner, name)

        def held(*args: Any, **kwargs: Any) -> Any:
            found = real(*args, **kwargs)
            if threading.current_thread() is not threading.main_thread():
                self.there.set()
                self.open.wait(30)
            return found

        monkeypatch.setattr(owner, name, held)

    async def reached(self) -> None:
        assert await asyncio.to_thread(self.there.wait, 30), "the listing never got there"


def test_the_daemon_answers_a_small_request_while_a_big_listing_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, listing_reader, "stored_views")

    async def main() -> list[str]:
        async with daemon_like(tmp_path) as service:
            held = service.submit([item(tmp_path, "true", hold=True)] * HELD)
            done: list[str] = []
            listing = asyncio.create_task(service.ls_off_loop(EVERY_JOB))
            listing.add_done_callback(lambda _: done.append("listing"))
            await gate.reached()
            # On the loop while the listing thread is held: a submission and a `show`.
            (late,) = service.submit([item(tmp_path, "true", hold=True)])
            assert service.show(late)["state"] == "held"
            done.append("small requests")
            gate.open.set()
            views, more = await listing
            # The listing is the database as it was when it began: not the late job.
            assert [v["id"] for v in views] == held and more.total == 0
            return done

    assert asyncio.run(main()) == ["small requests", "listing"]


def test_a_listing_is_one_snapshot_while_jobs_change_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain `ls` is three queries (the waiting jobs, the recent finished, the running):
    jobs cancelled and submitted between them appear once each, in the state they had when
    the listing began, or not at all."""
    gate = Gate(monkeypatch, ReadOnlyStore, "waiting_in_order")  # the first of the three

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            held = service.submit([item(tmp_path, "true", hold=True)] * 20)
            before, _ = service.ls()
            listing = asyncio.create_task(service.ls_off_loop())
            await gate.reached()
            service.kill(held[:10])  # held -> cancelled: finished, listed among the recent
            service.submit([item(tmp_path, "true", hold=True)] * 5)
            gate.open.set()
            views, _ = await listing
            assert [(v["id"], v["state"]) for v in views] == [(v["id"], v["state"]) for v in before]
            after, _ = service.ls()
            assert [v["id"] for v in after].count(held[0]) == 1

    asyncio.run(main())


def test_a_listing_off_the_loop_is_the_listing_the_loop_makes(tmp_path: Path) -> None:
    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            running, _ = await _mixed_queue(service, tmp_path)
            for query in QUERIES:
                off_loop = await service.ls_off_loop(query)
                on_loop = service.ls(query)
                assert _timeless(off_loop) == _timeless(on_loop)
                assert all(v["reason"] for v in off_loop[0] if v["state"] == "queued")
            service.kill([running])

    asyncio.run(main())


@pytest.mark.parametrize("read_before", [False, True], ids=["unread", "read-before"])
def test_a_database_replaced_under_the_daemon_is_not_listed(
    tmp_path: Path, read_before: bool
) -> None:
    """herd.db replaced by another database while the daemon runs (a restore done wrong):
    the engine writes the file it opened, and `ls` lists that, not the other one, whether
    the listing reader was open before or opens after."""
    home = tmp_path / "home"
    home.mkdir()

    async def main() -> None:
        async with daemon_like(home) as service:
            service.submit([item(home, "echo mine", hold=True)])
            if read_before:
                assert len((await service.ls_off_loop(EVERY_JOB))[0]) == 1
            _fill_other(tmp_path / "other.db", tmp_path)
            # All of the daemon's log in its herd.db: a reader opening the other file would
            # read that file's pages, not the log's.
            checkpoint = sqlite3.connect(home / "herd.db")
            checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            checkpoint.close()
            os.replace(tmp_path / "other.db", home / "herd.db")
            views, _ = await service.ls_off_loop(EVERY_JOB)
            assert [v["command"] for v in views] == ["echo mine"]
            service.submit([item(home, "echo mine too", hold=True)])
            views, _ = await service.ls_off_loop(EVERY_JOB)
            assert [v["command"] for v in views] == ["echo mine", "echo mine too"]
            assert (views, NOTHING) == service.ls(EVERY_JOB)

    asyncio.run(main())


def test_ls_q_is_read_off_the_loop_in_one_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`GET /jobs?ids_only=true` (`ls -q`) is read on the listing thread: the loop answers
    meanwhile, and the ids are the database's as the read began."""
    gate = Gate(monkeypatch, ReadOnlyStore, "waiting_ids")

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            held = service.submit([item(tmp_path, "true", hold=True)] * HELD)
            listing = asyncio.create_task(_get(service, "/api/v1/jobs", "ids_only=true&all=true"))
            there = asyncio.create_task(gate.reached())
            await asyncio.wait({listing, there}, return_when=asyncio.FIRST_COMPLETED)
            assert not listing.done(), "ls -q was answered on the loop, never by the listing thread"
            await there
            (late,) = service.submit([item(tmp_path, "true", hold=True)])
            assert service.show(late)["state"] == "held"
            gate.open.set()
            _, body = await listing
            assert json.loads(body)["ids"] == held
            assert service.ls_ids(EVERY_JOB) == [*held, late]

    asyncio.run(main())


def test_ls_q_off_the_loop_is_what_the_loop_lists(tmp_path: Path) -> None:
    """The same ids, in the same order, as `ls -q` read on the loop; and where the reader
    cannot read (herd.db replaced under the daemon), read on the loop, of the daemon's file."""
    home = tmp_path / "home"
    home.mkdir()

    async def main() -> None:
        async with daemon_like(home) as service:
            running, ids = await _mixed_queue(service, home)
            for query in QUERIES:
                assert await service.ls_ids_off_loop(query) == service.ls_ids(query)
            # Held, the queue stays put: the GPU the kill frees would start job 10, moving it
            # among the started jobs between the two listings below (a loaded machine did).
            service.hold(ids[8:])
            service.kill([running])
            mine = service.ls_ids(EVERY_JOB)
            _fill_other(tmp_path / "other.db", tmp_path)
            os.replace(tmp_path / "other.db", home / "herd.db")
            assert await service.ls_ids_off_loop(EVERY_JOB) == mine
            assert sorted(mine) == [running, *ids]

    asyncio.run(main())


def test_a_big_listing_is_let_go_of_off_the_loop_and_sent_in_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No cycle collection while the route lists (it would walk the listing's objects, on the
    loop); they are let go of off the loop; a big answer (over a MiB) is sent in pieces."""
    collections: list[str] = []
    made, let_go_of = threading.Event(), []
    real_views = listing_reader.stored_views
    real_let_go = listing_reader.let_go

    def stored_views(*args: Any) -> Any:
        found = real_views(*args)
        made.set()  # the listing's objects exist from here
        return found

    def let_go(items: list[Any]) -> None:
        assert threading.current_thread() is not threading.main_thread()
        real_let_go(items)
        let_go_of.append(len(items))

    monkeypatch.setattr(listing_reader, "stored_views", stored_views)
    monkeypatch.setattr(listing_reader, "let_go", let_go)
    monkeypatch.setattr(api_jobs, "let_go", let_go)

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and made.is_set() and len(let_go_of) < 2:  # jobs, then views
            collections.append(threading.current_thread().name)

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            ids = service.submit([item(tmp_path, "true", hold=True)] * BIG)
            gc.callbacks.append(seen)
            try:
                start, body = await _get(service, "/api/v1/jobs", "all=true")
            finally:
                gc.callbacks.remove(seen)
            assert collections == [], "a collection ran while the listing was alive"
            assert let_go_of == [0, 0] and gc.isenabled()
            assert [v["id"] for v in json.loads(body)["jobs"]] == ids
            assert dict(start["headers"])[b"content-length"] == str(len(body)).encode()
            assert start["pieces"] > 1

    asyncio.run(main())


BIG = 4000
"""Jobs whose listing is over a MiB of JSON."""


def get_scope(path: str, query: str, spec_version: str = "2.4") -> dict[str, Any]:
    """A GET of `path` as uvicorn passes it to the app (its h11 protocol says ASGI 2.3: a
    StreamingResponse then listens for the client's going and cancels its stream)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": spec_version},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"localhost")],
        "client": None,
        "server": None,
    }


async def _get(service: Service, path: str, query: str) -> tuple[dict[str, Any], bytes]:
    """GET `path` from the daemon's app (create_app) as uvicorn asks it: its start message
    (with how many body messages came, `pieces`) and its body."""
    app = create_app(service, pid=os.getpid(), socket_path=str(service.home / "herd.sock"))
    asked = False
    scope = get_scope(path, query)
    messages: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client stays until the answer is in
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    await app(scope, receive, send)
    start, *bodies = messages
    assert start["status"] == 200, bodies
    pieces = [bytes(m.get("body", b"")) for m in bodies]
    return {**start, "pieces": sum(1 for p in pieces if p)}, b"".join(pieces)


def _fill_other(path: Path, cwd: Path) -> None:
    from gpuherd.core.model import JobSpec
    from gpuherd.store import NewJob

    store = Store(path)
    try:
        spec = JobSpec(command="echo theirs", cwd=str(cwd))
        store.add_jobs([NewJob(spec, held=True)] * 3, 0.0)
    finally:
        store.close()


def _timeless(
    listing: tuple[list[dict[str, Any]], LeftOut],
) -> tuple[list[dict[str, Any]], LeftOut]:
    """A listing without the running jobs' run time so far (it grows between two)."""
    views, more = listing
    return [{k: v for k, v in view.items() if k != "seconds"} for view in views], more


QUERIES = [
    ListingQuery(),
    ListingQuery((JobState.HELD, JobState.CANCELLED)),
    ListingQuery(all_jobs=True, limit=7),
    ListingQuery(limit=4),
    ListingQuery(limit=4, newest_first=True),
]
"""Listings of each kind: plain, of states, of every job, limited, the newest first."""


async def _mixed_queue(service: Service, home: Path) -> tuple[int, list[int]]:
    """A job running (the GPU taken: the queue stays as it is), and 30 others: queued, of
    three priorities, the first 5 held, the next 3 cancelled."""
    (running,) = service.submit([item(home, "sleep 1000", priority=9)])
    await _running(service, running)
    ids = service.submit([item(home, "true", priority=p % 3) for p in range(30)])
    service.hold(ids[:5])
    service.kill(ids[5:8])
    return running, ids


async def _running(service: Service, job_id: int) -> None:
    for _ in range(1500):
        job = service.store.get_job(job_id)
        # Its pid too: recorded by a later tick than its start (PID_RECORD_DELAY), it
        # would differ between two listings made either side of that tick.
        if job is not None and job.state.value == "running" and job.pid is not None:
            return
        await asyncio.sleep(0.01)  # the engine's loop starts it meanwhile
    raise AssertionError(f"job {job_id} never started, or its pid was never recorded")
