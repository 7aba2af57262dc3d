"""A home that others could write (mode 0777, or a folder in it so) may hold what they put
there before the daemon's start closed it: a link as `daemon.lock` or `daemon.socket.tmp`,
through which the daemon wrote its pid or socket over a file of the user's (it emptied it
first), or a `herd.db` of their jobs, which a root daemon ran. Such a file of another user's
is refused before anything is written; the user's own files start as before.

A file of another user is made here by `lchown`, which only root may do: skipped otherwise.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import Herd

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="lchown to another uid needs root")

OTHER_UID = 54321  # no such user needed: a file's owner is a number


def open_home(herd: Herd) -> None:
    herd.home.mkdir()
    os.chmod(herd.home, 0o777)


def refused(herd: Herd, planted: Path, folder: Path) -> None:
    said = herd.cli("daemon", "start", "--fake-gpus", "1", check=False)
    assert said.returncode == 1, said
    assert said.stderr == (
        f"gpuherd: error: {planted} belongs to another user (uid {OTHER_UID}), who could put "
        f"it there while {folder} was open to others (mode 0777): a link to a file of yours "
        "for the daemon to write over, or a queue of jobs to run as you; remove it (or `chown` "
        "it to you if it is yours), then start the daemon again\n"
    )
    assert not herd.is_up()


def test_a_lock_planted_as_a_link_is_refused_and_not_written_through(
    herd: Herd, tmp_path: Path
) -> None:
    precious = tmp_path / "bashrc"
    precious.write_text("mine\n")
    open_home(herd)
    link = herd.home / "daemon.lock"
    link.symlink_to(precious)
    os.lchown(link, OTHER_UID, OTHER_UID)
    refused(herd, link, herd.home)
    assert precious.read_text() == "mine\n"
    assert not (herd.home / "herd.db").exists()


def test_a_queue_another_user_put_in_the_home_is_refused(herd: Herd) -> None:
    open_home(herd)
    theirs = herd.home / "herd.db"
    theirs.write_bytes(b"")
    os.chown(theirs, OTHER_UID, OTHER_UID)
    refused(herd, theirs, herd.home)


def test_a_file_planted_in_a_folder_of_the_home_open_to_others_is_refused(herd: Herd) -> None:
    herd.home.mkdir(mode=0o700)
    jobs = herd.home / "jobs"
    jobs.mkdir()
    os.chmod(jobs, 0o777)
    planted = jobs / "1"
    planted.mkdir()
    os.chown(planted, OTHER_UID, OTHER_UID)
    refused(herd, planted, jobs)


def test_an_open_home_of_the_users_own_files_starts_and_is_closed(herd: Herd) -> None:
    open_home(herd)
    (herd.home / "notes.txt").write_text("mine\n")
    herd.start("--fake-gpus", "1")
    assert stat.S_IMODE(herd.home.stat().st_mode) == 0o700
