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

from gpuherd.executors.base import RUN_FOLDER_GONE, LaunchRequest, SpawnError
from gpuherd.executors.local import LocalExecutor


class RunExecutor(LocalExecutor):
    def __init__(self) -> None:
        super().__init__(one_shot=True)
        self._folder = _started_in()

    def launch(self, request: LaunchRequest) -> int:
        if self._folder is not None and request.cwd == self._folder[0]:
            path, identity = self._folder
            try:
                same = os.path.samestat(os.stat(path), identity)
            except OSError:
                same = False  # (gone: checked_workdir's words, as here)
            if not same:
                raise SpawnError(f"working directory {path} does not exist: {RUN_FOLDER_GONE}")
        return super().launch(request)


def _started_in() -> tuple[str, os.stat_result] | None:
    """The folder this process runs in (where `gpuherd run` was started, and its jobs run),
    and its identity; None when it is gone already (the path check alone then)."""
    try:
        return os.getcwd(), os.stat(".")
    except OSError:
        return None
