"""A backup put in herd.db's place while the daemon runs (the README says to stop it first)
was undone without a word: the daemon went on writing the file it had open, and the log
beside the new herd.db, its own, was applied to the backup at the next start (mixed pages of
two databases: a queue SQLite can find damaged). The daemon now notices the new file (a stat
at each checkpoint, which follows commits: nothing while idle), says so in daemon.log, and
its stop says what to do, which works as shown."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_database import aside_command

import gpuherd
from conftest import Herd, wait_for


def way_out(home: Path, running: bool = False) -> str:
    """What a herd.db replaced under the daemon is told to do (`running`: while the daemon
    still runs), as a pattern: the folder it goes aside to is named by the time."""
    line = (
        f"{home}/herd.db was replaced while the daemon ran (a backup put in its place?): the "
        "daemon went on writing the file it had open, whose herd.db-wal SQLite would apply to "
        "the new one; STOPmove herd.db, herd.db-wal and herd.db-shm aside together "
        "(`COMMAND`), copy the backup in again as herd.db, and `gpuherd daemon start`"
    )
    stop = "stop the daemon (`gpuherd daemon stop`), then " if running else ""
    return re.escape(line).replace("STOP", re.escape(stop)).replace("COMMAND", aside_command(home))


def test_a_herd_db_replaced_under_the_daemon_is_said_with_the_way_out(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    kept = herd.submit("--hold", "true")
    backup = herd.home.parent / "herd-backup.db"
    herd.cli("daemon", "backup", str(backup))
    herd.submit("--hold", "true")  # not in the backup
    database = herd.home / "herd.db"
    shutil.copy(backup, herd.home.parent / "copy.db")
    (herd.home.parent / "copy.db").replace(database)  # a new file at herd.db (mv, rsync)
    herd.submit("--hold", "true")  # a commit: its checkpoint looks
    log = herd.home / "daemon.log"
    wait_for(lambda: "was replaced while the daemon ran" in log.read_text(), what="the note")
    assert "stop the daemon (`gpuherd daemon stop`), then move herd.db" in log.read_text()
    proc = herd.cli("daemon", "stop", check=False)
    assert proc.returncode == 1 and not herd.is_up(), proc
    said = proc.stderr.removeprefix("gpuherd: error: ").rstrip("\n")
    assert re.fullmatch(way_out(herd.home), said), said
    subprocess.run(said.split("`")[1], shell=True, check=True)
    shutil.copy(backup, database)
    herd.start()
    assert [job["id"] for job in herd.ls_all()] == [kept]  # the backup's queue, whole


def _replaced_under_the_daemon(herd: Herd) -> tuple[int, Path]:
    """A daemon whose herd.db a backup was copied over (one job in the backup, three in the
    queue it goes on writing), once it has noticed: the job kept, and the backup."""
    herd.start("--fake-gpus", "1")
    kept = herd.submit("--hold", "true")
    backup = herd.home.parent / "herd-backup.db"
    herd.cli("daemon", "backup", str(backup))
    herd.submit("--hold", "true")
    shutil.copy(backup, herd.home.parent / "copy.db")
    (herd.home.parent / "copy.db").replace(herd.home / "herd.db")
    herd.submit("--hold", "true")
    log = herd.home / "daemon.log"
    wait_for(lambda: "was replaced while the daemon ran" in log.read_text(), what="the note")
    return kept, backup


def test_the_way_out_taken_twice_keeps_both_queues_set_aside(herd: Herd) -> None:
    """Its folder was a fixed `aside` (`mkdir -p`): the second time, `mv` put the second
    herd.db over the first one set aside, without a word. It is named by the time now."""
    asides: dict[Path, bytes] = {}  # each folder set aside, and its herd.db
    for _ in range(2):
        if asides:  # (a replacement in the same second would be told the same folder)
            wait_for(
                lambda: time.strftime("aside-%Y%m%d-%H%M%S") > max(asides).name, what="a second"
            )
        _, backup = _replaced_under_the_daemon(herd)
        said = herd.cli("daemon", "stop", check=False).stderr
        subprocess.run(said.split("`")[1], shell=True, check=True)  # the way out, as shown
        (aside,) = set(herd.home.glob("aside*")) - set(asides)
        asides[aside] = (aside / "herd.db").read_bytes()
        shutil.copy(backup, herd.home / "herd.db")
        backup.unlink()  # (the next round's `daemon backup` writes it again)
    assert {folder: (folder / "herd.db").read_bytes() for folder in asides} == asides


def test_daemon_status_says_the_herd_db_was_replaced(herd: Herd) -> None:
    _replaced_under_the_daemon(herd)
    lines = herd.cli("daemon", "status").stdout.splitlines()
    warned = [line for line in lines if line.startswith("warning: ")]
    said = way_out(herd.home, running=True)  # (each line names the time it was made)
    assert len(warned) == 1 and re.fullmatch(f"warning: {said}", warned[0]), lines
    assert re.fullmatch(said, herd.json("daemon", "status", "--json")["database_replaced"])
    # `ls` said nothing: it lists the queue the daemon still writes, not the file's.
    for ls in (["ls"], ["ls", "--all"], ["ls", "--json"], ["ls", "--csv"]):
        proc = herd.cli(*ls)
        assert re.fullmatch(f"gpuherd: warning: {said}\n", proc.stderr), (ls, proc.stderr)
    assert herd.cli("ls", "-q", "--all").stderr == ""  # (ids for a script, said elsewhere)
    with pytest.warns(UserWarning) as caught:  # the Python API's listing says it too
        gpuherd.connect(herd.home, start=False).jobs(all=True)
    assert len(caught) == 1 and re.fullmatch(said, str(caught[0].message)), caught


def test_ls_says_nothing_of_a_herd_db_never_replaced(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.submit("--hold", "true")
    assert herd.cli("ls").stderr == ""
    assert herd.json("ls", "--json") and herd.cli("ls", "--json").stderr == ""


def test_a_restart_after_the_replace_does_not_start_on_the_old_log(herd: Herd) -> None:
    """The restart started the next daemon, which applied the old one's herd.db-wal to the
    backup: its queue came back with the jobs the backup did not have (and a plain start
    after the stop did the same)."""
    kept, backup = _replaced_under_the_daemon(herd)
    database = herd.home / "herd.db"
    proc = herd.cli("daemon", "restart", check=False)
    assert proc.returncode == 1 and not herd.is_up(), proc
    said = proc.stderr.removeprefix("gpuherd: error: ").rstrip("\n")
    assert said.startswith(f"the daemon stopped, but was not started again: {database} was ")
    assert "move herd.db, herd.db-wal and herd.db-shm aside together" in said
    start = herd.cli("daemon", "start", check=False)
    assert start.returncode == 1 and not herd.is_up(), start
    assert f"{database} was replaced while the daemon ran" in start.stderr
    subprocess.run(said.split("`")[1], shell=True, check=True)  # the way out, as shown
    shutil.copy(backup, database)
    herd.start()
    assert [job["id"] for job in herd.ls_all()] == [kept]  # the backup's queue, whole
    assert not (herd.home / "herd.db-replaced").exists()


def test_the_note_goes_once_the_old_log_is_gone(herd: Herd) -> None:
    """The log removed by hand (not moved aside with the note): nothing is refused."""
    kept, backup = _replaced_under_the_daemon(herd)
    herd.cli("daemon", "stop", check=False)
    for suffix in ("", "-wal", "-shm"):
        (herd.home / f"herd.db{suffix}").unlink(missing_ok=True)
    shutil.copy(backup, herd.home / "herd.db")
    herd.start()
    assert [job["id"] for job in herd.ls_all()] == [kept]
    assert not (herd.home / "herd.db-replaced").exists()
