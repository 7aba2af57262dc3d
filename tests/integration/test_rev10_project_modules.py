"""A daemon started from a project's folder that holds a file named like a standard module
(`secrets.py` with a project's API keys is common, `uuid.py`, `logging.py`): the folder is not
on the daemon's import path (`python -P`), so the daemon imports the standard module; it
exited at its start (`cannot import secrets ...: cannot import name 'token_hex'`). Real
processes: a forked daemon (tests/forks.py) has the standard modules imported already."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import Herd

SHADOWS = {"secrets.py": 'WANDB_API_KEY = "x"\n', "uuid.py": "", "logging.py": ""}


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    for name, text in SHADOWS.items():
        (folder / name).write_text(text)
    return folder


def started_there(herd: Herd, folder: Path, *python: str) -> None:
    """`python -P PYTHON...` in `folder`: -P as the `gpuherd` script runs (its folder, not
    the one it is run in, is first on its path: `python -m gpuherd` would import the
    project's uuid.py itself)."""
    started = subprocess.run(
        [sys.executable, "-P", *python],
        env=herd.env,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0, started.stderr
    assert herd.is_up()
    job = herd.submit("echo hello")
    herd.wait_state(job, "succeeded")


def test_daemon_start_in_a_folder_with_a_secrets_py(herd: Herd, tmp_path: Path) -> None:
    started_there(herd, project(tmp_path), "-m", "gpuherd", "daemon", "start", "--fake-gpus", "1")


def test_connect_in_a_folder_with_a_secrets_py(herd: Herd, tmp_path: Path) -> None:
    started_there(herd, project(tmp_path), "-c", "import gpuherd; gpuherd.connect(fake_gpus=1)")
