"""The git commit a job is submitted from: recorded in its job (`show`, job.json), and in each
sweep point's params.json."""

from __future__ import annotations

import os
import subprocess

GIT_TIMEOUT = 3.0
"""Seconds each of the two git calls may take (a large repository's cold `git status`)."""
UNKNOWN = "+unknown"
"""After the sha when `git status` failed or ran out of time: clean or changed, nobody knows."""


def git_commit(cwd: str, path: str | None = None, timeout: float = GIT_TIMEOUT) -> str | None:
    """The commit checked out in `cwd`, with "+dirty" when tracked files changed, "+unknown"
    when `git status` could not say; None outside a git work tree (or without git on `path`).
    Untracked files do not count: a sweep's own results folder inside the repository would
    make every resubmission dirty."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    if path is not None:  # the submitter's PATH: their git
        env["PATH"] = path

    def git(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(
                ["git", "-C", cwd, *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError, ValueError):  # (ValueError: a NUL)
            return None

    head = git("rev-parse", "--verify", "HEAD")
    if head is None or head.returncode != 0 or not head.stdout.strip():
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    if status is None or status.returncode != 0:
        return head.stdout.strip() + UNKNOWN
    return head.stdout.strip() + ("+dirty" if status.stdout.strip() else "")
