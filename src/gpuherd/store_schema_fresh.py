"""A new database's schema in one go: the tables and indexes that store_schema.MIGRATIONS[:13]
leave, made directly, then only the migrations after those.

Why: SQLite reads its whole schema again after every ALTER TABLE, so the 53 statements of
the 13 migrations cost ~5-10 ms of CPU (the `RENAME` of migration 11 alone 1-1.5 ms), paid by
every `gpuherd run` before its first job starts (its database is new each time) and by a
daemon's first start. Made directly: ~1 ms. tests/unit/test_store_schema_fresh.py checks
that this is, table by table and index by index, what the migrations make; the migrations
stay the only way an existing database changes. When migrations pile up after FRESH_VERSION,
this may be brought forward (the test prints what the migrations make).
"""

from __future__ import annotations

FRESH_VERSION = 13
"""The schema version FRESH_SCHEMA is: MIGRATIONS[FRESH_VERSION:] are applied after it."""

FRESH_SCHEMA = """
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
    outcome TEXT, exit_code INTEGER, signal INTEGER, message TEXT,
    exclusive INTEGER NOT NULL DEFAULT 0, ram INTEGER, oom_retry INTEGER NOT NULL DEFAULT 0,
    stop_reason TEXT, stop_at REAL, stop_requeue INTEGER NOT NULL DEFAULT 0, folder TEXT,
    sweep TEXT, git TEXT, mem_learned INTEGER NOT NULL DEFAULT 0, no_output_timeout REAL,
    kill_on_no_output INTEGER NOT NULL DEFAULT 0, release_at REAL,
    after_any TEXT NOT NULL DEFAULT '[]', only_gpus TEXT NOT NULL DEFAULT '[]',
    retry_delay REAL, output TEXT, error TEXT, after_fail TEXT NOT NULL DEFAULT '[]',
    max_log_size INTEGER
);
CREATE INDEX jobs_queued ON jobs(priority DESC, position, id) WHERE state = 'queued';
CREATE INDEX jobs_state ON jobs(state, id);
CREATE INDEX jobs_project ON jobs(project, id);
CREATE INDEX jobs_sweep ON jobs(sweep, id) WHERE sweep IS NOT NULL;
CREATE INDEX jobs_release ON jobs(release_at) WHERE state = 'held' AND release_at IS NOT NULL;
CREATE INDEX jobs_retry_wait ON jobs(release_at) WHERE state = 'queued' AND release_at IS NOT NULL;
CREATE INDEX jobs_queued_gpus ON jobs(gpus, priority DESC, position, id) WHERE state = 'queued';
CREATE TABLE attempts (
    job_id INTEGER NOT NULL, number INTEGER NOT NULL, gpus TEXT NOT NULL,
    gpu_uuids TEXT NOT NULL, dir TEXT NOT NULL, host TEXT NOT NULL,
    started_at REAL NOT NULL, pid INTEGER, ended_at REAL,
    outcome TEXT, exit_code INTEGER, signal INTEGER, message TEXT, mem INTEGER, peak_mem INTEGER,
    stdout_file TEXT, stderr_file TEXT, peak_rss INTEGER, cpu_time REAL,
    PRIMARY KEY (job_id, number)
);
CREATE TABLE events (
    id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, at REAL NOT NULL, event TEXT NOT NULL,
    from_state TEXT, to_state TEXT NOT NULL, detail TEXT
);
CREATE INDEX events_job ON events(job_id, id);
CREATE INDEX events_holds ON events(id) WHERE event IN ('hold', 'retry-held');
CREATE TABLE devices (idx INTEGER PRIMARY KEY, slots INTEGER NOT NULL, state TEXT NOT NULL,
    max_jobs INTEGER);
CREATE TABLE sweeps (
    name TEXT PRIMARY KEY, results_dir TEXT NOT NULL, spec TEXT NOT NULL,
    created_at REAL NOT NULL, updated_at REAL NOT NULL
);
CREATE TABLE deps (
    job INTEGER NOT NULL, dep INTEGER NOT NULL, kind TEXT NOT NULL,
    PRIMARY KEY (job, dep)
);
CREATE INDEX deps_dep ON deps(dep);
"""
