"""A script run by its path (`./train.sh`) from a file system mounted `noexec` fails as it
starts (`Permission denied`, exit 126), whatever its mode: `submit` warned that it is not
executable and told to `chmod +x` it, which does not help there. It now says the mount, and to
run it through its interpreter (`sh ./train.sh`), as its `#!` line names it. A real tmpfs
mounted noexec (skipped where this process may not mount), a real daemon, real jobs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.cli.submit_hints import not_on_path_hint
from gpuherd.script_files import interpreter_of, missing_script_hints, on_noexec_mount


@pytest.fixture
def noexec(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "noexec"
    folder.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "noexec,size=1m", "tmpfs", str(folder)]
    try:
        mounted = subprocess.run(mount, capture_output=True, check=False).returncode == 0
    except OSError:
        mounted = False
    if not mounted:
        pytest.skip("cannot mount a noexec tmpfs here (needs root)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def script(folder: Path, name: str, first: str, mode: int = 0o755) -> Path:
    path = folder / name
    path.write_text(f"{first}\necho ran\n")
    path.chmod(mode)
    return path


NOEXEC = (
    "./train.sh is on a file system mounted noexec, where no file runs by its path: the job"
    " will fail with 'Permission denied' (exit 126) and chmod +x will not help; run it through"
    " its interpreter instead: {}"
)


def test_a_script_on_a_noexec_mount_is_told_to_run_through_its_interpreter(
    herd: Herd, noexec: Path
) -> None:
    herd.start("--fake-gpus", "1")
    script(noexec, "train.sh", "#!/bin/bash")  # executable, and still refused by the mount
    proc = herd.cli("submit", "--gpus", "0", "-q", "--", "./train.sh", cwd=noexec)
    assert proc.stderr.splitlines() == [f"gpuherd: warning: {NOEXEC.format('bash ./train.sh')}"]
    job = herd.wait_state(int(proc.stdout), "succeeded", "failed")
    assert (job["state"], job["exit_code"]) == ("failed", 126)  # as the warning said
    advised = herd.cli("submit", "--gpus", "0", "-q", "--", "bash", "./train.sh", cwd=noexec)
    assert advised.stderr == ""  # what it said to type: no warning, and it runs
    assert herd.wait_state(int(advised.stdout), "succeeded", "failed")["state"] == "succeeded"


def test_the_noexec_warning_names_each_scripts_interpreter(noexec: Path, tmp_path: Path) -> None:
    assert on_noexec_mount(str(noexec))
    assert not on_noexec_mount(str(tmp_path))
    script(noexec, "train.sh", "echo no shebang", mode=0o644)  # mode aside: the mount decides
    script(noexec, "t.py", "#!/usr/bin/env python3")
    hints = missing_script_hints(["./train.sh 1", "./t.py 2", "./t.py 3"], str(noexec), {})
    assert hints == [
        "./train.sh and ./t.py are on file systems mounted noexec, where no file runs by its"
        " path: every job will fail with 'Permission denied' (exit 126) and chmod +x will not"
        " help; run each through its interpreter instead (sh ./train.sh, ...)"
    ]
    # Named without a `/`: not `chmod +x, then ./t.py`, which cannot run there either.
    hint = not_on_path_hint("t.py", str(noexec), {"PATH": "/usr/bin:/bin"})
    assert hint is not None
    assert hint.endswith("; submit python3 t.py (mounted noexec, it cannot run as ./t.py)")


def test_elsewhere_the_warning_is_still_chmod(tmp_path: Path) -> None:
    script(tmp_path, "train.sh", "#!/bin/sh", mode=0o644)
    (hint,) = missing_script_hints(["./train.sh"], str(tmp_path), {})
    assert hint.endswith(f"unless made so before it starts: chmod +x {tmp_path}/train.sh")


@pytest.mark.parametrize(
    ("first", "interpreter"),
    [
        ("#!/bin/bash", "bash"),
        ("#!/usr/bin/python3 -u", "/usr/bin/python3 -u"),  # not a venv's python3 on PATH
        ("#! /usr/bin/env python3", "python3"),
        ("#!/usr/bin/env -S python3 -u", "python3 -u"),
        ("#!/opt/conda/bin/python", "/opt/conda/bin/python"),  # not a system one: its path
        ("echo no shebang", "sh"),  # the job's shell runs it
        ("#!", "sh"),
        ("#!/usr/bin/$SHELL", "sh"),  # not as written: unsure
    ],
)
def test_the_interpreter_is_the_shebang_lines(tmp_path: Path, first: str, interpreter: str) -> None:
    assert interpreter_of(str(script(tmp_path, "x", first))) == interpreter


def test_an_unreadable_script_is_said_to_run_with_sh(tmp_path: Path) -> None:
    assert interpreter_of(str(tmp_path / "gone.sh")) == "sh"
    (tmp_path / "bin.sh").write_bytes(b"#!\xff\xfe\n")
    assert interpreter_of(str(tmp_path / "bin.sh")) == "sh"
