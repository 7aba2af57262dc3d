"""The store's smaller tables: sweeps, the GPU configuration and job numbering, and the jobs'
on-end hook marks (a part of Store)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from gpuherd.core.model import MAX_SLOTS, DeviceState, Job
from gpuherd.core.states import ACTIVE_STATES, FINISHED_STATES
from gpuherd.core.waiting_options import COMPARED, PRIORITY
from gpuherd.errors import HerdError
from gpuherd.saved_settings import is_count, shown
from gpuherd.store_rows import JOB_COLUMNS

_LAST_JOB_ID = (
    "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0),"
    " coalesce((SELECT max(id) FROM jobs), 0))"
)
"""AUTOINCREMENT's mark (past any job there ever was, or what number_jobs_after set), or
the highest id there is where that mark is behind (ids given by hand, an old database)."""
_WAITING_ALIKE = (
    f"SELECT MIN(id){JOB_COLUMNS.removeprefix('id')}, MAX(folder IS NOT NULL)"
    " FROM jobs WHERE sweep = ? AND state IN ('queued', 'held')"
    f" GROUP BY {', '.join((*COMPARED, PRIORITY))} ORDER BY MIN(id)"
)
"""The waiting jobs of a sweep with the same job options (the JobSpec fields a submission
gives every point, each a column of that name), one group each: its first job (SQLite takes
a bare column from the row of the MIN), and whether one of them has a folder."""
_LEARNERS = (
    "SELECT DISTINCT gpus, only_gpus FROM jobs WHERE state IN ('queued', 'held')"
    " AND (mem IS NULL OR mem_learned = 1)"
)
"""The GPU counts and --only-gpus (as stored) of the waiting jobs whose memory request is not
their user's (none, or learned): what bounds the request each may learn (one pair for most
sweeps: a resubmission with other options, or an edit, makes more)."""
MostMem = Callable[[int, tuple[int, ...]], int | None]
"""The largest --mem a job of this many GPUs, of these --only-gpus, may ask for and still run
here (None: no size bounds it): reasons_never.most_mem of the GPUs there are."""
_RENUMBERED = "jobs_renumbered"
"""meta's `SUBMITTED PAST`: number_jobs_after moved the id mark from SUBMITTED to PAST."""


@dataclass(frozen=True)
class SweepRow:
    name: str
    results_dir: str
    spec: dict[str, Any]
    """The latest submission's spec (core.sweep.spec_to_dict's shape)."""
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class DeviceConfig:
    index: int
    slots: int
    state: DeviceState
    max_jobs: int | None = None


class DamagedDeviceRow(HerdError):
    """A GPU's row of the devices table that gpuherd never writes (a crash, a hand edit): the
    one line says which GPU and the value found; `mended` is the row with each damaged value
    replaced by one that loses nothing (start_mends.py)."""

    def __init__(self, index: int, column: str, found: object, mended: DeviceConfig) -> None:
        super().__init__(
            f"GPU {index}'s row in herd.db's devices table is damaged ({column} "
            f"{shown(str(found))})"
        )
        self.column, self.mended = column, mended


_DEVICES = "SELECT idx, slots, state, max_jobs FROM devices ORDER BY idx"


def device_config(index: int, slots: object, state: object, max_jobs: object) -> DeviceConfig:
    """A devices row as a DeviceConfig; DamagedDeviceRow for the first damaged value. A state
    not known is taken as draining (running jobs go on, nothing new starts there: a guess of
    `enabled` would put jobs on a GPU that was kept out), slots not known as 1, and a cap on
    --mem jobs not known as none."""
    states = {s.value: s for s in DeviceState}
    mended = DeviceConfig(
        index,
        slots if is_count(slots, MAX_SLOTS) else 1,
        states.get(state, DeviceState.DRAINING) if isinstance(state, str) else DeviceState.DRAINING,
        max_jobs if is_count(max_jobs) else None,
    )
    for column, found, kept in (
        ("state", state, mended.state),
        ("slots", slots, mended.slots),
        ("max_jobs", max_jobs, mended.max_jobs),
    ):
        if found != kept:
            raise DamagedDeviceRow(index, column, found, mended)
    return mended


class SweepAndDeviceTables:
    """Mixed into Store, which provides the connection, transactions and row mapping."""

    _db: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _job(self, row: tuple[Any, ...]) -> Job:
        raise NotImplementedError

    def _add_event(
        self,
        job_id: int,
        now: float,
        event: str,
        from_state: str | None,
        to_state: str,
        detail: str | None,
    ) -> None:
        raise NotImplementedError

    # ---- sweeps ---------------------------------------------------------------------------

    def put_sweep(self, name: str, results_dir: str, spec: Mapping[str, Any], now: float) -> None:
        """Record a sweep's latest spec (keeping when it was first submitted)."""
        with self.transaction():
            self._db.execute(
                "INSERT INTO sweeps(name, results_dir, spec, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET"
                " results_dir = excluded.results_dir, spec = excluded.spec,"
                " updated_at = excluded.updated_at",
                (name, results_dir, json.dumps(dict(spec)), now, now),
            )

    def get_sweep(self, name: str) -> SweepRow | None:
        row = self._db.execute(
            "SELECT name, results_dir, spec, created_at, updated_at FROM sweeps WHERE name = ?",
            (name,),
        ).fetchone()
        return None if row is None else SweepRow(row[0], row[1], json.loads(row[2]), *row[3:])

    def list_sweeps(self) -> list[SweepRow]:
        cursor = self._db.execute(
            "SELECT name, results_dir, spec, created_at, updated_at FROM sweeps ORDER BY created_at"
        )
        return [SweepRow(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in cursor]

    def sweep_names(self) -> list[str]:
        """Every sweep's name (what a name no sweep has is compared with, to suggest one)."""
        return [row[0] for row in self._db.execute("SELECT name FROM sweeps ORDER BY name")]

    def sweeps_in(self, results_dir: str) -> list[str]:
        """The names of the sweeps that keep their results in `results_dir`."""
        rows = self._db.execute(
            "SELECT name FROM sweeps WHERE results_dir = ? ORDER BY name", (results_dir,)
        )
        return [row[0] for row in rows]

    def delete_sweep(self, name: str) -> None:
        """Forget a sweep's record (its jobs are removed first, as `rm` removes jobs)."""
        with self.transaction():
            self._db.execute("DELETE FROM sweeps WHERE name = ?", (name,))

    def sweep_jobs(self, name: str) -> list[Job]:
        """Every job of the sweep, oldest first."""
        cursor = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE sweep = ? ORDER BY id", (name,)
        )
        return [self._job(row) for row in cursor]

    def sweep_runs(self, name: str) -> list[tuple[int, str, str, float | None, float | None, int]]:
        """(id, folder, state, started_at, ended_at, attempt) of the sweep's jobs that have a
        folder, oldest first: what its results table needs, without reading whole jobs (a
        fifth of a second for 5,000 of them). `attempt` 0: the job never started."""
        cursor = self._db.execute(
            "SELECT id, folder, state, started_at, ended_at, attempt FROM jobs"
            " WHERE sweep = ? AND folder IS NOT NULL ORDER BY id",
            (name,),
        )
        return cursor.fetchall()  # (tuples as they are: 40,000 built again took 0.05 s)

    def waiting_alike(self, name: str) -> list[Job]:
        """The sweep's waiting (queued, held) jobs, one for each set of job options they
        have (the first, by id), in id order; [] when none has a folder (a point's). What
        `sweep status` compares with its latest submission's options without reading 40,000
        whole jobs (sweep_waiting.py)."""
        found = self._db.execute(_WAITING_ALIKE, (name,)).fetchall()
        if not any(row[-1] for row in found):
            return []
        return [self._job(row[:-1]) for row in found]

    def active_folders(self) -> dict[str, str]:
        """The named folders of jobs queued, held, running or paused, with their sweep's name
        (a sweep point's folder is in use until its job ends)."""
        states = ", ".join(f"'{state.value}'" for state in ACTIVE_STATES)
        cursor = self._db.execute(
            f"SELECT folder, sweep FROM jobs WHERE folder IS NOT NULL AND state IN ({states})"
        )
        return {str(folder): str(sweep or "") for folder, sweep in cursor}

    def job_folders(self) -> set[str]:
        """The named folders of every job, of any state (a sweep point's folder is its job's
        for as long as the job is in the database)."""
        cursor = self._db.execute("SELECT DISTINCT folder FROM jobs WHERE folder IS NOT NULL")
        return {str(folder) for (folder,) in cursor}

    def newest_runs(self, name: str) -> dict[str, int]:
        """The newest job of each folder of the sweep (a resubmitted point runs as a new job)."""
        cursor = self._db.execute(
            "SELECT folder, MAX(id) FROM jobs WHERE sweep = ? AND folder IS NOT NULL"
            " GROUP BY folder",
            (name,),
        )
        return {str(folder): int(job_id) for folder, job_id in cursor}

    def sweep_peaks(self, name: str) -> dict[int, int]:
        """The most GPU memory each job of the sweep was seen to use (jobs with a reading)."""
        cursor = self._db.execute(
            "SELECT a.job_id, MAX(a.peak_mem) FROM attempts a JOIN jobs j ON j.id = a.job_id"
            " WHERE j.sweep = ? AND a.peak_mem IS NOT NULL GROUP BY a.job_id",
            (name,),
        )
        return {int(job_id): int(peak) for job_id, peak in cursor}

    def learn_sweep_mem(self, sweep: str, mem: int, now: float, most: MostMem) -> None:
        """Give the sweep's waiting points that declared no memory (or learned less) `mem`, or,
        when less, the most their GPUs give (`most` of their GPU count and --only-gpus:
        reasons_never.most_mem): a request above it never runs. Before, `mem` whatever it
        was: a point that used 22.5 GiB of a 24 GiB GPU taught 24.8 GiB, and the rest of its
        sweep waited for ever ("can never run on these GPUs")."""
        with self.transaction():
            for gpus, only in self._db.execute(_LEARNERS + " AND sweep = ?", (sweep,)).fetchall():
                bound = most(gpus, tuple(json.loads(only)))
                learned = mem if bound is None else min(mem, bound)
                capped = " (all its GPUs give)" if learned < mem else ""
                detail = f"mem {learned} from a sibling{capped}"
                self._learn(
                    "sweep = ? AND (mem IS NULL OR (mem_learned = 1 AND mem < ?))",
                    (sweep, learned),
                    (gpus, only),
                    learned,
                    detail,
                    now,
                )

    def lower_learned_mem(self, now: float, most: MostMem) -> None:
        """Lower to the most their GPUs give (`most`, as learn_sweep_mem) the learned requests
        of waiting points above it: an older daemon learned them so, and they never ran."""
        with self.transaction():
            for gpus, only in self._db.execute(_LEARNERS + " AND mem_learned = 1").fetchall():
                if (bound := most(gpus, tuple(json.loads(only)))) is not None:
                    said = f"mem {bound}: all its GPUs give (it had learned more)"
                    above = "mem_learned = 1 AND mem > ?"
                    self._learn(above, (bound,), (gpus, only), bound, said, now)

    def _learn(
        self,
        which: str,
        args: tuple[object, ...],
        shape: tuple[int, str],
        mem: int,
        detail: str,
        now: float,
    ) -> None:
        """Give `mem` (learned) to the waiting points `which` says, of `shape` (their GPU count
        and --only-gpus, as stored), each with an event that says so."""
        rows = self._db.execute(
            f"SELECT id, state FROM jobs WHERE state IN ('queued', 'held') AND gpus = ?"
            f" AND only_gpus = ? AND {which}",
            (*shape, *args),
        ).fetchall()
        for job_id, state in rows:
            self._db.execute("UPDATE jobs SET mem = ?, mem_learned = 1 WHERE id = ?", (mem, job_id))
            self._add_event(job_id, now, "learn", None, state, detail)

    def last_job_id(self) -> int:
        """The highest id ever given to a job (0: none yet), the job removed since too: the
        next job's id is this + 1 (`last` means last_submitted_id's)."""
        return int(self._db.execute(_LAST_JOB_ID).fetchone()[0])

    def last_submitted_id(self) -> int:
        """The id of the job submitted last to this queue (0: none yet), removed since or
        not: what `last` means (cli/job_refs.py). Not the folders' number number_jobs_after
        set, until a job is submitted past it: those jobs were another queue's (one a
        restored backup undid), and `last` of a restored queue is its own last job."""
        mark = self.last_job_id()
        moved = self._db.execute("SELECT value FROM meta WHERE key = ?", (_RENUMBERED,))
        before, _, past = next((str(r[0]) for r in moved), "").partition(" ")
        return int(before) if past and int(past) == mark else mark

    # ---- devices --------------------------------------------------------------------------

    def number_jobs_after(self, last: int) -> bool:
        """New jobs get ids above `last` (a job folder on disk); whether that changed the
        next id (a database lost or restored from a backup would reuse folders' numbers)."""
        with self.transaction():
            row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'jobs'")
            seq = next((int(r[0]) for r in row), 0)
            if seq >= last:
                return False
            submitted = self.last_submitted_id()  # (before the move: its answer stays)
            self._db.execute("DELETE FROM sqlite_sequence WHERE name = 'jobs'")
            self._db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('jobs', ?)", (last,))
            self._db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (_RENUMBERED, f"{submitted} {last}"),
            )
        return True

    def devices(self) -> list[DeviceConfig]:
        return [device_config(*row) for row in self._db.execute(_DEVICES)]

    def mend_devices(self) -> list[DamagedDeviceRow]:
        """Put right each GPU's row that is damaged (device_config), in one transaction; the
        damage found, for the daemon's log."""
        damaged = []
        with self.transaction():
            for row in self._db.execute(_DEVICES).fetchall():
                try:
                    device_config(*row)
                except DamagedDeviceRow as exc:
                    damaged.append(exc)
                    self.put_device(exc.mended)
        return damaged

    def replace_devices(
        self, slots: Mapping[int, int], explicit: bool = False, keep_states: bool = False
    ) -> None:
        """Configure exactly these GPUs. `explicit`: the slot counts also cap jobs with --mem.
        `keep_states`: a GPU configured before keeps its state (a daemon restarted with
        --slots or --gpus must not put a drained GPU back to work: enabling is its own verb)."""
        with self.transaction():
            states = dict(self._db.execute("SELECT idx, state FROM devices")) if keep_states else {}
            self._db.execute("DELETE FROM devices")
            self._db.executemany(
                "INSERT INTO devices(idx, slots, state, max_jobs) VALUES (?, ?, ?, ?)",
                [
                    (i, n, states.get(i, "enabled"), n if explicit or n > 1 else None)
                    for i, n in sorted(slots.items())
                ],
            )

    def put_device(self, device: DeviceConfig) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT INTO devices(idx, slots, state, max_jobs) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(idx) DO UPDATE SET slots = excluded.slots,"
                " state = excluded.state, max_jobs = excluded.max_jobs",
                (device.index, device.slots, device.state.value, device.max_jobs),
            )

    def remove_device(self, index: int) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM devices WHERE idx = ?", (index,))

    # ---- on-end hooks ---------------------------------------------------------------------

    def hooks_due(self, since: float) -> list[Job]:
        """Jobs that ran and ended after `since` (when the on-end command was set) whose last
        attempt's hook has not started, in the order they ended: those a daemon that stopped
        or died had not run yet. By a mark per job: ends read back by time alone skipped the
        jobs that ended at the moment of the last hook started, or earlier but recorded later."""
        finished = ",".join(f"'{state.value}'" for state in FINISHED_STATES)
        found = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs INDEXED BY jobs_state WHERE state IN ({finished})"
            " AND attempt > 0 AND hooked < attempt AND ended_at > ? ORDER BY ended_at, id",
            (since,),
        )
        return [self._job(row) for row in found]

    def hook_started(self, job_id: int, attempt: int) -> None:
        """Mark the on-end hook of this attempt of the job started: never run again."""
        with self.transaction():
            self._db.execute("UPDATE jobs SET hooked = ? WHERE id = ?", (attempt, job_id))
