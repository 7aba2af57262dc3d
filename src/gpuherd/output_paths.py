"""A job's `--output` and `--error` files as a submission gives them, made absolute and
checked as far as can be before the job runs; by the CLI (a usage error, exit 2) and by the
daemon (for every client), in one wording.

The path is taken from the job's working directory, with the links in it resolved: the daemon
then reads the file itself (`gpuherd log`), never through a link (a job could put one in place
of the file's folder). Its folder is checked up to its first part that holds a placeholder:
the folders a placeholder names (`runs/%j/` of `runs/%j/out.log`) are created as each attempt
starts, and one that cannot be, or a file that cannot be opened, then fails the attempt with
the reason (executors/local_outputs.py); a typo in the part before (`rnus/%j/out.log`) is
still caught here.

No job's file may be in a gpuherd home (home_around): it held herd.db, which the job's start
emptied (the whole queue lost, the daemon unable to start again), daemon.log, ui_token, and
every other job's logs in `jobs/`.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from gpuherd import paths
from gpuherd.core.output_files import fixed_folder, template_problem
from gpuherd.core.text import shell_word
from gpuherd.own_files import others_link
from gpuherd.paths import FILE_IN_THE_WAY

_HOME_MARKS = (paths.database(Path("/")).name, paths.lock_file(Path("/")).name)
"""What a gpuherd home holds from its daemon's first start on: herd.db and daemon.lock (which
stays after a stop). A `gpuherd run --keep-state` folder has herd.db alone: no home."""


def absolute(given: str, cwd: str) -> str:
    """The file `given` names for a job that runs in `cwd` (absolute)."""
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(given)))


def shown(given: str) -> str:
    """`given` as a message names it: quoted when blank (`--output '': empty`), where as it is
    it would read as no value at all (`--output : empty`)."""
    return given if given.strip() else shlex.quote(given)


def name_problem(given: str) -> str | None:
    """What is wrong with `given` as a job's output file before any folder is looked at:
    what the CLI checks of an `edit --output` relative to jobs' folders it does not know."""
    if not given.strip():
        return "empty: give a file name, such as train-%j.log"
    return template_problem(given)


def output_problem(given: str, cwd: str) -> str | None:
    """What is wrong with `given` as a job's output file (None: nothing found)."""
    if problem := name_problem(given):
        return problem
    if problem := planted_link(os.path.join(cwd, os.path.expanduser(given))):
        return problem
    path = absolute(given, cwd)
    # As given too: a home's `jobs/` may link elsewhere, where `path`, resolved, is in no home.
    typed = os.path.abspath(os.path.join(cwd, os.path.expanduser(given)))
    for where in dict.fromkeys((path, typed)):  # (one lstat walk when they are the same)
        if home := home_around(fixed_folder(where)):
            return (
                f"{where} is in gpuherd's home {shell_word(home)}: the home is gpuherd's own "
                "(herd.db, daemon.log, every job's folder and logs): name a file outside it"
            )
    if given.endswith("/") or os.path.isdir(path):
        return f"{path} is a folder: name a file in it, such as {os.path.join(path, '%j.log')}"
    if "%" not in path and os.path.exists(path):  # (/dev/null, or a file written before)
        if not os.access(path, os.W_OK):
            return f"{path} cannot be written ({_why_not(path)}): name another file"
        return None
    folder = fixed_folder(path)  # (the folders after it are created as the job starts)
    if not os.path.isdir(folder):
        if in_the_way := _file_in_the_way(folder):
            return (
                f"{FILE_IN_THE_WAY} ({in_the_way} is a file): move it aside, or name a file "
                "elsewhere"
            )
        # (shell_word: `$'/a\x1bb'` makes the folder named; shlex's quotes, a literal \x1b)
        return (
            f"the folder {folder} does not exist: create it (mkdir -p {shell_word(folder)}) first"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot create a file in {folder} ({_why_not(folder)}): name a file elsewhere"
    return None


def home_around(folder: str) -> str | None:
    """The gpuherd home that `folder` (absolute, links resolved) is, or is in: the nearest
    folder on its way up to `/` that holds _HOME_MARKS; None if none does. Found by what the
    home holds, not by the daemon's home alone: every client's check (the CLI's, exit 2) and
    a sweep's results_dir have no daemon's home to compare with, and another home's files are
    no less gpuherd's."""
    database, lock = _HOME_MARKS
    while True:  # (~4 us a folder on its way: one lstat, herd.db's, where there is none)
        if os.path.lexists(f"{folder}/{database}") and os.path.lexists(f"{folder}/{lock}"):
            return folder
        up = os.path.dirname(folder)
        if up == folder:  # (`/`, or a relative folder run out: none)
            return None
        folder = up


def _file_in_the_way(folder: str) -> str | None:
    """The file that stands in place of `folder` or of a folder above it (None: the first
    that exists is a folder): there the `mkdir -p` the message advised before fails."""
    while not os.path.exists(folder) and folder != os.path.dirname(folder):  # (up to `/`)
        folder = os.path.dirname(folder)
    return None if os.path.isdir(folder) else folder


def _why_not(path: str) -> str:
    """Why `path`, which os.access says cannot be written, cannot: its disk mounted
    read-only (which no chmod mends, and which root meets too), else its permissions."""
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return "read-only file system" if read_only else "permission denied"


def planted_link(path: str) -> str | None:
    """What is wrong with writing `path` through another user's symbolic link (None: there
    is none on its way): at submission, and again as each attempt opens the file
    (executors/local_outputs.py), as one may be planted while the job waits."""
    found = others_link(path)
    if found is None:
        return None
    link, owner = found
    try:
        target = f" to {os.readlink(link)}"
    except OSError:
        target = ""
    return (
        f"{link} is a symbolic link of another user (uid {owner}){target}, who could point it "
        "at a file of yours for the job to write over: remove it, or name a file in a folder "
        "only you can write"
    )
