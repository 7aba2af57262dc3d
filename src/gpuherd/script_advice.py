"""What script_files says of a file a command runs by its path that cannot run so (not
executable, on a noexec mount, or with no `#!` line), one line for the files alike, with what
mends it; and who fails (`the job`, `every point`). A part of script_files.py."""

from __future__ import annotations

import os
import shlex


def who_fails(n: int, total: int, noun: str, it: str = "it") -> tuple[str, str]:
    """Who fails (`the job`, `every point`, `the 2 points that run it`) and when they start."""
    if total == 1:
        return f"the {noun}", "it starts"
    if n == total:
        return f"every {noun}", "they start"
    if n == 1:
        return f"the {noun} that runs {it}", "it starts"
    return f"the {n:,} {noun}s that run {it}", "they start"


def _shown(files: list[str]) -> str:
    return " and ".join(files[:2]) + (f" ({len(files):,} in all)" if len(files) > 2 else "")


def locked_script(files: list[str], n: int, total: int, cwd: str, noun: str, run: str) -> str:
    """`./train.sh is not executable: the job will fail ...`: one line for them all, its
    chmod by the files' whole paths (one typed elsewhere than the job's folder, `--cwd`, or
    a hook's, in the daemon's home, found no `./train.sh`). (`run`: unused here.)"""
    who, start = who_fails(n, total, noun)
    what = "is not executable" if len(files) == 1 else "are not executable"
    paths = [os.path.normpath(os.path.join(cwd, file)) for file in files[:2]]
    them = shlex.join(paths) + (" ..." if len(files) > 2 else "")
    return (
        f"{_shown(files)} {what}: {who} will fail with 'Permission denied' (exit 126) unless "
        f"made so before {start}: chmod +x {them}"
    )


def on_noexec(files: list[str], n: int, total: int, cwd: str, noun: str, run: str) -> str:
    """`./train.sh is on a file system mounted noexec ...`: locked_script's line for scripts
    that no `chmod +x` mends, with `run`, the interpreter that runs the first (its `#!`
    line's)."""
    who = who_fails(n, total, noun)[0]
    what = "is on a file system" if len(files) == 1 else "are on file systems"
    first = f"{run}{shlex.quote(files[0])}"
    how = f"it through its interpreter instead: {first}"
    if len(files) > 1:
        how = f"each through its interpreter instead ({first}, ...)"
    return (
        f"{_shown(files)} {what} mounted noexec, where no file runs by its path: {who} will "
        f"fail with 'Permission denied' (exit 126) and chmod +x will not help; run {how}"
    )


def no_shebang(files: list[str], n: int, total: int, cwd: str, noun: str, run: str) -> str:
    """`commands.txt is not executable, and has no #! line ...`: locked_script's line for
    files that `chmod +x` would make run as sh code (a job file, a .py): `submit
    examples/commands.txt` was told to chmod it, which ran its four jobs' lines as one
    script, and a .py as shell code. A .py is run by python3; another file, one line of
    commands a job, by `submit --file` (a job's), else by sh."""
    who = who_fails(n, total, noun)[0]
    what = "is not executable" if len(files) == 1 else "are not executable"
    first = shlex.quote(files[0])
    if files[0].endswith(".py"):
        how = f"run it with Python: python3 {first}"
    elif noun == "job":
        how = f"to queue each of its lines as a job: gpuherd submit --file {first}; to run it"
        how += f" as one shell script: sh {first}"
    else:
        how = f"run it as a shell script: sh {first}"
    return (
        f"{_shown(files)} {what}, and made so would run as sh code (no #! line): {who} will"
        f" fail with 'Permission denied' (exit 126); {how}"
    )
