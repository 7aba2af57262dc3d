"""The home's file modes: herd.db (every job's environment, API keys and all) and the job logs
are the user's alone, for a new home and for one an older gpuherd left open; the jobs' own
files keep the user's umask. (Run as root, so modes are asserted, not another user's access.)"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from conftest import Herd

SECRET = "sk-not-for-other-users-1234"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def database_files(home: Path) -> list[Path]:
    return sorted(home.glob("herd.db*"))


def current_umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def test_a_new_home_and_its_database_are_the_users_alone(tmp_path: Path) -> None:
    herd = Herd(tmp_path / "a" / "b" / "home")  # folders above it to make too
    try:
        herd.cli("daemon", "start", "--fake-gpus", "1", cwd=tmp_path)
        env = {**herd.env, "MY_API_KEY": SECRET}
        job_id = int(herd.cli("submit", "-q", "--", "touch", "made-by-the-job", env=env).stdout)
        herd.wait_state(job_id, "succeeded")
        files = database_files(herd.home)
        assert {f.name for f in files} >= {"herd.db", "herd.db-wal", "herd.db-shm"}
        assert any(SECRET.encode() in f.read_bytes() for f in files)  # what the modes guard
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        assert mode(herd.home) == 0o700
        # Only the home: the folders above it, and what the job makes, keep the umask's mode.
        assert mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o777 & ~current_umask()
        made = Path(herd.job(job_id)["cwd"]) / "made-by-the-job"
        assert mode(made) == 0o666 & ~current_umask()
        made.unlink()
    finally:
        herd.cleanup()


def test_an_older_open_home_is_closed_at_the_next_start(herd: Herd) -> None:
    """A home of an older gpuherd: 0755, herd.db and what a crash left beside it 0644."""
    herd.start("--fake-gpus", "1")
    herd.submit("--hold", "--", "true")
    herd.kill9()  # -wal and -shm stay behind
    os.chmod(herd.home, 0o755)
    for path in database_files(herd.home):
        os.chmod(path, 0o644)
    assert len(database_files(herd.home)) == 3

    herd.start()
    assert mode(herd.home) == 0o700
    assert {f.name: mode(f) for f in database_files(herd.home)} == {
        f.name: 0o600 for f in database_files(herd.home)
    }
    log = (herd.home / "daemon.log").read_text()
    assert f"{herd.home} was open to other users (mode 0755): made it 0700" in log
    assert len(herd.ls_all()) == 1  # the queue is the same


def test_a_new_home_is_closed_without_a_warning(daemon: Herd) -> None:
    assert mode(daemon.home) == 0o700
    assert "open to other users" not in (daemon.home / "daemon.log").read_text()
