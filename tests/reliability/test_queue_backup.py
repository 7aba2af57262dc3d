"""`gpuherd daemon backup FILE`: a consistent, private copy of herd.db taken while the daemon
runs and commits (or with none running), which a daemon starts from as it is (README, "Where
things are": the restore). Every refusal is one line, and writes nothing."""

from __future__ import annotations

import errno
import shlex
import sqlite3
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import Herd, wait_for
from gpuherd import paths, queue_backup
from gpuherd.errors import HerdError
from gpuherd.store import Store


def backed_up(herd: Herd, to: Path, *options: str) -> int:
    """`daemon backup` to `to`: the number of jobs it says it copied."""
    done = herd.cli("daemon", "backup", str(to), *options)
    said = done.stdout.rsplit(" to ", 1)[0]
    assert done.stdout == f"{said} to {to}\n" and said.startswith("backed up the queue ("), said
    jobs = int(said.removeprefix("backed up the queue (").split()[0].replace(",", ""))
    assert stat.S_IMODE(to.stat().st_mode) == 0o600  # it holds every job's environment
    assert not list(to.parent.glob(f".{to.name}*"))  # nothing of its making left beside it
    return jobs


def checked(copy: Path) -> list[tuple[int, str]]:
    """The copy's (id, state) of every job, once SQLite finds it whole."""
    with sqlite3.connect(f"file:{copy}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return list(db.execute("SELECT id, state FROM jobs ORDER BY id"))


def test_a_backup_taken_while_the_daemon_commits_is_whole_and_starts_a_daemon(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    # Held jobs, for a database the copy takes a while to read (the daemon commits meanwhile).
    held = daemon.post_lines([f"echo {'x' * 500} {n}" for n in range(3000)], hold=True)
    running = [daemon.running_until(go) for _ in range(4)]  # the 4 GPUs taken
    queued = [daemon.submit(f"while [ ! -e {go} ]; do sleep 0.02; done") for _ in range(3)]
    stop = threading.Event()
    submitted: list[int] = []

    def commit() -> None:  # jobs submitted, started and ended throughout the backups
        while not stop.is_set():
            submitted.append(daemon.submit("--gpus", "0", "--", "true"))

    committer = threading.Thread(target=commit)
    committer.start()
    try:
        wait_for(lambda: len(submitted) >= 2, what="the daemon to commit")
        copies = [tmp_path / f"herd-backup-{n}.db" for n in range(3)]
        counts = [backed_up(daemon, copy) for copy in copies]
        # Two submissions answered after the last backup: the second was sent after it (the
        # first may have been committed before it, its answer late under load: 3,013 > 3,013).
        before = len(submitted)
        wait_for(lambda: len(submitted) >= before + 2, what="jobs submitted after the backups")
    finally:
        stop.set()
        committer.join()
    for copy, count in zip(copies, counts, strict=True):
        jobs = checked(copy)
        assert len(jobs) == count
        # One state of the queue: every job up to the last it holds, in a state it had.
        assert [job for job, _ in jobs] == list(range(1, count + 1))
        assert {job: state for job, state in jobs if job in running} == dict.fromkeys(
            running, "running"
        )
        assert {job: state for job, state in jobs if job in queued} == dict.fromkeys(
            queued, "queued"
        )
        assert {job: state for job, state in jobs if job in held} == dict.fromkeys(held, "held")
    assert counts == sorted(counts) and counts[0] > len(held + running + queued)
    assert len(daemon.ls_all()) > counts[-1]  # it went on committing meanwhile

    # A home whose herd.db is the copy starts, with the copy's queue: its queued jobs start
    # there; the original's running ones run on, untouched by the other home's daemon.
    restored = Herd(tmp_path / "restored")
    try:
        restored.home.mkdir()
        (restored.home / "herd.db").write_bytes(copies[-1].read_bytes())
        restored.start("--fake-gpus", "4")
        assert sorted(job["id"] for job in restored.ls_all()) == list(range(1, counts[-1] + 1))
        for job in queued:
            restored.wait_state(job, "running")
        assert restored.submit("--hold", "--", "true") == counts[-1] + 1  # after the copy's
        for job in running:
            assert daemon.job(job)["state"] == "running"
    finally:
        restored.cleanup()
        go.touch()


@pytest.fixture
def stopped_home(herd: Herd) -> Herd:
    """A home with a queue of one job, and no daemon running."""
    herd.start("--fake-gpus", "1")
    herd.submit("--hold", "--", "true")
    herd.cli("daemon", "stop")
    return herd


def test_a_backup_without_a_daemon_and_over_a_file_with_force(
    stopped_home: Herd, tmp_path: Path
) -> None:
    copy = tmp_path / "herd-backup.db"
    copy.write_text("yesterday's")
    copy.chmod(0o644)
    assert backed_up(stopped_home, copy, "--force") == 1  # 0600 now, as every copy
    assert checked(copy) == [(1, "held")]
    assert not stopped_home.is_up()  # none was started


def test_the_readmes_restore_gives_back_the_backups_queue(
    stopped_home: Herd, tmp_path: Path
) -> None:
    herd, copy = stopped_home, tmp_path / "herd-backup.db"
    backed_up(herd, copy)
    herd.start()
    herd.submit("--hold", "--", "false")  # after the backup: not in the restored queue
    herd.cli("daemon", "stop")
    home = shlex.quote(str(herd.home))  # README's restore, with this home for ~/.local/...
    aside = f"aside={home}/aside-$(date +%Y%m%d-%H%M%S)"
    steps = f'{aside} && mkdir "$aside" && mv {home}/herd.db* "$aside"/ && cp {copy} {home}/herd.db'
    subprocess.run(["sh", "-c", steps], check=True)
    herd.start()
    assert [(job["id"], job["state"]) for job in herd.ls_all()] == [(1, "held")]


def refused(herd: Herd, *args: str) -> str:
    proc = herd.cli("daemon", "backup", *args, check=False)
    assert (proc.returncode, proc.stdout) == (1, ""), proc
    assert proc.stderr.startswith("gpuherd: error: ") and proc.stderr.count("\n") == 1
    return proc.stderr.removeprefix("gpuherd: error: ").rstrip("\n")


def test_every_refusal_is_one_line_and_writes_nothing(herd: Herd, tmp_path: Path) -> None:
    copy = tmp_path / "herd-backup.db"
    assert refused(herd, str(copy)) == (
        f"no queue to back up: {herd.home} holds no herd.db (no daemon has run there); set "
        "GPUHERD_HOME to the home to back up"
    )
    herd.start("--fake-gpus", "1")
    assert refused(herd, str(tmp_path)) == (
        f"{tmp_path} is a folder: name the file to write, such as {tmp_path}/herd.db"
    )
    missing = tmp_path / "backups"
    assert refused(herd, str(missing / "herd.db")) == (
        f"the folder {missing} does not exist: create it (mkdir -p {missing}) first"
    )
    # A control character in it: the advice named it with shlex's quotes, which keep
    # `\x1b` as four characters once escapes are shown: another folder than the one typed.
    odd = tmp_path / "no\x1b[31m"
    assert refused(herd, str(odd / "herd.db")) == (
        f"the folder {tmp_path}/no\\x1b[31m does not exist: create it "
        f"(mkdir -p $'{tmp_path}/no\\x1b[31m') first"
    )
    copy.write_text("yesterday's")
    assert refused(herd, str(copy)) == (
        f"{copy} exists: name another file, or give --force to replace it (the copy is "
        "written whole before it takes the file's place)"
    )
    assert copy.read_text() == "yesterday's"
    database = herd.home / "herd.db"
    for own in (database, herd.home / "herd.db-wal"):
        said = refused(herd, str(own), "--force")
        assert said == f"{own} is the queue's own database: name another file"
    assert checked(database) == []  # untouched, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["herd-backup.db", "home"]


def test_a_folder_in_the_home_gets_a_file_outside_it_suggested(herd: Herd) -> None:
    """`daemon backup <home>/jobs/` was told "such as <home>/jobs/herd.db": a backup beside
    the jobs' folders, which goes with the home; in a home with no jobs/ yet, the copy was
    written as a file named jobs (the slash dropped), where the jobs' folders go."""
    home = paths.home_dir(herd.home)
    env = {**herd.env, "HOME": str(herd.home.parent)}
    herd.start("--fake-gpus", "1")
    outside = (
        f"name the file to write, outside the home {home} (a backup there goes with it), such "
        f"as {herd.home.parent}/herd-backup.db"
    )
    jobs = herd.home / "jobs"
    for named, said in [
        (f"{jobs}/", f"no folder {jobs}/: {outside}"),
        (str(herd.home), f"{home} is a folder: {outside}"),
        (f"{herd.home}/run", f"{home}/run is a folder: {outside}"),
    ]:
        proc = herd.cli("daemon", "backup", named, check=False, env=env)
        assert (proc.returncode, proc.stderr) == (1, f"gpuherd: error: {said}\n"), proc
    assert not jobs.exists()  # nothing written
    missing = herd.home.parent / "backups"
    assert refused(herd, f"{missing}/") == (
        f"no folder {missing}/: name the file to write, such as {missing}/herd.db (`mkdir -p "
        f"{missing}` first)"
    )
    assert not missing.exists()
    herd.wait_state(herd.submit("true"), "succeeded")  # jobs/ made: the folder is there
    proc = herd.cli("daemon", "backup", f"{jobs}/", check=False, env=env)
    assert proc.stderr == f"gpuherd: error: {jobs} is a folder: {outside}\n"


def test_an_empty_file_is_refused_as_a_usage_error(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")  # a queue to back up: the refusal is FILE's alone
    said = herd.usage_error("daemon", "backup", "")  # `daemon backup "$FILE"`, FILE unset
    assert said == (
        "gpuherd: error: FILE is empty: give the file to write the copy to, such as "
        "herd-backup.db (see gpuherd daemon backup --help)\n"
    )


@pytest.fixture
def queue_home(tmp_path: Path) -> Path:
    """A home whose herd.db holds an empty queue (no daemon: the backup reads the file)."""
    home = tmp_path / "home"
    home.mkdir()
    Store(paths.database(home)).close()
    return home


def test_a_file_made_at_file_during_the_copy_is_not_replaced(
    queue_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FILE was looked for before the copy, and the copy renamed over whatever stood there by
    then: another backup to that name, made meanwhile, was lost without a word."""
    target = tmp_path / "herd-backup.db"
    copy = queue_backup._copy

    def copy_while_another_writes(database: Path, part: Path) -> int:
        jobs = copy(database, part)
        target.write_text("another backup's")  # between the look for FILE and its taking
        return jobs

    monkeypatch.setattr(queue_backup, "_copy", copy_while_another_writes)
    with pytest.raises(HerdError) as refusal:
        queue_backup.back_up(queue_home, target, replace=False)
    assert str(refusal.value) == (  # the line of a FILE that was there first
        f"{target} exists: name another file, or give --force to replace it (the copy is "
        "written whole before it takes the file's place)"
    )
    assert target.read_text() == "another backup's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["herd-backup.db", "home"]
    target.unlink()
    said = queue_backup.back_up(queue_home, target, replace=True)  # --force: it takes its place
    assert said == f"backed up the queue (0 jobs) to {target}" and checked(target) == []


def test_a_disk_without_hard_links_still_gets_its_backup(
    queue_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused_link(source: object, target: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")  # what vfat's link() says

    monkeypatch.setattr(queue_backup.os, "link", refused_link)
    target = tmp_path / "herd-backup.db"
    said = queue_backup.back_up(queue_home, target, replace=False)
    assert said == f"backed up the queue (0 jobs) to {target}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["herd-backup.db", "home"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and checked(target) == []
