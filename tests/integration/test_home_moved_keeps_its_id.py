"""A home moved (`mv`) while its jobs run: its id was a digest of its path, and every job's
processes carry it (GPUHERD_ATTEMPT_KEY), so the next daemon, at the new path, took its own
running job for another home's, called it lost ("killed with SIGKILL while no daemon watched
it", while it ran on) and started another job on its GPU; and with XDG_RUNTIME_DIR set, no
command found the moved home's daemon (its socket's folder was named by the old path). Now the
id is kept in the home (home_id.py) and goes with it. A copy (`cp -a`) used beside its
original gets an id of its own, and leaves the original's jobs alone; a copy whose original is
gone (a home moved to another disk) is that home."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import Herd, wait_for
from gpuherd.client import Client
from waits import kill_jobs_under

HELD = "while [ ! -e {go} ]; do sleep 0.02; done; echo {name} end"


def _running_job(herd: Herd, go: Path, name: str = "A") -> int:
    job = herd.submit("--name", name, "--", HELD.format(go=go, name=name))
    herd.wait_state(job, "running")
    return job


def _no_job_placed_on_its_gpu(herd: Herd, waiting: int) -> None:
    """A pass of the scheduler has run (a CPU-only job started and ended), and `waiting`,
    which asks for the one GPU, was not placed."""
    cpu = herd.submit("--gpus", "0", "--", "true")
    herd.wait_state(cpu, "succeeded")
    assert herd.job(waiting)["state"] == "queued"


def test_a_home_moved_between_daemons_reattaches_its_running_job(tmp_path: Path) -> None:
    before, after = Herd(tmp_path / "m1"), Herd(tmp_path / "m2")
    go = tmp_path / "go"
    try:
        before.start("--fake-gpus", "1")
        job = _running_job(before, go)
        waiting = before.submit("--name", "B", "--", "echo B")
        before.cli("daemon", "stop")
        before.home.rename(after.home)

        after.start()
        assert after.job(job)["state"] == "running", after.job(job)
        log = (after.home / "daemon.log").read_text()
        assert f"re-attached to job {job} " in log, log
        assert "SIGKILL" not in log, log
        _no_job_placed_on_its_gpu(after, waiting)

        go.touch()
        # (its shell wrote its status through the `process` file it holds: local_shell.py)
        ended = after.wait_state(job, "succeeded", "failed", "lost")
        assert ended["state"] == "succeeded", ended
        b = after.wait_state(waiting, "succeeded")
        assert b["started_at"] >= ended["ended_at"], (b, ended)
    finally:
        go.touch()
        after.cleanup()
        before.cleanup()
        kill_jobs_under(tmp_path)


def test_a_home_moved_while_its_daemon_runs_is_reached_under_xdg_runtime_dir(
    tmp_path: Path,
) -> None:
    before, after = Herd(tmp_path / "r1"), Herd(tmp_path / "r2")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    for herd in (before, after):
        herd.env["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        before.start("--fake-gpus", "1")
        pid = before.pid
        job = before.submit("--", "sleep", "300")
        before.wait_state(job, "running")
        before.home.rename(after.home)

        listed = after.cli("ls")  # (it waited 7 s, then said the socket was gone)
        moved = f"the home {before.home} was moved or removed while the daemon ran"
        assert moved in listed.stderr, listed
        assert "sleep 300" in listed.stdout, listed
        # A shell without XDG_RUNTIME_DIR (ssh, cron) finds it by the home's note.
        assert Client(after.home).get("/daemon")["pid"] == pid

        stopped = after.cli("daemon", "stop", check=False)
        assert "daemon stopped" in stopped.stdout, stopped
        assert "its queue went with the folder" in stopped.stderr, stopped.stderr
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), what="the daemon's exit")

        after.start()
        assert after.job(job)["state"] == "running"  # re-attached, at its new path
        assert f"re-attached to job {job} " in (after.home / "daemon.log").read_text()
    finally:
        after.cleanup()
        before.cleanup()
        kill_jobs_under(tmp_path)


def test_a_copy_beside_its_original_leaves_the_originals_jobs_alone(tmp_path: Path) -> None:
    original, copy = Herd(tmp_path / "A"), Herd(tmp_path / "C")
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    for herd in (original, copy):
        herd.env["XDG_RUNTIME_DIR"] = str(runtime)  # (one socket folder, had they one id)
    go = tmp_path / "go"
    try:
        original.start("--fake-gpus", "1")
        job = _running_job(original, go)
        original.cli("daemon", "stop")
        shutil.copytree(original.home, copy.home, symlinks=True)

        copy.start()
        said = copy.wait_state(job, "lost")
        assert (copy.home / "home_id").read_text() != (original.home / "home_id").read_text()
        log = (copy.home / "daemon.log").read_text()
        assert "another home's run of it" in log, log
        assert "SIGKILL" not in log.split("daemon started")[-1], said

        original.start()  # beside the copy's daemon
        assert original.job(job)["state"] == "running"
        go.touch()
        assert original.wait_state(job, "succeeded")["outcome"] is not None
    finally:
        go.touch()
        copy.cleanup()
        original.cleanup()
        kill_jobs_under(tmp_path)


def test_a_copy_whose_original_is_gone_is_that_home(tmp_path: Path) -> None:
    """A home moved to another disk (copied, the original then removed): its running job is
    re-attached, as after a `mv`."""
    original, moved = Herd(tmp_path / "A"), Herd(tmp_path / "disk2" / "A")
    go = tmp_path / "go"
    try:
        original.start("--fake-gpus", "1")
        job = _running_job(original, go)
        original.cli("daemon", "stop")
        shutil.copytree(original.home, moved.home, symlinks=True)
        shutil.rmtree(original.home)

        moved.start()
        assert moved.job(job)["state"] == "running"
        assert f"re-attached to job {job} " in (moved.home / "daemon.log").read_text()
    finally:
        go.touch()
        moved.cleanup()
        original.cleanup()
        kill_jobs_under(tmp_path)


def test_a_backup_restored_in_another_home_leaves_the_originals_jobs_alone(
    tmp_path: Path,
) -> None:
    original, other = Herd(tmp_path / "A"), Herd(tmp_path / "B")
    go = tmp_path / "go"
    try:
        original.start("--fake-gpus", "1")
        job = _running_job(original, go)
        backup = tmp_path / "herd-backup.db"
        original.cli("daemon", "backup", str(backup))
        original.cli("daemon", "stop")
        other.home.mkdir()
        shutil.copy(backup, other.home / "herd.db")

        other.start("--fake-gpus", "1")  # another home: the job there is not its own
        other.wait_state(job, "lost")
        original.start()
        assert original.job(job)["state"] == "running"  # not stopped by the other's daemon
        go.touch()
        original.wait_state(job, "succeeded")
    finally:
        go.touch()
        other.cleanup()
        original.cleanup()
        kill_jobs_under(tmp_path)
