"""A daemon killed (SIGKILL) amid a `clean`: the removal committed, its jobs' folders half
deleted. The next start deletes the rest, and only the folders of jobs that are gone (real
daemon, real kill -9, timed on the first folder's deletion)."""

from __future__ import annotations

import sqlite3
import time

import psutil

from conftest import Herd, wait_dead


def folders_and_rows(herd: Herd) -> tuple[set[int], set[int]]:
    """The job folders in the home, and the jobs in its database (read as a file)."""
    folders = {int(p.name) for p in (herd.home / "jobs").iterdir() if p.name.isdigit()}
    with sqlite3.connect(herd.home / "herd.db") as db:
        rows = {row[0] for row in db.execute("select id from jobs")}
    return folders, rows


def test_a_clean_cut_off_by_kill_9_leaves_no_folder_of_a_removed_job(herd: Herd) -> None:
    # Before: the folders not deleted yet at the crash stayed for good, with their logs,
    # belonging to no job (nothing listed them, no later `rm` or `clean` could name them).
    herd.start("--fake-gpus", "1")
    herd.cli("config", "set", "cpu-jobs", "8")  # (2, one per core: 1,500 jobs took ~15 s)
    ids = herd.submit_lines(["true"] * 1500, "--gpus", "0")
    kept = herd.submit("--hold", "true")  # not finished: `clean` leaves it
    herd.cli("wait", "-q", "--timeout", "120s")  # (the held job is not waited for)
    daemon = psutil.Process(herd.pid)
    first = herd.home / "jobs" / str(ids[0])
    assert first.is_dir()
    cleaning = herd.popen("clean")
    try:
        deadline = time.monotonic() + 60
        while first.exists() and time.monotonic() < deadline:
            time.sleep(0.001)
        daemon.kill()  # amid the deletions, once the removal committed
        wait_dead(daemon)
    finally:
        cleaning.communicate(timeout=30)
    folders, rows = folders_and_rows(herd)  # (`clean` removes 500 jobs a request)
    assert ids[0] not in rows and kept in rows
    assert folders - rows, "the kill came after every folder was deleted: nothing to check"
    herd.start()
    folders, rows = folders_and_rows(herd)
    assert folders == rows - {kept} and ids[0] not in rows  # each job left keeps its folder
    assert list((herd.home / "removing").iterdir()) == []
    assert "a removal of jobs cut off" in (herd.home / "daemon.log").read_text()
    herd.cli("clean")
    assert folders_and_rows(herd) == (set(), {kept})  # (held: it never ran, no folder yet)
    herd.cli("release", str(kept))
    herd.wait_state(kept, "succeeded")


def test_a_removal_that_never_committed_keeps_its_jobs_folders(herd: Herd) -> None:
    # A note left by a removal whose commit never came (the crash before it) names jobs the
    # database still has: their folders stay, with their logs.
    herd.start("--fake-gpus", "1")
    job = herd.submit("echo kept")
    herd.wait_state(job, "succeeded")
    folder = herd.home / "jobs" / str(job)
    gone = herd.home / "jobs" / "999"  # a removed job's, left by the same crash
    gone.mkdir()
    herd.kill9()
    (herd.home / "removing").mkdir()
    (herd.home / "removing" / "cut.json").write_text(f'[[{job}, "{folder}"], [999, "{gone}"]]')
    herd.start()
    assert folder.is_dir() and not gone.exists()
    assert herd.cli("log", str(job)).stdout == "kept\n"
    assert list((herd.home / "removing").iterdir()) == []
