"""The database: durable before acknowledged; a damaged, newer or NFS-held one is refused with
one clear line, and never replaced by an empty queue."""

from __future__ import annotations

import hashlib
import http.client
import random
import re
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from faults import elapsed, integrity, query, record, scaled

from conftest import Herd, checkpointed, wait_for
from gpuherd import daemon as daemon_module
from gpuherd import store as store_module
from gpuherd.errors import HerdError, StoreError

SEED = 4242


def stored(herd: Herd) -> dict[int, str]:
    """What the database file holds, read with sqlite3 (read-only), no daemon involved."""
    return dict(query(herd.home / "herd.db", "SELECT id, command FROM jobs"))


def test_a_submission_acknowledged_by_the_cli_survives_an_immediate_kill_9(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    expected: dict[int, str] = {}
    for round_ in range(3):
        commands = [f"echo round {round_} job {n}" for n in range(3)]
        ids = herd.submit_lines(commands, "--hold")  # acknowledged: the CLI printed the ids
        herd.kill9()
        expected.update(zip(ids, commands, strict=True))
        assert stored(herd) == expected
        herd.start()
    assert {j["id"]: j["command"] for j in herd.ls_all()} == expected
    assert integrity(herd.home / "herd.db") == "ok"


def submit_until_refused(herd: Herd, round_: int, sent: list[dict[int, str]]) -> None:
    """Submit batches of 5 until the daemon is gone; `sent` gets every acknowledged batch."""
    for serial in range(100_000):
        commands = [f"echo round {round_} batch {serial} job {n}" for n in range(5)]
        items = [{"command": c, "cwd": str(herd.home.parent), "env": {}} for c in commands]
        try:
            ids = herd.client.post("/jobs", {"jobs": items})["ids"]
        except (HerdError, http.client.HTTPException):  # see test_cli_errors_when_the_daemon_dies
            return  # the daemon died under this batch: not acknowledged
        sent.append(dict(zip(ids, commands, strict=True)))


def test_submissions_acknowledged_during_a_kill_9_are_all_stored(herd: Herd) -> None:
    """A client submits batches non-stop while the daemon is killed at random moments: every
    batch it got ids for is in the file; at most the batch in flight may be there unanswered."""
    kills = scaled(5, 20)
    rng = random.Random(SEED)
    began = time.monotonic()
    herd.start("--fake-gpus", "2")
    herd.cli("pause")  # nothing runs: only the queue's bookkeeping matters here
    acked: dict[int, str] = {}
    in_flight_max = 0
    for kill in range(kills):
        sent: list[dict[int, str]] = []
        writer = threading.Thread(target=submit_until_refused, args=(herd, kill, sent))
        writer.start()
        time.sleep(rng.uniform(0.05, 0.5))
        herd.kill9()
        writer.join(timeout=30)
        assert not writer.is_alive()
        for batch in sent:
            acked.update(batch)
        found = stored(herd)
        missing = {i: c for i, c in acked.items() if found.get(i) != c}
        assert not missing, f"acknowledged but not stored: {sorted(missing)[:10]}"
        extra = set(found) - set(acked)
        assert len(extra) <= 5, extra  # the one batch whose answer the kill cut off
        in_flight_max = max(in_flight_max, len(extra))
        acked.update({i: found[i] for i in extra})  # stored: from now on it must stay
        herd.start()
        herd.cli("pause")
    assert {j["id"] for j in herd.ls_all()} == set(acked)
    assert integrity(herd.home / "herd.db") == "ok"
    record(
        "durable_submissions",
        kills=kills,
        acknowledged_jobs=len(acked),
        lost=0,
        stored_unacknowledged_max=in_flight_max,
        seconds=elapsed(began),
    )


# ---- a database the daemon must refuse ---------------------------------------------------------


def real_database(herd: Herd) -> Path:
    """A database with a few jobs, its daemon stopped cleanly (no write-ahead log left)."""
    herd.start("--fake-gpus", "2")
    herd.submit_lines([f"echo {n}" for n in range(20)], "--hold")
    herd.cli("daemon", "stop")
    db = herd.home / "herd.db"
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    return db


def garbage(herd: Herd) -> None:
    herd.home.mkdir(parents=True)
    (herd.home / "herd.db").write_bytes(random.Random(SEED).randbytes(64 * 1024))


def newer_schema(herd: Herd) -> None:
    db = sqlite3.connect(real_database(herd))
    db.execute("PRAGMA user_version = 999")
    db.commit()
    db.close()


def damaged_table(herd: Herd) -> None:
    """A sound header and schema, but the `jobs` table's root page overwritten with noise."""
    db = real_database(herd)
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'jobs'").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = random.Random(SEED).randbytes(page_size)
    db.write_bytes(bytes(data))


def cut_short(herd: Herd) -> None:
    """The file cut to half its size (a copy that stopped, a full disk)."""
    db = real_database(herd)
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])


def emptied(herd: Herd) -> None:
    """herd.db emptied (0 bytes) in a home whose jobs ran: their folders are still there."""
    herd.start("--fake-gpus", "2")
    for job_id in herd.submit_lines(["true"] * 3):
        herd.wait_state(job_id, "succeeded")
    herd.cli("daemon", "stop")
    Path(f"{herd.home / 'herd.db'}-wal").unlink(missing_ok=True)
    (herd.home / "herd.db").write_bytes(b"")


def foreign(herd: Herd) -> None:
    """Another program's SQLite database where herd.db goes: gpuherd added its tables to it."""
    herd.home.mkdir(parents=True)
    db = sqlite3.connect(herd.home / "herd.db")
    db.execute("CREATE TABLE notes (body TEXT)")
    db.execute("INSERT INTO notes VALUES ('precious')")
    db.commit()
    db.close()


DAMAGE = {
    "foreign": foreign,
    "garbage": garbage,
    "newer schema": newer_schema,
    "damaged table": damaged_table,
    "cut short": cut_short,
    "emptied": emptied,
}
CLEAR = {
    "foreign": "is not gpuherd's (it holds tables notes, and no gpuherd schema version)",
    "garbage": "is damaged (file is not a database): move herd.db, herd.db-wal and herd.db-shm",
    "newer schema": "999",
    # The whole report on the one line a terminal shows: the page and its problem.
    "damaged table": "is damaged (Page ",
    "cut short": "is damaged (database disk image is malformed): move herd.db, herd.db-wal",
    "emptied": "herd.db is empty but",
}


def try_start(herd: Herd, damage: str) -> tuple[Any, dict[str, str], dict[str, str]]:
    """The refused start, and the database files (the name and hash of each) before and
    after it."""
    DAMAGE[damage](herd)
    before = database_files(herd.home)
    proc = herd.cli("daemon", "start", "--fake-gpus", "2", check=False)
    return proc, before, database_files(herd.home)


def database_files(home: Path) -> dict[str, str]:
    """herd.db and whatever of its -wal and -shm is beside it, each with its SHA-256: a
    refusal left an empty herd.db-wal and a herd.db-shm that were not there before."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in home.glob("herd.db*")}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_bad_database_is_refused_in_one_clear_line_and_left_as_it_was(
    herd: Herd, damage: str
) -> None:
    # One test per damage: a test of the refusal and another of its line made the same
    # damaged database and had the same start refused, each (up to two daemon start-ups).
    proc, before, after = try_start(herd, damage)
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr
    # Byte-identical: not repaired, not replaced, not emptied; and no -wal or -shm made.
    assert after == before
    assert not herd.is_up()  # never silently serving an empty (or half) queue
    assert not (herd.home / "herd.db.bak").exists()
    listing = herd.cli("ls", check=False)
    assert listing.returncode != 0 and "no gpuherd daemon is running" in listing.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error:"), proc.stderr
    assert str(herd.home / "herd.db") in lines[0], lines[0]  # names the file
    assert CLEAR[damage] in lines[0], lines[0]  # and what is wrong with it
    if damage not in ("newer schema", "foreign"):  # what to do: it with its -wal and -shm
        assert re.search(f": {way_out(herd.home)}$", lines[0]), lines[0]
    log = (herd.home / "daemon.log").read_text()
    assert "Traceback" not in log, log[-2000:]


def aside_command(home: Path) -> str:
    """The command a way out gives that moves herd.db, its -wal and -shm aside together, as a
    pattern: its folder is named by the time (a fixed one was there the second time)."""
    command = f"mkdir {home}/ASIDE && mv {home}/herd.db* {home}/ASIDE/"
    return re.escape(command).replace("ASIDE", r"aside-\d{8}-\d{6}")


def way_out(home: Path) -> str:
    """What a damaged or emptied herd.db is told to do, as a pattern. It said "move it
    aside", and SQLite read the herd.db-wal left in the home as the next herd.db's: a backup
    put in its place, or the file moved back."""
    line = (
        "move herd.db, herd.db-wal and herd.db-shm aside together (`COMMAND`), then put a "
        "backup of herd.db in its place, or start again with an empty queue"
    )
    return re.escape(line).replace("COMMAND", aside_command(home))


def damaged_after_a_crash(herd: Herd) -> subprocess.CompletedProcess[str]:
    """A queue of one job whose daemon crashed (leaving herd.db-wal and herd.db-shm), its
    herd.db then damaged: the refused start."""
    herd.start("--fake-gpus", "1")
    db = herd.home / "herd.db"
    # The new database copied into herd.db, so that the log the submission starts over holds
    # only its own pages (a log holding every page of the database hides any damage to it).
    wait_for(lambda: checkpointed(db), 15, "the quiet queue's checkpoint")
    herd.submit("--hold", "--", "true")
    herd.kill9()  # which leaves herd.db-wal and herd.db-shm
    db.write_bytes(random.Random(SEED).randbytes(64 * 1024))
    refused = herd.cli("daemon", "start", check=False)
    assert refused.returncode == 1 and re.search(f"{way_out(herd.home)}\n$", refused.stderr)
    return refused


def test_the_way_out_of_a_damaged_database_works_as_shown_and_again(herd: Herd) -> None:
    """Twice: the second time, a fixed `aside` folder was there already, and `mkdir` failed,
    which moved nothing."""
    asides: list[Path] = []
    for _ in range(2):
        if asides:  # (a damage in the same second would be told the same folder)
            wait_for(lambda: time.strftime("aside-%Y%m%d-%H%M%S") > asides[-1].name, what="1s")
        refused = damaged_after_a_crash(herd)
        subprocess.run(["sh", "-c", refused.stderr.split("`")[1]], check=True)  # as shown
        (aside,) = set(herd.home.glob("aside-*")) - set(asides)
        assert sorted(p.name for p in aside.iterdir()) == [
            "herd.db",
            "herd.db-shm",
            "herd.db-wal",
        ]
        assert not list(herd.home.glob("herd.db*"))
        herd.start("--fake-gpus", "1")  # an empty queue (its settings went with herd.db too)
        assert herd.ls_all() == []
        herd.cli("daemon", "stop")
        asides.append(aside)


def test_an_empty_database_in_a_home_without_job_folders_starts(herd: Herd) -> None:
    herd.home.mkdir(parents=True)
    (herd.home / "herd.db").write_bytes(b"")  # `touch herd.db`: a new queue, nothing lost
    herd.start("--fake-gpus", "1")
    herd.wait_state(herd.submit("--", "true"), "succeeded")


# ---- NFS: no write-ahead logging there (checked in-process: NFS cannot be mounted here) --------


class _NoWal:
    """A connection as SQLite gives one on a file system without shared memory (NFS)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.replace(" ", "").lower().startswith("pragmajournal_mode=wal"):
            return self._conn.execute("PRAGMA journal_mode")  # stays 'delete'
        return self._conn.execute(sql, *args)

    def close(self) -> None:
        self._conn.close()


@pytest.fixture
def nfs(monkeypatch: pytest.MonkeyPatch) -> None:
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        return _NoWal(real(*args, **kwargs))

    monkeypatch.setattr(store_module.sqlite3, "connect", connect)


def test_a_file_system_without_wal_is_explained(nfs: None, tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        store_module.Store(tmp_path / "herd.db")
    message = str(caught.value)
    assert str(tmp_path / "herd.db") in message
    assert "NFS" in message and "local disk" in message and "GPUHERD_HOME" in message


# serve() does not close the home's lock file when the store refuses to open; harmless in the
# daemon process, which exits at once, but in this test's process it is a ResourceWarning.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_daemon_refuses_a_home_without_wal_in_one_line(
    nfs: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert daemon_module.main(["--home", str(home), "--fake-gpus", "1"]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("gpuherd daemon: "), err
    assert "NFS" in err and "local disk" in err
    assert not (home / "run" / "herd.sock").exists()
    assert daemon_module.main(["--home", str(home), "--fake-gpus", "1"]) == 1
    again = capsys.readouterr().err
    assert "NFS" in again, again  # the same answer: the first refusal left no lock behind
