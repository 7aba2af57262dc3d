"""A daemon that cannot start on a full disk: the write that failed (the socket's note in the
home, after a `kill -9`) names no file, and `daemon start` said only `gpuherd: error: [Errno
28] No space left on device`, not which disk, nor what to do."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from gpuherd import daemon


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (
            OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
            "the disk holding {home} is full: free some space on it, then `gpuherd daemon "
            "start` again",
        ),
        (  # a file named elsewhere (the socket's folder under XDG_RUNTIME_DIR): its disk
            OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/run/user/0/gpuherd-1/herd.sock"),
            "the disk holding /run/user/0/gpuherd-1 is full: free some space on it, then "
            "`gpuherd daemon start` again",
        ),
        (  # another: its file named, and what to do (test_daemon_start_blocked_files.py)
            PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/x/daemon.lock"),
            "cannot write /x/daemon.lock (Permission denied): make it yours and writable "
            "(`ls -l /x/daemon.lock` shows whose it is; `lsattr` shows an immutable one), or "
            "point GPUHERD_HOME at a folder of yours; then `gpuherd daemon start` again",
        ),
        (  # an immutable daemon.lock (chattr +i), or one of another user's (not as root)
            PermissionError(errno.EPERM, os.strerror(errno.EPERM), "/x/daemon.lock"),
            "cannot write /x/daemon.lock (Operation not permitted): make it yours and "
            "writable (`ls -l /x/daemon.lock` shows whose it is; `lsattr` shows an immutable "
            "one), or point GPUHERD_HOME at a folder of yours; then `gpuherd daemon start` "
            "again",
        ),
        (
            OSError(errno.EROFS, os.strerror(errno.EROFS), "/x/daemon.lock"),
            "cannot write /x/daemon.lock: its disk is read-only: remount it read-write, or "
            "point GPUHERD_HOME at a folder on a writable disk; then `gpuherd daemon start` "
            "again",
        ),
        (
            NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), "/x/run/herd.sock"),
            "cannot open /x/run/herd.sock: a file stands where a folder should be on its path: "
            "move that file aside, then `gpuherd daemon start` again",
        ),
        (
            OSError(errno.EIO, os.strerror(errno.EIO), "/x/daemon.lock"),
            "cannot use /x/daemon.lock (Input/output error): fix it or move it aside, then "
            "`gpuherd daemon start` again",
        ),
    ],
)
def test_a_start_that_fails_on_a_file_says_where_and_what_to_do(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: OSError,
    said: str,
) -> None:
    def serve(*args: object) -> None:
        raise failure

    monkeypatch.setattr(daemon, "serve", serve)
    assert daemon.main(["--home", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"gpuherd daemon: {said.format(home=tmp_path)}\n"
