"""A job's job.json and attempt.json record its --env values (API keys): where a job has any,
they are its user's alone, whatever folder they are in (a sweep's results folder is often one
that others can read); without any, they are made as the umask says."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from conftest import Herd, wait_for


def _finished_point(herd: Herd, folder: Path, *options: str) -> Path:
    """The folder of a one-point sweep's point, once it ended."""
    name = folder.name
    herd.cli(
        "sweep", "echo {x}", "-p", "x", "1", "--name", name, "--results-dir", str(folder), *options
    )
    herd.cli("wait", "--sweep", name)
    point = folder / "x=1"
    wait_for(lambda: (point / "SUCCESS").exists(), what="the point's end")
    return point


def _modes(point: Path) -> dict[str, int]:
    files = (point / "job.json", point / "attempt-1" / "attempt.json")
    return {f.name: stat.S_IMODE(f.stat().st_mode) for f in files}


def test_job_files_with_env_values_are_the_users_alone(daemon: Herd, tmp_path: Path) -> None:
    point = _finished_point(daemon, tmp_path / "secret", "--env", "API_KEY=s3cret")
    assert '"API_KEY": "s3cret"' in (point / "job.json").read_text()  # still there, for you
    assert _modes(point) == {"job.json": 0o600, "attempt.json": 0o600}


def test_job_files_without_env_values_keep_the_umask(daemon: Herd, tmp_path: Path) -> None:
    point = _finished_point(daemon, tmp_path / "plain")
    umask = os.umask(0)
    os.umask(umask)
    assert _modes(point) == {"job.json": 0o644 & ~umask, "attempt.json": 0o644 & ~umask}
