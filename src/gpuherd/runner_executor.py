"""`gpuherd run`'s executor: the daemon's LocalExecutor, but a job whose working folder (the
one the run was started in) is gone does not start, even where a folder of its path is back.

A job's folder is made as it starts, with its missing parents (jobfiles.prepare): an
--output-dir inside the removed folder brought a folder of its path back, empty, and the path
check (checked_workdir) let the job run there, reading none of its files and writing its
results where nobody looks (the shell's `getcwd() failed` leaking onto the run's stderr). So
the run's folder is known by identity (device, inode), taken as the run begins. The daemon's
jobs keep the path check: a folder made again, then `gpuherd retry`, is their way out.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gpuherd.errors import HerdError
from gpuherd.executors.base import RUN_FOLDER_GONE, LaunchRequest, SpawnError
from gpuherd.executors.local import LocalExecutor

if TYPE_CHECKING:
    from gpuherd.wire import SubmitItem


class RunExecutor(LocalExecutor):
    def __init__(self) -> None:
        super().__init__(one_shot=True)
        self._folder = _started_in()

    def launch(self, request: LaunchRequest) -> int:
        if gone := self._gone(request.cwd):
            raise SpawnError(gone)
        return super().launch(request)

    def still_there(self, items: list[SubmitItem]) -> list[SubmitItem]:
        """The items of lines just read, to submit; HerdError, in a job's `failed` line's
        words, when their folder is gone (then `could not run`, as the submission's check of
        the path says of a folder still missing). Made again at its path, that check let the
        line's job be queued, to start and fail at once, as though it had been read before."""
        for cwd in {item.cwd for item in items}:  # (one: the run's)
            if gone := self._gone(cwd):
                raise HerdError(gone)
        return items

    def _gone(self, cwd: str) -> str | None:
        """Why a job of `cwd`, the run's folder, cannot run there: it is gone, or what is at
        its path is another folder; None: it is there, or `cwd` is another folder."""
        if self._folder is None or cwd != self._folder[0]:
            return None
        path, identity = self._folder
        try:
            if os.path.samestat(os.stat(path), identity):
                return None
        except OSError:
            pass  # (gone: checked_workdir's words, as here)
        return f"working directory {path} does not exist: {RUN_FOLDER_GONE}"


def _started_in() -> tuple[str, os.stat_result] | None:
    """The folder this process runs in (where `gpuherd run` was started, and its jobs run),
    and its identity; None when it is gone already (the path check alone then)."""
    try:
        return os.getcwd(), os.stat(".")
    except OSError:
        return None
