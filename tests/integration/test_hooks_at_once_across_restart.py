"""At most 4 on-end hooks run at once, across a daemon restart too: the hooks the last daemon
left running go on by themselves (their own sessions), and a new daemon started 4 more beside
them. It now counts them (known by the pid in their output file's name, hook_files.py) and
starts one in the place of each that ends."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import Herd, stays, wait_for


def test_hooks_the_last_daemon_left_running_count_toward_the_4_at_once(
    herd: Herd, tmp_path: Path
) -> None:
    herd.start("--fake-gpus", "1")
    started, go = tmp_path / "started", tmp_path / "go"
    started.mkdir()
    go.mkdir()
    # Each hook says it started, then holds on until its own go file.
    herd.cli(
        "config",
        "set",
        "on-end",
        f'touch "{started}/$GPUHERD_JOB_ID"; '
        f'while [ ! -e "{go}/$GPUHERD_JOB_ID" ]; do sleep 0.02; done',
    )
    try:
        ids = [herd.submit("--gpus", "0", "--", "true") for _ in range(8)]
        wait_for(lambda: len(os.listdir(started)) == 4, what="4 hooks to start")
        first = sorted(map(int, os.listdir(started)))
        herd.kill9()  # its 4 hooks run on; the other 4 wait for the next daemon
        herd.start()
        # The 4 left running take the 4 places: the next start waits for one to end.
        stays(lambda: len(os.listdir(started)) == 4, what="no hook to start beside them")
        (go / str(first[0])).touch()
        wait_for(lambda: len(os.listdir(started)) == 5, what="a hook in the freed place")
        stays(lambda: len(os.listdir(started)) == 5, what="one hook for one place")
        for job in ids:
            (go / str(job)).touch()
        wait_for(lambda: len(os.listdir(started)) == 8, what="every hook to run")
        assert sorted(map(int, os.listdir(started))) == ids
    finally:
        for job in range(1, 9):  # (no hook left waiting for ever, should an assert fail)
            (go / str(job)).touch()
