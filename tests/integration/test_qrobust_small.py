"""Small robustness fixes: a migration raced by another process, and the open-file limit of
the daemon, `gpuherd run` and their jobs. (`log -f` of a job removed while it was held:
test_logs.py.)"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Herd
from gpuherd.store_schema import MIGRATIONS, SCHEMA_VERSION, migrate

OLD_SCHEMA = 13


class _Racing(sqlite3.Connection):
    """A connection that runs `before_lock` just before its first BEGIN IMMEDIATE: another
    process taking the write lock first, between this one's read of the version and its own."""

    before_lock: Callable[[], None] | None = None

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "BEGIN IMMEDIATE" and self.before_lock is not None:
            hook, self.before_lock = self.before_lock, None
            hook()
        return super().execute(sql, *args)


def test_a_migration_raced_by_another_process_runs_its_steps_once(tmp_path: Path) -> None:
    path = tmp_path / "herd.db"
    with sqlite3.connect(path) as old:
        for script in MIGRATIONS[:OLD_SCHEMA]:
            old.executescript(script)
        old.execute(f"PRAGMA user_version = {OLD_SCHEMA}")
    old.close()
    first = sqlite3.connect(path, isolation_level=None)
    second = sqlite3.connect(path, isolation_level=None, factory=_Racing)
    try:
        second.before_lock = lambda: migrate(first, path)
        migrate(second, path)  # once read the old version; must not ALTER TABLE again
        columns = [row[1] for row in second.execute("PRAGMA table_info(jobs)")]
        assert columns.count("retries_from") == 1
        assert second.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert not second.in_transaction
    finally:
        first.close()
        second.close()


LOW_SOFT = 256
"""The soft open-file limit the daemon and `run` are started with (the hard one is kept)."""
SEES = "echo soft=$(ulimit -Sn) parent=$(grep 'open files' /proc/$PPID/limits)"
"""A job: its own soft limit, and the line of its spawner's (the daemon's, run's) limits."""


def _low_soft_limit() -> None:
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (LOW_SOFT, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    )


def _soft_limit(pid: int) -> int:
    line = next(
        x for x in Path(f"/proc/{pid}/limits").read_text().splitlines() if "open files" in x
    )
    return int(line.split()[3])


def test_the_daemon_raises_its_fd_limit_and_its_jobs_keep_the_original(herd: Herd) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert hard > LOW_SOFT, "the test needs a hard limit above 256"
    subprocess.run(
        [sys.executable, "-m", "gpuherd", "daemon", "start", "--fake-gpus", "1"],
        env=herd.env,
        preexec_fn=_low_soft_limit,
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert _soft_limit(herd.pid) == hard
    job = herd.submit(SEES)
    herd.wait_state(job, "succeeded")
    said = herd.cli("log", str(job)).stdout.split()
    assert said[0] == f"soft={LOW_SOFT}"
    assert said[-3:-1] == [str(hard), str(hard)]  # (its shell's parent: the daemon)


def test_gpuherd_run_raises_its_fd_limit_and_its_jobs_keep_the_original(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    (tmp_path / "cmds.txt").write_text(SEES + "\n")
    subprocess.run(
        [sys.executable, "-m", "gpuherd", "run", "--fake-gpus", "1", "-q", "cmds.txt"],
        cwd=tmp_path,
        env={**os.environ, "GPUHERD_HOME": str(tmp_path / "home")},
        preexec_fn=_low_soft_limit,
        check=True,
        capture_output=True,
        timeout=60,
    )
    [out] = (tmp_path / "herd_runs").glob("*/job_0/stdout.log")
    said = out.read_text().split()
    assert said[0] == f"soft={LOW_SOFT}"
    assert said[-3:-1] == [str(hard), str(hard)]
