"""A floor that records each job: the 4-thread floor (python4.py) doing, per job, the least of
what gpuherd must do and the other floors do not (benchmarks/README.md, "What W1's target
asks of a scheduler"), for W1 to be read against as well as against python4.py's:

- the job's start committed to SQLite (WAL, synchronous=NORMAL, as the daemon's herd.db)
  before its process starts, and its end after (principle 1: a crash between the commit and
  the spawn must never run a job twice);
- a folder per job, the job's stdout and stderr in logs of their own there, opened by the
  job's shell (as gpuherd's job shell does);
- one writer at a time (a lock), as an engine with one database connection.

Run as `python3 python4_records.py FOLDER 0 1 2 3 < jobs.txt`. No retries, no pid record, no
job.json, no markers, no events, no recovery: a floor, not a queue.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import subprocess
import sys
import threading
import time

SHELL = 'exec </dev/null >>"$1/stdout.log" 2>>"$1/stderr.log"; eval "$2"'


def main() -> int:
    folder, gpus = sys.argv[1], sys.argv[2:]
    db = sqlite3.connect(os.path.join(folder, "jobs.db"), check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(
        "CREATE TABLE jobs (id INTEGER PRIMARY KEY, command TEXT, gpu TEXT, state TEXT,"
        " started REAL, ended REAL, exit_code INTEGER)"
    )
    lock = threading.Lock()
    lines: queue.SimpleQueue[tuple[int, str] | None] = queue.SimpleQueue()
    failed = []

    def record(sql: str, *args: object) -> None:
        with lock, db:
            db.execute(sql, args)

    def worker(gpu: str) -> None:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu}
        while (item := lines.get()) is not None:
            job_id, line = item
            job_dir = os.path.join(folder, f"job_{job_id}")
            os.mkdir(job_dir)
            record(
                "UPDATE jobs SET state = 'running', gpu = ?, started = ? WHERE id = ?",
                gpu,
                time.time(),
                job_id,
            )
            code = subprocess.run(
                ["/bin/sh", "-c", SHELL, "job", job_dir, line], env=env
            ).returncode
            record(
                "UPDATE jobs SET state = ?, ended = ?, exit_code = ? WHERE id = ?",
                "succeeded" if code == 0 else "failed",
                time.time(),
                code,
                job_id,
            )
            if code != 0:
                failed.append(line)

    threads = [threading.Thread(target=worker, args=(gpu,)) for gpu in gpus]
    for t in threads:
        t.start()
    for job_id, line in enumerate((ln.rstrip("\n") for ln in sys.stdin if ln.strip()), 1):
        record("INSERT INTO jobs (id, command, state) VALUES (?, ?, 'queued')", job_id, line)
        lines.put((job_id, line))
    for _ in threads:
        lines.put(None)
    for t in threads:
        t.join()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
