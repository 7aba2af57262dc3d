"""`sweep ls` and `sweep status` (GET /sweeps, GET /sweeps/NAME, the dashboard's sweep pages)
read off the daemon's event loop (sweep_reads.py), as `ls` is (test_ls_off_loop.py): a cheap
request is answered while the table is built, and the table is one snapshot, the one the
loop would have made. The listing thread is held at a gate (threading events, never
timings) while the loop answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from test_ls_off_loop import Gate, _get, daemon_like

from gpuherd import sweep_table
from gpuherd.api import views_sweeps
from gpuherd.service import Service
from gpuherd.sweep_reads import sweep_listing, sweep_status
from gpuherd.sweeps import Sweeps
from gpuherd.wire_requests import SweepRequest

POINTS = 300


async def held_sweep(service: Service, work: Path, name: str = "big") -> None:
    """A sweep of POINTS points, held: nothing runs, the table stays as it is."""
    spec = {"name": name, "command": "true {x}", "grids": [{"x": list(range(POINTS))}]}
    spec["results_dir"] = str(work / name)
    body = {"spec": spec, "cwd": str(work), "yes": True, "options": {"hold": True}}
    await Sweeps(service).submit(TypeAdapter(SweepRequest).validate_python(body))


async def answered_while_held(gate: Gate, service: Service, slow: asyncio.Task[Any]) -> None:
    """The slow request waits at the gate, on the listing thread: never answered on the loop
    (it would be done before the gate is reached), while the loop answers GET /daemon."""
    there = asyncio.create_task(gate.reached())
    await asyncio.wait({slow, there}, return_when=asyncio.FIRST_COMPLETED)
    assert not slow.done(), "the sweep's table was read on the loop, not on the listing thread"
    await there
    start, _ = await _get(service, "/api/v1/daemon", "")
    assert start["status"] == 200 and not slow.done()
    if waiting := service.ls_ids():
        service.kill(waiting)  # (after the snapshot began: not in the answer)
    gate.open.set()


@pytest.mark.parametrize("query", ["", "paths=true"])
def test_a_sweep_table_is_read_off_the_loop_in_one_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    gate = Gate(monkeypatch, sweep_table, "expand_points")

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            await held_sweep(service, tmp_path)
            slow = asyncio.create_task(_get(service, "/api/v1/sweeps/big", query))
            await answered_while_held(gate, service, slow)
            _, body = await slow
            table = json.loads(body)
            assert table["counts"] == {"held": POINTS}  # as it was when the read began
            assert all(("job_dir" in row) == bool(query) for row in table["rows"])

    asyncio.run(main())


def test_the_sweep_listing_is_read_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, sweep_table, "expand_points")

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            await held_sweep(service, tmp_path)
            slow = asyncio.create_task(_get(service, "/api/v1/sweeps", ""))
            await answered_while_held(gate, service, slow)
            _, body = await slow
            (listed,) = json.loads(body)["sweeps"]
            assert listed["counts"] == {"held": POINTS}

    asyncio.run(main())


def test_the_dashboards_sweep_pages_read_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, sweep_table, "expand_points")

    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            await held_sweep(service, tmp_path)
            slow = asyncio.create_task(views_sweeps.listing(service))
            await answered_while_held(gate, service, slow)
            (listed,) = await slow
            assert listed["progress"].points == POINTS
            gate.open.clear()
            gate.there.clear()
            page = asyncio.create_task(
                views_sweeps.sweep_page(service, "big", views_sweeps.SweepQuery())
            )
            await answered_while_held(gate, service, page)
            assert (await page).total == POINTS

    asyncio.run(main())


def test_the_tables_off_the_loop_are_those_the_loop_reads(tmp_path: Path) -> None:
    async def main() -> None:
        async with daemon_like(tmp_path) as service:
            await held_sweep(service, tmp_path)
            await held_sweep(service, tmp_path, "other")
            service.kill(service.ls_ids()[:10])
            sweeps = Sweeps(service)
            assert await sweep_listing(service) == sweeps.listing()
            for sort, states in ((None, ()), ("-x", ("held",)), ("x", ("cancelled",))):
                off_loop = await sweep_status(service, "big", sort, states, 50)
                assert off_loop == sweeps.table("big", sort, states, 50)
            service.reader = None  # (`gpuherd run`: no listing thread, read on the loop)
            assert await sweep_status(service, "other") == sweeps.table("other")

    asyncio.run(main())
