"""Full disks and unwritable folders: the job fails with a reason, the daemon goes on, the
database stays intact, and the next job runs once there is room again.

How the faults are made (root in a container can mount; elsewhere those tests skip):
- a full disk: a 512 KiB tmpfs mounted on GPUHERD_HOME/jobs (or on the whole home), filled;
- an unwritable folder: a read-only bind mount (root ignores file modes, not a ro mount);
- without mounting: GPUHERD_HOME/jobs made a regular file, so nothing can be created under it
  (ENOTDIR).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faults import fill, grow, integrity, query, read_only_bind, record, remount, tmpfs

from conftest import Herd, group_members, wait_for
from gpuherd.errors import HerdError


def assert_alive_and_intact(herd: Herd, pid: int) -> None:
    assert herd.is_up() and herd.pid == pid, "the daemon did not survive"
    assert integrity(herd.home / "herd.db") == "ok"


@pytest.fixture
def full_jobs_folder(herd: Herd) -> Iterator[Path]:
    """GPUHERD_HOME/jobs on a 512 KiB tmpfs that is full; a daemon with 2 fake GPUs."""
    jobs = herd.home / "jobs"
    with tmpfs(jobs, "512k"):
        try:
            herd.start("--fake-gpus", "2")
            fill(jobs)
            yield jobs
        finally:
            herd.cleanup()  # before the unmount: no job may keep a file open in it


def test_a_full_disk_fails_the_job_and_the_daemon_goes_on(
    herd: Herd, full_jobs_folder: Path
) -> None:
    pid = herd.pid
    job_id = herd.submit("--", "echo", "hello")
    job = herd.wait_state(job_id, "succeeded", "failed", "lost")
    assert job["state"] == "failed", job  # its output could not be written
    assert_alive_and_intact(herd, pid)

    (full_jobs_folder / "filler").unlink()  # room again
    after = herd.submit("--", "echo", "again")
    assert herd.wait_state(after, "succeeded", "failed")["state"] == "succeeded"
    assert herd.cli("log", str(after)).stdout == "again\n"
    assert_alive_and_intact(herd, pid)


def test_a_full_disk_is_reported_as_a_spawn_error_naming_the_folder(
    herd: Herd, full_jobs_folder: Path
) -> None:
    job_id = herd.submit("--", "echo", "hello")
    job = herd.wait_state(job_id, "succeeded", "failed", "lost")
    assert (job["state"], job["outcome"]) == ("failed", "spawn_error"), job
    assert str(full_jobs_folder / str(job_id)) in (job["message"] or "")


@pytest.mark.parametrize("where", ["jobs folder", "job's own folder"])
def test_a_read_only_folder_is_a_spawn_error_naming_it(
    herd: Herd, tmp_path: Path, where: str
) -> None:
    locked = herd.home / "jobs" if where == "jobs folder" else tmp_path / "results"
    with read_only_bind(locked):
        try:
            herd.start("--fake-gpus", "2")
            pid = herd.pid
            item: dict[str, Any] = {"command": "echo hello", "cwd": str(tmp_path)}
            if where != "jobs folder":
                item["folder"] = str(locked / "point-1")  # as a sweep point's folder
            job_id = herd.client.post("/jobs", {"jobs": [{**item, "env": dict(os.environ)}]})[
                "ids"
            ][0]
            job = herd.wait_state(job_id, "succeeded", "failed", "lost")
            assert (job["state"], job["outcome"]) == ("failed", "spawn_error"), job
            folder = locked / (str(job_id) if where == "jobs folder" else "point-1")
            assert str(folder) in job["message"], job["message"]
            assert_alive_and_intact(herd, pid)
            shown = herd.cli("show", str(job_id)).stdout
            assert "spawn_error" in shown or str(folder) in shown

            remount(locked, "rw")
            again = herd.client.post("/jobs", {"jobs": [{**item, "env": dict(os.environ)}]})
            after = herd.wait_state(again["ids"][0], "succeeded", "failed")
            assert after["state"] == "succeeded", after
            assert_alive_and_intact(herd, pid)
        finally:
            herd.cleanup()


def test_a_jobs_folder_that_is_a_file_is_a_spawn_error(herd: Herd) -> None:
    """ENOTDIR: works without any privilege."""
    herd.home.mkdir(parents=True)
    jobs = herd.home / "jobs"
    jobs.write_text("not a folder\n")
    herd.start("--fake-gpus", "1")
    pid = herd.pid
    job_id = herd.submit("--", "echo", "hello")
    job = herd.wait_state(job_id, "succeeded", "failed", "lost")
    assert (job["state"], job["outcome"]) == ("failed", "spawn_error"), job
    assert job["message"] == (  # what is wrong and what to do, not "[Errno 20] ..." alone
        f"starting job {job_id}: cannot set up its folder {jobs}/{job_id}/attempt-1: Not a "
        "directory; check that the folders above it are folders you can write in, on a disk "
        "with room"
    )
    assert_alive_and_intact(herd, pid)

    jobs.unlink()
    after = herd.submit("--", "echo", "again")
    assert herd.wait_state(after, "succeeded", "failed")["state"] == "succeeded"
    assert_alive_and_intact(herd, pid)


def test_a_full_home_refuses_submissions_but_loses_none_it_acknowledged(herd: Herd) -> None:
    """The database itself on a full disk: what was acknowledged stays, even across a kill -9;
    what could not be stored is refused; with room again the queue carries on."""
    with tmpfs(herd.home, "1m"):
        try:
            herd.start("--fake-gpus", "2")
            herd.cli("pause")
            pid = herd.pid
            acked: list[tuple[int, str]] = []
            refusal = None
            for n in range(300):  # the write-ahead log may still have room for a few
                if n == 5:
                    fill(herd.home)
                command = f"echo {n} " + "x" * 4000
                item = {"command": command, "cwd": str(herd.home.parent), "env": {}}
                try:
                    ids = herd.client.post("/jobs", {"jobs": [item]})["ids"]
                except HerdError as exc:
                    refusal = str(exc)
                    break
                acked.append((ids[0], command))
            assert refusal is not None and len(acked) >= 5, "the disk never filled up"
            # One line that says what is wrong and what to do, not "internal error"
            assert refusal == (
                f"the disk holding the queue's database ({herd.home / 'herd.db'}) is full: "
                "free some space on it, then try again (`gpuherd ls --all` shows what was done)"
            ), refusal
            assert herd.is_up() and herd.pid == pid

            herd.kill9()  # a crash on top of the full disk
            grow(herd.home, "16m")  # room again (the crashed daemon's log is not checkpointed)
            stored = query(herd.home / "herd.db", "SELECT id, command FROM jobs ORDER BY id")
            assert stored == acked  # every acknowledged one, and not the refused one
            assert integrity(herd.home / "herd.db") == "ok"

            herd.start()
            herd.cli("resume")
            last = herd.submit("--", "echo", "after")
            assert herd.wait_state(last, "succeeded", "failed", timeout=60)["state"] == "succeeded"
            states = {j["id"]: j["state"] for j in herd.ls_all()}
            assert [states[i] for i, _ in acked] == ["succeeded"] * len(acked)
            record("full_home", acknowledged=len(acked), refusal=refusal)
        finally:
            herd.cleanup()


def test_an_exit_seen_while_the_disk_is_full_is_recorded_once_there_is_room(
    herd: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"  # outside the full disk
    with tmpfs(herd.home, "2m"):
        try:
            herd.start("--fake-gpus", "1")
            job_id = herd.submit(f"while [ ! -e {go} ]; do sleep 0.02; done")
            pgid = herd.wait_state(job_id, "running")["pid"] or wait_for(
                lambda: herd.job(job_id)["pid"], what="the job's pid"
            )
            fill(herd.home)
            go.touch()  # the job ends while nothing can be written
            wait_for(lambda: not group_members(pgid), what="the job to end")
            time.sleep(0.5)  # the daemon saw the exit and failed to store it
            grow(herd.home, "16m")
            job = herd.wait_state(job_id, "succeeded", "failed", "lost", timeout=10)
            assert job["state"] == "succeeded"
            after = herd.submit("--", "true")
            assert herd.wait_state(after, "succeeded", "failed")["state"] == "succeeded"
        finally:
            herd.cleanup()
