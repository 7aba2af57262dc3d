"""A backup put in herd.db's place while the daemon runs (the README says to stop it first)
was undone without a word: the daemon went on writing the file it had open, and the log
beside the new herd.db, its own, was applied to the backup at the next start (mixed pages of
two databases: a queue SQLite can find damaged). The daemon now notices the new file (a stat
at each checkpoint, which follows commits: nothing while idle), says so in daemon.log, and
its stop says what to do, which works as shown."""

from __future__ import annotations

import shutil
import subprocess

from conftest import Herd, wait_for


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
    aside = herd.home / "aside"
    assert said == (
        f"{database} was replaced while the daemon ran (a backup put in its place?): the daemon "
        "went on writing the file it had open, whose herd.db-wal SQLite would apply to the new "
        "one; move herd.db, herd.db-wal and herd.db-shm aside together (`mkdir -p "
        f"{aside} && mv {database}* {aside}/`), copy the backup in again as herd.db, and "
        "`gpuherd daemon start`"
    )
    subprocess.run(said.split("`")[1], shell=True, check=True)
    shutil.copy(backup, database)
    herd.start()
    assert [job["id"] for job in herd.ls_all()] == [kept]  # the backup's queue, whole
