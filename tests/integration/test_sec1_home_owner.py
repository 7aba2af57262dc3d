"""A home that is another user's folder (made in /tmp by someone else, under the name one then
gives to GPUHERD_HOME) is refused: its owner could open it again at any time, read every
job's logs in it, and replace its herd.db with jobs of their own, which the daemon would run
as you."""

from __future__ import annotations

import os

import pytest

from conftest import Herd

NOBODY = 65534


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another user")
def test_a_home_that_is_another_users_folder_is_refused(herd: Herd) -> None:
    herd.home.mkdir()
    os.chown(herd.home, NOBODY, NOBODY)
    os.chmod(herd.home, 0o777)
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", check=False)
    assert refused.returncode == 1, refused
    assert refused.stderr == (
        f"gpuherd: error: GPUHERD_HOME {herd.home} belongs to another user (uid {NOBODY}), "
        "who could read the jobs' logs in it and replace its queue with jobs of theirs, run "
        "as you: set GPUHERD_HOME to a folder of your own, or `chown` this one to you if it is "
        "yours\n"
    )
    assert not herd.is_up()
    assert not (herd.home / "herd.db").exists()  # nothing of a queue was put there
