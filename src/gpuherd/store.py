"""The only SQL in the project: jobs, attempts, events, devices and settings in SQLite (WAL).

One connection, used by one thread (the engine's). Every change runs inside `transaction()`;
callers acknowledge a change only after it returns.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from gpuherd import store_rows as rows
from gpuherd.core.deps import KINDS
from gpuherd.core.model import JobSpec
from gpuherd.core.states import FINISHED_STATES, JobState
from gpuherd.errors import StoreError
from gpuherd.store_attempts import AttemptWrites
from gpuherd.store_batch import insert_deps, insert_new_jobs
from gpuherd.store_checkpoint import Checkpointer
from gpuherd.store_lone import LoneJobs
from gpuherd.store_reader import file_id
from gpuherd.store_reads import JobReads, RowJobs, env_cache
from gpuherd.store_ready import dependency_ended, new_deps
from gpuherd.store_rows import NewJob as NewJob  # (imported from here by most)
from gpuherd.store_schema import (
    SCHEMA_VERSION,
    leave_as_found,
    log_files,
    make_private,
    migrate,
    open_failed,
    refuse_foreign,
)
from gpuherd.store_tables import DeviceConfig, SweepAndDeviceTables, SweepRow
from gpuherd.store_views import EventRow, JobViews
from gpuherd.store_wal import LogWatch, connection, set_up

_JOINED = nullcontext()
"""A transaction nested in the one under way (Store.transaction)."""


class Store(JobReads, SweepAndDeviceTables, JobViews, AttemptWrites, LoneJobs):
    def __init__(self, path: Path, scratch: bool = False) -> None:
        """Open (or create) the database at `path`.

        `scratch` is for a database only this process uses and that dies with it (the one of
        `gpuherd run`): one lock held for the connection's life, the rollback journal in
        memory and no syncs. Nothing can read it meanwhile and a crash loses it, but a
        commit then costs about half as much (no write-ahead log, no fsync at checkpoints).
        """
        self.path = path
        found = log_files(path)
        try:
            self._open(path, scratch)
        except BaseException:  # refused (damaged, a newer gpuherd's): left as it was found
            leave_as_found(getattr(self, "_db", None), found)
            raise
        self._depth = 0
        self._full = False
        """Whether the transaction under way commits under `synchronous = FULL`."""
        self._sync_owed = False
        """A durable transaction nested in one that is not: sync the log after its commit."""
        self._on_commit: list[Callable[[], None]] = []
        self._on_rollback: list[Callable[[], None]] = []
        self.touched: set[int] | None = None
        """While a verb on many jobs runs, the ids of the jobs `update_job` changed."""
        self._env_cache, self._ready_jobs = env_cache(self._db), RowJobs()

    def _open(self, path: Path, scratch: bool) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            make_private(path)
            self._db = connection(path)
            self.file_id = file_id(path)
            """The file opened, which a listing's reader must read too (store_reader.py)."""
            set_up(self._db, path, scratch, check=refuse_foreign)
        except sqlite3.DatabaseError as exc:
            raise open_failed(path, exc) from exc
        self._log = None if scratch else path.with_name(path.name + "-wal")  # durable commits sync
        # (off the commits' way; it notices a herd.db replaced)
        self._checkpoints = None if scratch else Checkpointer(path, self.file_id)
        try:
            migrate(self._db, path)
        except sqlite3.DatabaseError as exc:
            raise open_failed(path, exc) from exc
        self._wal = None if scratch else LogWatch(path)  # (SQLite has its log open: read)
        self.renewals = 0
        """Times the connection was opened again on a new log (store_wal.py)."""

    def _renew_log(self) -> None:
        """herd.db-wal was deleted or replaced: copy it into herd.db, write a new one
        (store_wal.py). Left to `replaced()` where herd.db itself is another file."""
        assert self._wal is not None and self._checkpoints is not None
        if self.replaced():
            self._wal.ignore()
            return
        db = self._wal.renew(self._db, self._checkpoints.close)
        if db is not self._db:
            self._db, self._env_cache = db, env_cache(db)
            self._checkpoints = Checkpointer(self.path, self.file_id)
            self.renewals += 1

    def replaced(self) -> bool:
        """Whether herd.db is no longer the file opened (a backup copied over it meanwhile)."""
        return file_id(self.path) != self.file_id

    def close(self) -> None:
        if self._checkpoints is not None:
            self._checkpoints.close()
        self._db.close()

    def transaction(self, durable: bool = False) -> AbstractContextManager[None]:
        """BEGIN IMMEDIATE … COMMIT; nested calls join the outer transaction.

        `durable`: the commit is on the disk, not only in the OS's cache, when this returns
        (a power cut keeps it), for what the daemon acknowledges as stored: a submission. The
        commit runs under `synchronous = FULL` (SQLite syncs the log in it: one flush, ~0.1 ms
        on a disk with a write cache); every other one stays under NORMAL (the log is synced
        at checkpoints), so a job's start and end pay no flush. Nested in a transaction that
        is not durable (the level cannot change inside one), the log is synced once the outer
        one commits. Nothing for a scratch store.
        """
        durable = durable and self._log is not None
        if self._depth:  # joined: nothing to do (a generator per join: ~0.6 us, ~8 a job)
            self._sync_owed |= durable and not self._full
            return _JOINED
        return self._whole(durable)

    @contextmanager
    def _whole(self, durable: bool) -> Iterator[None]:
        """The outermost transaction (see transaction)."""
        self._full = durable
        if self._full:
            self._db.execute("PRAGMA synchronous = FULL")
        self._sync_owed = False
        if self._checkpoints is not None:  # a give-back of free pages lets this one in
            self._checkpoints.begins()
        try:
            with self._outermost():
                yield
        finally:
            if self._full:
                self._full = False
                self._db.execute("PRAGMA synchronous = NORMAL")
        if self._wal is not None and self._wal.lost():
            self._renew_log()
        if self._checkpoints is not None:
            self._checkpoints.due()
        done, self._on_commit = self._on_commit, []
        for callback in done:  # committed: told even if the sync below fails
            callback()
        if self._sync_owed:
            self._sync_log()

    @contextmanager
    def _outermost(self) -> Iterator[None]:
        """BEGIN IMMEDIATE … COMMIT, or ROLLBACK: none left open for the next one."""
        self._db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._on_commit.clear()
            self._db.execute("ROLLBACK")
            _undo(self._on_rollback, 0)
            raise
        self._depth = 0
        try:
            self._db.execute("COMMIT")
        except BaseException:
            self._on_commit.clear()
            if self._db.in_transaction:  # a COMMIT refused (a full disk) leaves it open
                self._db.execute("ROLLBACK")
            _undo(self._on_rollback, 0)
            raise
        self._on_rollback.clear()

    def _sync_log(self) -> None:
        """fdatasync the write-ahead log: the commits in it are on the disk."""
        assert self._log is not None  # owed only by a store with a log
        try:
            fd = os.open(self._log, os.O_RDONLY)
            try:
                os.fdatasync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise StoreError(
                f"the change is stored, but the database's log {self._log} could not be synced"
                f" to the disk ({exc.strerror}): check that disk (`dmesg`), then `gpuherd ls`"
            ) from exc

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Call `callback` once what is written now is committed (at once outside a
        transaction); never if it is rolled back. Watchers must not hear of a change that
        did not happen (a sweep whose params.json could not be written rolls back)."""
        if self._depth:
            self._on_commit.append(callback)
        else:
            callback()

    def on_rollback(self, callback: Callable[[], None]) -> None:
        """Call `callback` if what is written now is rolled back (the transaction, or the
        savepoint it is in), latest first; never once committed, nor outside a transaction.
        What was changed in memory with a write is undone with it (Engine.stop_job)."""
        if self._depth:
            self._on_rollback.append(callback)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A transaction, or inside one a block whose writes alone are undone when it raises
        (the rest of the transaction stands); the exception goes on."""
        with self.transaction():
            self._db.execute("SAVEPOINT block")
            pending, undos = len(self._on_commit), len(self._on_rollback)
            try:
                yield
            except BaseException:
                del self._on_commit[pending:]
                self._db.execute("ROLLBACK TO block")
                self._db.execute("RELEASE block")
                _undo(self._on_rollback, undos)
                raise
            self._db.execute("RELEASE block")

    # ---- settings -------------------------------------------------------------------------

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # ---- jobs: writes (the attempts': store_attempts.py) ----------------------------------

    def add_jobs(self, new_jobs: Sequence[NewJob], now: float) -> list[int]:
        """Insert the jobs, their dependencies and their submit events; their ids, in order.
        A statement per table for the whole batch (one per row took 10,000 jobs ~0.5 s, the
        daemon's loop held by the transaction)."""
        if not new_jobs:
            return []
        env_ids: dict[tuple[tuple[str, str], ...], int] = {}
        env: Mapping[str, str] | None = None
        env_id = 0
        values = []
        with self.transaction(durable=True):  # acknowledged as stored: a power cut keeps it
            # The ids AUTOINCREMENT gives (past any there ever was, or number_jobs_after
            # set), given here so that each is its job's position: submission order is id
            # order until someone moves a job.
            first = self.last_job_id() + 1
            ids = list(range(first, first + len(new_jobs)))
            for job_id, item in zip(ids, new_jobs, strict=True):
                if item.spec.env != env:  # (a batch's jobs share one: compared, not hashed)
                    env = item.spec.env
                    env_id = env_ids.get(key := tuple(env.items())) or self._env_id(env)
                    env_ids[key] = env_id
                values.append((job_id, job_id, *item.values, env_id, now, now))
            insert_new_jobs(self._db, values)
            specs = zip(ids, (item.spec for item in new_jobs), strict=True)
            insert_deps(
                self._db, ((i, s) for i, s in specs if s.after or s.after_any or s.after_fail)
            )
            self._db.execute(  # (each job's event from its row: no row of Python values)
                "INSERT INTO events(job_id, at, event, from_state, to_state, detail)"
                " SELECT id, ?, 'submit', NULL, state, NULL FROM jobs WHERE id BETWEEN ? AND ?"
                " ORDER BY id",
                (now, ids[0], ids[-1]),
            )
        return ids

    def update_job(
        self,
        job_id: int,
        now: float,
        event: str,
        to_state: JobState | None = None,
        detail: str | None = None,
        from_state: JobState | None = None,
        **changes: Any,
    ) -> None:
        """Change a job's columns and record the event (in the caller's transaction, if any).

        `from_state`: the state the caller read in this transaction (saves reading it again).
        """
        if self.touched is not None:
            self.touched.add(job_id)
        with self.transaction():
            was = from_state.value if from_state is not None else None
            if to_state is not None:
                if was is None:
                    row = self._db.execute("SELECT state FROM jobs WHERE id = ?", (job_id,))
                    was = next((r[0] for r in row), None)
                changes["state"] = to_state.value
                if to_state is JobState.QUEUED:
                    changes.setdefault("queued_at", now)
                elif to_state in FINISHED_STATES:  # its waiters may start from now on
                    dependency_ended(self._db, job_id, now)
            if "assigned" in changes:
                changes["assigned"] = rows.gpu_list(tuple(changes["assigned"]))
            for name in ("only_gpus", *KINDS):
                if name in changes:
                    changes[name] = json.dumps(list(changes[name]))
            if "env_overrides" in changes:
                changes["env_overrides"] = json.dumps(dict(changes["env_overrides"]))
            if "outcome" in changes:
                changes.update(rows.outcome_columns(changes.pop("outcome")))
            if changes:
                cols = rows.set_clause(tuple(changes))
                self._db.execute(
                    f"UPDATE jobs SET {cols} WHERE id = ?", (*changes.values(), job_id)
                )
            to = to_state.value if to_state is not None else (was or "")
            self._add_event(job_id, now, event, was, to, detail)

    def replace_deps(self, job_id: int, spec: JobSpec, now: float) -> None:
        """The jobs `job_id` waits for from `now` on, as `spec` names them (`edit --after`)."""
        with self.transaction():
            new_deps(self._db, job_id, spec, now)

    def delete_jobs(self, ids: Sequence[int]) -> None:
        with self.transaction():
            # What the jobs had met of others' dependencies is forgotten with them; what they
            # had not stays: a retry of those others is refused then (retry_refused_removed).
            self._db.executemany(
                "DELETE FROM deps WHERE rowid IN (SELECT d.rowid FROM deps d JOIN jobs j"
                f" ON j.id = d.dep WHERE d.dep = ? AND NOT {rows.UNMET})",
                [(i,) for i in ids],
            )
            for table, column in (("events", "job_id"), ("attempts", "job_id"), ("deps", "job")):
                self._db.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(i,) for i in ids])
            self._db.executemany("DELETE FROM jobs WHERE id = ?", [(i,) for i in ids])

    def fill_git(self, commits: Sequence[tuple[str, int]]) -> None:
        """Set the git commit of jobs stored without one: (commit, job id) pairs (a
        submission's, whose `git status` answered after the jobs were stored)."""
        with self.transaction():
            self._db.executemany("UPDATE jobs SET git = ? WHERE id = ? AND git IS NULL", commits)

    # ---- internals ------------------------------------------------------------------------

    def _add_event(
        self,
        job_id: int,
        now: float,
        event: str,
        from_state: str | None,
        to_state: str,
        detail: str | None,
    ) -> None:
        self._db.execute(
            "INSERT INTO events(job_id, at, event, from_state, to_state, detail)"
            " VALUES (?,?,?,?,?,?)",
            (job_id, now, event, from_state, to_state, detail),
        )

    def _env_id(self, env: Mapping[str, str]) -> int:
        # Thousands of jobs of one sweep share one environment: store it once.
        text = json.dumps(dict(env), sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()
        row = self._db.execute("SELECT id FROM envs WHERE hash = ?", (digest,)).fetchone()
        if row:
            return int(row[0])
        cur = self._db.execute("INSERT INTO envs(hash, json) VALUES (?, ?)", (digest, text))
        return int(cur.lastrowid or 0)


def _undo(callbacks: list[Callable[[], None]], since: int) -> None:
    """Call the rollback callbacks from `since` on, latest first, and forget them."""
    undos = callbacks[since:]
    del callbacks[since:]
    for callback in reversed(undos):
        callback()


__all__ = [
    "SCHEMA_VERSION",
    "DeviceConfig",
    "EventRow",
    "NewJob",
    "Store",
    "SweepRow",
]
