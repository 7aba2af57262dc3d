"""`sweep ls` and `sweep status` read off the event loop, as `ls` is (listing_reader.py): with
33,000 points in the queue, `GET /sweeps` held the daemon's loop 1-5 s, and a 20,000-point
table 0.5-3 s; every other client waited meanwhile (`daemon status` once gave up, and
advised `kill -9` for a healthy daemon).

The tables are read on the daemon's listing thread, through its read-only connection, in
one read transaction (one snapshot of the jobs, their pauses and peaks), the points' folders
looked into there too. What only the engine knows (the runs no job of the queue watches,
the job folders' layout) is taken on the loop, before. Where the reader cannot read (none:
`gpuherd run`; the database file replaced), the table is read on the loop, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from gpuherd import sweep_table
from gpuherd.listing import point_paths
from gpuherd.store_reader import ReadOnlyStore
from gpuherd.store_tables import SweepAndDeviceTables
from gpuherd.sweep_unwatched import folder_runs
from gpuherd.sweep_waiting import waiting_options_warning

if TYPE_CHECKING:
    from gpuherd.service import Service
    from gpuherd.store import Store

T = TypeVar("T")


class SweepReads(ReadOnlyStore, SweepAndDeviceTables):
    """The listing thread's read-only connection with the sweep tables' reads (its writes,
    never called, would be refused: the connection is `mode=ro`)."""

    def __init__(self, reads: ReadOnlyStore) -> None:  # (no connection of its own: reads')
        self._db, self._env_cache, self._ready_jobs = reads._db, reads._env_cache, reads._ready_jobs
        self.expected = reads.expected


def full_table(
    store: Store | SweepReads,
    name: str,
    sort: str | None,
    states: Sequence[str],
    limit: int | None,
    runs: sweep_table.Runs,
) -> dict[str, Any]:
    """Sweeps.table's answer: sweep_table.table with the warning of points waiting with
    other job options than the latest submission's first."""
    table = sweep_table.table(store, name, sort, states, limit, runs)
    row = store.get_sweep(name)
    submission = sweep_table.submission_of(row) if row is not None else {}
    table["warnings"] = [*waiting_options_warning(store, name, submission), *table["warnings"]]
    return table


async def sweep_listing(service: Service) -> list[dict[str, Any]]:
    """Every sweep with its points counted by state (`sweep ls`, Sweeps.listing)."""
    runs = folder_runs(service.engine)  # (the engine's, read on its loop)
    found = await _off_loop(service, lambda reads: sweep_table.listing(reads, runs))
    return found if found is not None else sweep_table.listing(service.store, runs)


async def sweep_status(
    service: Service,
    name: str,
    sort: str | None = None,
    states: Sequence[str] = (),
    limit: int | None = None,
    paths: bool = False,
) -> dict[str, Any]:
    """The sweep's results table (`sweep status`, Sweeps.table); with `paths`, each row's
    `job_dir` and `log_files` (listing.point_paths), read in the same snapshot."""
    runs, layout = folder_runs(service.engine), service.engine.layout

    def build(reads: Store | SweepReads) -> dict[str, Any]:
        answer = full_table(reads, name, sort, states, limit, runs)
        if paths:
            point_paths(reads, layout, [*answer["rows"], *answer["outside"]])
        return answer

    found = await _off_loop(service, build)
    return found if found is not None else build(service.store)


async def _off_loop(service: Service, build: Callable[[SweepReads], T]) -> T | None:
    """`build` on the daemon's listing thread, in one snapshot; None where there is no
    reader, or it cannot read (then the caller reads on the loop)."""
    if service.reader is None:
        return None
    return await service.reader.read(lambda reads: build(SweepReads(reads)))
