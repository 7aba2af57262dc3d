"""The database schema and its migrations, applied in order inside one transaction."""

from __future__ import annotations

import os
import shlex
import sqlite3
import stat
import time
from pathlib import Path

from gpuherd.errors import StoreError
from gpuherd.store_schema_fresh import FRESH_SCHEMA, FRESH_VERSION


def busy_timeout_ms() -> int:
    """How long a connection to herd.db waits for another program's lock before it is refused
    (SQLite's busy_timeout): 5 s. (GPUHERD_TEST_BUSY_TIMEOUT, seconds, is the tests': each of
    those that hold herd.db's write lock until the daemon gives up would wait the whole 5 s.
    Read at each use, not at import: their CLI calls are forks of a process that has imported
    gpuherd, tests/forks.py.)"""
    return round(1000 * float(os.environ.get("GPUHERD_TEST_BUSY_TIMEOUT") or 5.0))


# Each entry upgrades the schema from version i to i + 1. Append; never edit a shipped step.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE envs (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, json TEXT NOT NULL);
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT, command TEXT NOT NULL, cwd TEXT NOT NULL,
        env_id INTEGER NOT NULL REFERENCES envs(id), env_overrides TEXT NOT NULL,
        gpus INTEGER NOT NULL, mem INTEGER, after TEXT NOT NULL, retries INTEGER NOT NULL,
        timeout REAL, grace REAL NOT NULL, project TEXT,
        state TEXT NOT NULL, priority INTEGER NOT NULL, position REAL,
        attempt INTEGER NOT NULL, created_at REAL NOT NULL, queued_at REAL NOT NULL,
        started_at REAL, ended_at REAL, assigned TEXT, pid INTEGER,
        outcome TEXT, exit_code INTEGER, signal INTEGER, message TEXT
    );
    CREATE INDEX jobs_queued ON jobs(priority DESC, position, id) WHERE state = 'queued';
    CREATE INDEX jobs_queued_cpu ON jobs(priority DESC, position, id)
        WHERE state = 'queued' AND gpus = 0;
    CREATE INDEX jobs_state ON jobs(state, id);
    CREATE INDEX jobs_project ON jobs(project, id);
    CREATE TABLE deps (job INTEGER NOT NULL, dep INTEGER NOT NULL, PRIMARY KEY (job, dep));
    CREATE INDEX deps_dep ON deps(dep);
    CREATE TABLE attempts (
        job_id INTEGER NOT NULL, number INTEGER NOT NULL, gpus TEXT NOT NULL,
        gpu_uuids TEXT NOT NULL, dir TEXT NOT NULL, host TEXT NOT NULL,
        started_at REAL NOT NULL, pid INTEGER, ended_at REAL,
        outcome TEXT, exit_code INTEGER, signal INTEGER, message TEXT,
        PRIMARY KEY (job_id, number)
    );
    CREATE TABLE events (
        id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, at REAL NOT NULL, event TEXT NOT NULL,
        from_state TEXT, to_state TEXT NOT NULL, detail TEXT
    );
    CREATE INDEX events_job ON events(job_id, id);
    CREATE TABLE devices (idx INTEGER PRIMARY KEY, slots INTEGER NOT NULL, state TEXT NOT NULL);
    """,
    # 2: GPU awareness (memory held and measured, host memory, exclusive GPUs), and a stop
    # request that must survive a daemon crash, and sweeps (a job's folder, sweep, git commit).
    """
    ALTER TABLE jobs ADD COLUMN exclusive INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN ram INTEGER;
    ALTER TABLE jobs ADD COLUMN oom_retry INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE attempts ADD COLUMN mem INTEGER;
    ALTER TABLE attempts ADD COLUMN peak_mem INTEGER;
    ALTER TABLE devices ADD COLUMN max_jobs INTEGER;
    ALTER TABLE jobs ADD COLUMN stop_reason TEXT;
    ALTER TABLE jobs ADD COLUMN stop_at REAL;
    ALTER TABLE jobs ADD COLUMN stop_requeue INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN folder TEXT;
    ALTER TABLE jobs ADD COLUMN sweep TEXT;
    ALTER TABLE jobs ADD COLUMN git TEXT;
    ALTER TABLE jobs ADD COLUMN mem_learned INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN no_output_timeout REAL;
    ALTER TABLE jobs ADD COLUMN kill_on_no_output INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX jobs_sweep ON jobs(sweep, id) WHERE sweep IS NOT NULL;
    CREATE TABLE sweeps (
        name TEXT PRIMARY KEY, results_dir TEXT NOT NULL, spec TEXT NOT NULL,
        created_at REAL NOT NULL, updated_at REAL NOT NULL
    );
    """,
    # 3: `--begin`: the time a held job is released at.
    """
    ALTER TABLE jobs ADD COLUMN release_at REAL;
    CREATE INDEX jobs_release ON jobs(release_at) WHERE state = 'held' AND release_at IS NOT NULL;
    """,
    # 4: `--after-any`: a dependency met by any end of the job, not only by its success.
    """
    ALTER TABLE jobs ADD COLUMN after_any TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE deps ADD COLUMN any_end INTEGER NOT NULL DEFAULT 0;
    """,
    # 5: `--only-gpus`: the GPUs a job may be placed on.
    """
    ALTER TABLE jobs ADD COLUMN only_gpus TEXT NOT NULL DEFAULT '[]';
    """,
    # 6: `--retry-delay`: a job retried after a failure waits, queued, until release_at.
    """
    ALTER TABLE jobs ADD COLUMN retry_delay REAL;
    CREATE INDEX jobs_retry_wait ON jobs(release_at)
        WHERE state = 'queued' AND release_at IS NOT NULL;
    """,
    # 7: the queued jobs of each GPU count in dispatch order: a placement pass reads the
    # shapes that fit the GPUs open behind its window (engine_scan.py). It serves the
    # CPU-only jobs (gpus = 0) too, so their own index goes (one index less per write).
    """
    CREATE INDEX jobs_queued_gpus ON jobs(gpus, priority DESC, position, id)
        WHERE state = 'queued';
    DROP INDEX jobs_queued_cpu;
    """,
    # 8: the hold events, which a start reads to find the runs a restored herd.db did not
    # know (Store.unwatched_holds) instead of scanning every event. Partial: an insert of
    # any other event writes nothing to it.
    """
    CREATE INDEX events_holds ON events(id) WHERE event IN ('hold', 'retry-held');
    """,
    # 9: `--output` and `--error`: files of the user's choosing for a job's output.
    """
    ALTER TABLE jobs ADD COLUMN output TEXT;
    ALTER TABLE jobs ADD COLUMN error TEXT;
    """,
    # 10: each attempt's own stdout and stderr files, recorded as it starts: `edit --output`
    # or `--name` (%x) of a job that ran changes its next attempts' files, not where its
    # earlier ones wrote. NULL: an attempt begun before, read by the job's files as they are.
    """
    ALTER TABLE attempts ADD COLUMN stdout_file TEXT;
    ALTER TABLE attempts ADD COLUMN stderr_file TEXT;
    """,
    # 11: `--after-fail` (Slurm's afternotok), a third kind of dependency: `deps` names each
    # dependency's kind (core/deps.KINDS) in place of the any_end flag that told two apart.
    # SQLite cannot change a column in place: the table is made anew and filled from the old.
    """
    ALTER TABLE jobs ADD COLUMN after_fail TEXT NOT NULL DEFAULT '[]';
    CREATE TABLE deps_by_kind (
        job INTEGER NOT NULL, dep INTEGER NOT NULL, kind TEXT NOT NULL,
        PRIMARY KEY (job, dep)
    );
    INSERT INTO deps_by_kind(job, dep, kind)
        SELECT job, dep, CASE any_end WHEN 1 THEN 'after_any' ELSE 'after' END FROM deps;
    DROP TABLE deps;
    ALTER TABLE deps_by_kind RENAME TO deps;
    CREATE INDEX deps_dep ON deps(dep);
    """,
    # 12: `--max-log-size`: the bytes a job's stdout or stderr log may reach.
    """
    ALTER TABLE jobs ADD COLUMN max_log_size INTEGER;
    """,
    # 13: each attempt's host memory peak (bytes) and CPU time (seconds), from the wait for
    # its job shell. NULL: not measured (re-attached, a cluster's, or begun before).
    """
    ALTER TABLE attempts ADD COLUMN peak_rss INTEGER;
    ALTER TABLE attempts ADD COLUMN cpu_time REAL;
    """,
    # 14: the attempt of each job whose on-end hook has started (hooks.py): a start runs the
    # hooks still due, each once. The end time of the last hook started, read back alone,
    # skipped the jobs that ended at that same moment (all those a reboot found lost).
    """
    ALTER TABLE jobs ADD COLUMN hooked INTEGER NOT NULL DEFAULT 0;
    """,
    # 15: the attempt a job's --retries count from (Job.retries_from): a retry by hand
    # starts them anew. 1: counted from the first attempt, as every job's were before.
    """
    ALTER TABLE jobs ADD COLUMN retries_from INTEGER NOT NULL DEFAULT 1;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def damaged(path: Path, problem: object) -> StoreError:
    """The one line for a database file SQLite finds damaged, with the way out. SQLite's
    report can span lines ("*** in database main ***", then the pages): a terminal shows the
    first line of a failed start alone, so they are joined."""
    said = " ".join(str(problem).replace("*** in database main ***", "").split())
    return StoreError(f"the database {path} is damaged ({said}): {set_aside(path)}")


DATABASE_FILES = ("", "-wal", "-shm")
"""herd.db and what SQLite keeps beside it in WAL mode."""


def set_aside(path: Path) -> str:
    """The way out of a database that cannot be used as it is (damaged, emptied), with the
    command that takes it out of the way (aside_command)."""
    name = path.name
    return (
        f"move {name}, {name}-wal and {name}-shm aside together (`{aside_command(path)}`), "
        f"then put a backup of {name} in its place, or start again with an empty queue"
    )


def aside_command(path: Path) -> str:
    """The command that moves the database and its -wal and -shm together into a new folder
    beside it. SQLite reads a -wal left beside a database as that file's own, so a backup put
    in place of the database alone, or the database moved back later, would be read through
    the log of the one set aside (docs/reliability.md, "A database put back after a start
    that failed"). The folder is named by the time the line is made: a fixed `aside` was
    there the second time, where `mkdir` failed, which moved nothing, and `mkdir -p` let `mv`
    overwrite the queue set aside the first time. (`mkdir`, not `-p`: a line run twice moves
    nothing the second time.)"""
    folder = shlex.quote(str(path.parent))
    aside = f"{folder}/aside-{time.strftime(ASIDE_TIME)}"
    return f"mkdir {aside} && mv {folder}/{shlex.quote(path.name)}* {aside}/"


ASIDE_TIME = "%Y%m%d-%H%M%S"
"""The local time in the name of the folder aside_command() moves a database to."""


def log_files(path: Path) -> list[str]:
    """Which of the database's -wal and -shm are there now."""
    return [suffix for suffix in DATABASE_FILES[1:] if Path(f"{path}{suffix}").exists()]


def leave_as_found(db: sqlite3.Connection | None, found: list[str]) -> None:
    """After a database is refused (damaged, a newer gpuherd's, ...) on `db`, the connection
    that opened it (None: none was made): the -wal and -shm that opening it made beside it
    (`found`: log_files() before it, none) go, empty, as SQLite removes them when its last
    connection closes. The refused daemon exits without closing it (os._exit), and left
    them there. Where they were there before, the connection is not closed here: closed,
    it would copy the commits of that -wal into herd.db (the daemon's exit leaves both
    as they were; a process that goes on lets its garbage collector close it, as before)."""
    if db is not None and not found:
        db.close()


def make_private(path: Path) -> None:
    """The database and its -wal and -shm readable by their owner alone: they hold every
    job's environment (API keys and all). A new database is created 0600 before SQLite opens
    it (SQLite gives -wal and -shm the database's mode); those of an older gpuherd (0644 by
    the umask) are made so here. Only these files: the umask jobs inherit stays the user's."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError:
        return  # no folder, no permission: SQLite's open says why
    for suffix in DATABASE_FILES:
        part = Path(f"{path}{suffix}")
        try:
            mode = stat.S_IMODE(part.stat().st_mode)
        except OSError:
            continue  # none (yet): SQLite makes -wal and -shm with the database's mode
        if not mode & 0o077:
            continue
        try:
            os.chmod(part, mode & 0o700)
        except OSError as exc:
            raise StoreError(
                f"{part} is open to other users (mode {mode:04o}) and cannot be made private "
                f"({exc.strerror}): `chmod 600` it as its owner"
            ) from None


_ADVICE = (
    (
        ("SQLITE_BUSY", "SQLITE_LOCKED"),
        "another program holds a lock on it (an open `sqlite3` shell, a backup): "
        "close that program, then start the daemon again",
    ),
    (("SQLITE_FULL",), "its disk is full: free some space, then start the daemon again"),
    (
        ("SQLITE_READONLY",),
        "it cannot be written (a read-only file or file system): make it writable, "
        "then start the daemon again",
    ),
    (
        ("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH"),
        "check that it and its folder exist and that you can write them",
    ),
    (("SQLITE_IOERR",), "reading or writing the disk failed: check the disk (`dmesg`)"),
)
"""What to do about the database failures that are not damage, by SQLite's error name.
Moving the file aside (the way out of damage) would mend none of these, and lose the queue."""


def open_failed(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    """Why the database could not be opened (or used, by a starting daemon): damaged (cut
    short, not a database at all), or another reason (a lock held by another program, a full
    disk, no permission), which moving the file aside would not mend."""
    name = getattr(exc, "sqlite_errorname", None) or ""  # none on errors Python raised itself
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return damaged(path, exc)
    if name.startswith("SQLITE_IOERR") and _disk_full(path):
        name = "SQLITE_FULL"  # what SQLite says when its -shm cannot grow on a full disk
    advice = next((a for names, a in _ADVICE if name.startswith(names)), None)
    return StoreError(
        f"cannot use the database {path} ({exc})"
        + (f": {advice}" if advice else "; `gpuherd daemon log` shows what happened before")
    )


def _disk_full(path: Path) -> bool:
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to SCHEMA_VERSION; refuse a database written by a newer gpuherd."""
    version = _version(db, path)
    if version == SCHEMA_VERSION:
        # quick_check reads every page (a damaged table can hide behind its indexes), in
        # well under a second for 100,000 jobs.
        problem = db.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            raise damaged(path, problem)
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the write lock: another process opening the same old database
        # may have migrated it since the read above, and its steps must not run twice (a
        # second ALTER TABLE ADD COLUMN fails).
        version = _version(db, path)
        steps = MIGRATIONS[version:]
        if version == 0:  # a new database: the schema of FRESH_VERSION in one go, then the rest
            steps = (FRESH_SCHEMA, *MIGRATIONS[FRESH_VERSION:])
        for step in steps:
            for statement in step.split(";"):
                if statement.strip():
                    db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """Refuse an SQLite database of another program's (no schema version of gpuherd's, and
    tables): gpuherd added its tables to it, and served a queue from it."""
    if int(db.execute("PRAGMA user_version").fetchone()[0]) != 0:
        return
    tables = [
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
            " ORDER BY name LIMIT 4"
        )
    ]
    if tables:
        named = ", ".join(tables[:3]) + (", ..." if len(tables) > 3 else "")
        raise StoreError(
            f"the database {path} is not gpuherd's (it holds tables {named}, and no gpuherd "
            f"schema version): point GPUHERD_HOME at a folder of gpuherd's own, or move "
            f"{path.name} out of {path.parent}"
        )


def require_journal(path: Path, mode: str, wanted: str) -> None:
    """Refuse a database whose journal mode is not the one asked for (SQLite keeps its old
    mode where it cannot set the new one: WAL on a network file system)."""
    if mode.lower() != wanted.lower():
        raise StoreError(
            f"the database {path} cannot use write-ahead logging (journal mode '{mode}'); "
            "this happens on network file systems such as NFS: set GPUHERD_HOME to a "
            "folder on a local disk"
        )


def _version(db: sqlite3.Connection, path: Path) -> int:
    """The database's schema version; a newer gpuherd's is refused."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the database {path} has schema version {version}, newer than this gpuherd "
            f"understands ({SCHEMA_VERSION}): upgrade gpuherd, or point GPUHERD_HOME elsewhere"
        )
    return version
