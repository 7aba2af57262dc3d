"""`daemon start` of a new home on a disk that is full: the daemon cannot write a byte of its
log, its last word included, and `start` said only "the daemon exited with status 1; see
daemon.log", naming an empty file. It says the disk is full, as the README promises."""

from __future__ import annotations

from faults import fill, tmpfs

from conftest import Herd


def test_a_start_whose_daemon_could_not_log_names_the_full_disk(herd: Herd) -> None:
    with tmpfs(herd.home.parent / "disk", "1m") as disk:
        home = Herd(disk / "gpuherd")
        fill(disk)
        done = home.cli("daemon", "start", "--fake-gpus", "1", check=False)
        assert not home.is_up()
        assert (home.home / "daemon.log").stat().st_size == 0  # it could not say it there
    assert done.returncode == 1
    assert done.stderr == (
        f"gpuherd: error: the disk holding {home.home} is full: free some space on it, then "
        "`gpuherd daemon start` again\n"
    )
