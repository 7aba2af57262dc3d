"""`gpuherd run`'s state: a database in a temporary folder that dies with the run, or, with
--keep-state, ends up as OUTPUT/herd.db."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from gpuherd.errors import HerdError

SUFFIXES = ("", "-wal", "-shm")
"""The database's files: SQLite's write-ahead log and shared memory go with it."""


def check_keep_state(output_dir: Path) -> None:
    """--keep-state moves the database to OUTPUT/herd.db once every job has ended: refuse
    before any job starts what would make that fail only then."""
    for suffix in SUFFIXES:
        target = output_dir / f"herd.db{suffix}"
        if target.is_dir() and not target.is_symlink():  # (a link is replaced, not entered)
            raise HerdError(
                f"--keep-state: {target} is a folder, where the run's database would go: "
                "move it away, or give another --output-dir"
            )
    if output_dir.is_dir() and not os.access(output_dir, os.W_OK | os.X_OK):
        raise HerdError(
            f"--keep-state: cannot write in {output_dir}: give an --output-dir you can write to"
        )


def keep_database(state_dir: Path, output_dir: Path) -> None:
    """Move the (closed) database from `state_dir` to OUTPUT/herd.db; OSError if it cannot."""
    for suffix in SUFFIXES:
        src = state_dir / f"herd.db{suffix}"
        if src.exists():
            _move_file(src, output_dir / f"herd.db{suffix}")


def put_away(state_dir: Path, output_dir: Path, keep: bool) -> str | None:
    """The run's state folder goes; with `keep` (--keep-state, a run that started), once its
    database has moved to the output folder. What went wrong, to tell the user: then the
    folder is left as it is."""
    if keep:
        try:
            keep_database(state_dir, output_dir)
        except OSError as exc:  # checked at the start, but the folder may have changed
            return (
                f"--keep-state: cannot move the run's database to {output_dir}:"
                f" {exc.strerror or exc}; it is in {state_dir / 'herd.db'}"
            )
    remove_state(state_dir)
    return None


def remove_state(state_dir: Path) -> None:
    for path in state_dir.glob("*"):
        path.unlink(missing_ok=True)
    state_dir.rmdir()


def _move_file(src: Path, dst: Path) -> None:
    """A rename; a copy when the temporary folder is on another file system than the output
    (/tmp is often a tmpfs), where a rename fails (EXDEV)."""
    try:
        src.replace(dst)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        shutil.copyfile(src, dst)  # (the original goes with the temporary folder)
        os.chmod(dst, 0o600)  # a copy takes the umask's mode: it holds the jobs' environments
