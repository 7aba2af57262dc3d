"""`daemon backup FILE` where FILE is no file: a device, a named pipe. Taken with --force, the
copy was renamed over it: `daemon backup /dev/null --force` (as root) made /dev/null a
regular file of mode 0600, breaking every program on the machine that writes to it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from test_queue_backup import queue_home

from gpuherd import queue_backup
from gpuherd.errors import HerdError

__all__ = ["queue_home"]  # (the fixture: a home whose herd.db holds an empty queue)


@pytest.mark.parametrize("replace", [False, True])
def test_a_named_pipe_at_file_is_refused_and_left_as_it_is(
    queue_home: Path, tmp_path: Path, replace: bool
) -> None:
    pipe = tmp_path / "backup.fifo"
    os.mkfifo(pipe)
    with pytest.raises(HerdError) as refusal:
        queue_backup.back_up(queue_home, pipe, replace=replace)
    assert str(refusal.value) == (
        f"{pipe} is a named pipe, not a file: the copy is written as a file of its own; name "
        "one, such as herd-backup.db"
    )
    assert stat.S_ISFIFO(pipe.lstat().st_mode)  # still the pipe: never replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backup.fifo", "home"]


@pytest.mark.parametrize(
    "name", ["daemon.lock", "daemon.log", "daemon.socket", "ui_token", "hooks.log", "hooks.log.1"]
)
def test_the_daemons_own_files_in_the_home_are_refused_with_force(
    queue_home: Path, name: str
) -> None:
    """`daemon backup ~/.local/share/gpuherd/daemon.lock --force` put the copy in the lock's
    place: the pid in it was gone, so a stopped daemon was no longer named by its pid."""
    own = queue_home / name
    own.write_text("4242\n")
    with pytest.raises(HerdError) as refusal:
        queue_backup.back_up(queue_home, own, replace=True)
    said = f"{own} is one of the daemon's own files in {queue_home}: name another file"
    assert str(refusal.value) == said
    assert own.read_text() == "4242\n"
    beside = queue_home / "herd-backup.db"  # a file of the user's in the home: taken
    assert queue_backup.back_up(queue_home, beside, replace=True).endswith(f" to {beside}")
