"""A job's folders checked at submission: its working directory (`cwd`, every job's), and
the own folder (`folder`) a raw HTTP request names (a part of submission.py).

The daemon makes a job's folder as the job starts, and moves aside what it finds there that
is not a folder of the user's own (attempt_folder.py: a link someone else could have
planted). So a `folder` that named a file, `/etc/passwd` even, was taken, and at the start
the daemon (as root, there) renamed the file and made a folder in its place; a link of the
user's own to a folder of theirs was moved aside alike. And a folder in the daemon's home (a
job's `jobs/<id>`) mixed a job's logs with another's, which `rm` deleted, and the home itself
got a job's job.json and attempt-1/ beside herd.db.
Each is refused at submission now, in one line; and a sweep's results_dir there alike
(refuse_home_folder), its points' folders being jobs' own.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from gpuherd.core.text import shell_word
from gpuherd.errors import InvalidValue
from gpuherd.layout import Layout
from gpuherd.output_paths import home_around
from gpuherd.submission_batch import Batch
from gpuherd.submission_text import field
from gpuherd.wire import SubmitItem


def refuse_own_folders(items: Sequence[SubmitItem], home: str | os.PathLike[str]) -> None:
    """InvalidValue for the first of the items whose own `folder` no job may have: a file or
    a link where it is (not_a_folder), the daemon's `home` itself or a place in its `jobs/`
    (another job's `jobs/<id>`), by real paths (a folder of the user's own under the home,
    `results/`, is theirs). For a raw HTTP request's items, the only ones that name a folder
    of their choosing: a sweep's points and a run's `job_N` are gpuherd's, and what is found
    planted there is moved aside as the job starts, by design (a results folder others can
    write: attempt_folder.py). Each parent folder is resolved once (os.path.realpath: ~35 us;
    10,000 jobs took 0.35 s)."""
    real_home = os.path.realpath(home)
    real_jobs = os.path.realpath(Layout.for_home(Path(home)).root)
    batch = Batch(len(items))
    parents: dict[str, str] = {}
    for n, item in enumerate(items, 1):
        folder = item.folder
        if not folder or not os.path.isabs(folder):  # (relative: spec_from_item says so)
            continue
        path = folder.rstrip("/") or "/"  # (`link/`: lstat would follow the link)
        parent, name = os.path.split(path)
        try:
            if problem := not_a_folder(folder, path):
                raise InvalidValue(f"{batch.where(n)}{problem}")
            if name in ("", ".", ".."):  # (`jobs/7/..`: resolved whole)
                real = os.path.realpath(path)
            else:
                if (resolved := parents.get(parent)) is None:
                    resolved = parents[parent] = os.path.realpath(parent)
                real = os.path.join(resolved, name)
        except (ValueError, UnicodeError):  # a NUL, text no path holds: spec_from_item says so
            continue
        if what := _gpuherds(real, real_home, real_jobs):
            raise InvalidValue(f"{batch.where(n)}{_refused('folder', folder, what)}")


def refuse_home_folder(name: str, folder: str) -> None:
    """InvalidValue if the absolute `folder`, where jobs' folders go (`name`: a sweep's
    results_dir), is a gpuherd home or a place in its `jobs/`, as a job's own `folder` may not
    be (refuse_own_folders): a point's folder there was another job's `jobs/<id>`, which its
    `rm` deleted with the point's results. The home is found by what it holds (home_around):
    a sweep's request has no daemon's home to compare with."""
    try:
        real = os.path.realpath(folder)
    except (ValueError, UnicodeError):  # a NUL, text no path holds: said where it is used
        return
    if (home := home_around(real)) is None:
        return
    if what := _gpuherds(real, home, os.path.realpath(Layout.for_home(Path(home)).root)):
        raise InvalidValue(_refused(name, folder, what))


def _gpuherds(real: str, real_home: str, real_jobs: str) -> str | None:
    """What of gpuherd's own the folder `real` is (all three resolved): its home, or a place
    in the home's `jobs/`; None for neither (a folder of the user's own under the home)."""
    if real == real_home:
        return "is gpuherd's home"
    if real == real_jobs or real.startswith(real_jobs + "/"):
        return f"is in {shell_word(real_jobs)}, the folder of gpuherd's own jobs' folders"
    return None


def _refused(name: str, folder: str, what: str) -> str:
    """The line refusing `folder`, given as `name`, that _gpuherds says `what` of."""
    return (
        f"{name} {shell_word(folder)} {what}: the home is gpuherd's own (herd.db, every job's "
        "folder): give a folder outside it"
    )


def not_a_folder(folder: str, path: str) -> str | None:
    """What is wrong with `folder` (absolute; `path`, without a trailing /) as a job's own
    folder: a file or a link where it is; None for a folder, or for none yet (the job's start
    makes it)."""
    try:
        found = os.lstat(path)
    except OSError:  # not there (made at the start), or not reachable: said then
        return None
    if stat.S_ISLNK(found.st_mode):
        # Refused, not resolved: the job's `job_dir` would not be the folder asked for, and
        # where results go is the user's to say; the real path is one copy away.
        return (
            f"folder {shell_word(folder)} is a symbolic link: give the folder itself, "
            f"{shell_word(os.path.realpath(path))} (a job's folder is never a link)"
        )
    if not stat.S_ISDIR(found.st_mode):
        what = "a file" if stat.S_ISREG(found.st_mode) else "not a folder"
        return (
            f"folder {shell_word(folder)} is {what}: give the absolute path of a folder (one "
            "not there yet is made as the job starts)"
        )
    return None


def check_cwd(cwd: str, where: str = "") -> None:
    """InvalidValue unless `cwd` is the absolute path of an existing folder: a job's working
    directory (at submission, and after an edit)."""
    if not cwd:  # (said `working directory  does not exist`, of nothing)
        raise InvalidValue(
            f"{where}{field('cwd')} is empty: give the absolute path of an existing folder, "
            "the job's working directory"
        )
    # (A relative one is none of the daemon's to resolve: its own folder is no one's.)
    if os.path.isabs(cwd) and os.path.isdir(cwd):
        return
    what = (
        "is relative"
        if not os.path.isabs(cwd)
        else "is not a folder"
        if os.path.exists(cwd)
        else "does not exist"
    )
    raise InvalidValue(
        f"{where}working directory {cwd} {what}: give the absolute path of an existing folder "
        f"as {field('cwd')}"
    )
