"""`gpuherd run --output-dir DIR` where DIR exists but cannot be written in (a read-only
mount, chmod a-w): refused once, before any job starts (each job failed in turn, each with
the same line, leaving nothing)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Runs


@contextlib.contextmanager
def _unwritable_folder(path: Path) -> Iterator[Path]:
    """A folder this process cannot write in: a read-only tmpfs where mounting works (root
    writes past mode bits), else chmod a-w; skipped when neither makes it unwritable."""
    path.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(path)],
            capture_output=True,
        ).returncode
        == 0
    )
    if not mounted:
        path.chmod(0o555)
    try:
        if os.access(path, os.W_OK):
            pytest.skip("no way to make a folder unwritable here (root, and no mount)")
        yield path
    finally:
        if mounted:
            subprocess.run(["umount", str(path)], check=True)
        else:
            path.chmod(0o755)


def test_an_unwritable_output_dir_is_refused_before_any_job(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("touch ran-1\ntouch ran-2\n")
    with _unwritable_folder(runs.root / "out") as out:
        proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "jobs.txt")
        assert (proc.returncode, proc.stdout) == (1, ""), proc.stdout + proc.stderr
        assert proc.stderr == (
            f"gpuherd: error: --output-dir {out}: cannot write in it (read-only, or not "
            "yours); give a folder you can write to, or make it writable (chmod u+w)\n"
        )
        assert os.listdir(out) == []
    assert not (runs.cwd / "ran-1").exists() and not (runs.cwd / "ran-2").exists()


@pytest.mark.parametrize("blocked", ["read-only", "a file"])
def test_a_default_output_folder_that_cannot_be_made_is_named_as_it_failed(
    runs: Runs, blocked: str
) -> None:
    # It named herd_runs/<timestamp>, which was never tried: herd_runs itself failed.
    (runs.cwd / "jobs.txt").write_text("touch ran\n")
    with contextlib.ExitStack() as undo:
        if blocked == "a file":
            (runs.cwd / "herd_runs").write_text("")  # a file where the folder would be
            cwd, why = runs.cwd, "File exists"
        else:
            cwd = undo.enter_context(_unwritable_folder(runs.root / "ro"))
            (runs.root / "ro-jobs.txt").write_text("touch ran\n")
            why = "Read-only file system" if os.path.ismount(cwd) else "Permission denied"
        jobs = "jobs.txt" if blocked == "a file" else str(runs.root / "ro-jobs.txt")
        proc = runs.run("--fake-gpus", "1", jobs, cwd=cwd)
        assert (proc.returncode, proc.stderr) == (
            1,
            f"gpuherd: error: cannot create herd_runs: {why}; run from a folder you can write "
            "to, or pass --output-dir\n",
        )
    assert not (runs.cwd / "ran").exists()
