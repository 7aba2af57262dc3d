"""A user's `mypy --strict` over a script of theirs that uses gpuherd (the tests of the types
gpuherd ships, py.typed): the script's errors, one string each."""

from __future__ import annotations

import fcntl
import os
import textwrap
from pathlib import Path

import pytest

import gpuherd


def run_folder(tmp_path: Path) -> Path:
    """This pytest run's temporary folder (pytest-N), which all its xdist workers share: a
    test's tmp_path is in the basetemp, which is pytest-N (or pytest-N/popen-gwK in a
    worker)."""
    basetemp = tmp_path.parent
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def mypy_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> list[str]:
    mypy_api = pytest.importorskip("mypy.api")
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(text))
    # The gpuherd under test (PYTHONPATH's, if set) rather than the one installed; its own
    # errors are mypy's run over the project's business (silent): the script's are looked at.
    monkeypatch.setenv("MYPYPATH", str(Path(gpuherd.__file__).resolve().parents[1]))
    # One cache for the run's every mypy (its xdist workers' too): a cold one reads all of
    # gpuherd and typeshed, ~6 s of CPU each time, and a warm one still checks the script
    # (mypy's incremental mode rechecks what changed: the script, by its hash). One mypy at
    # a time writes it (a lock held for the run; mypy takes no lock of its own).
    cache = run_folder(tmp_path) / "mypy-cache"
    cache.mkdir(exist_ok=True)
    args = ["--strict", "--follow-imports=silent", "--no-error-summary", "--cache-dir", str(cache)]
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out, err, _ = mypy_api.run([*args, str(script)])
    assert not err, err
    return [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]
