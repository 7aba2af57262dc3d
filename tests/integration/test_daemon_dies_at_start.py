"""A daemon that dies in its start-up before it can say why (no `gpuherd daemon: ...` line: an
import error of a broken install, say): `daemon start` and `gpuherd.connect()` point at the
daemon's log, where its traceback is, and say so at once.

The daemon is broken for real: PYTHONPATH (which the daemon inherits) puts first a `uvicorn`
that fails to import. Only the daemon imports uvicorn (daemon.serve), so the CLI and this
test's process run as usual."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd import pyapi
from gpuherd.errors import DaemonError

BROKEN = 'raise ImportError("uvicorn is broken: a test\'s stand-in")\n'


def breaker(tmp_path: Path) -> str:
    """A folder for PYTHONPATH whose `uvicorn` fails to import."""
    folder = tmp_path / "breaker"
    folder.mkdir()
    (folder / "uvicorn.py").write_text(BROKEN)
    return str(folder)


def test_a_start_whose_daemon_dies_without_a_word_points_at_its_log(
    herd: Herd, tmp_path: Path
) -> None:
    broken = {**herd.env, "PYTHONPATH": breaker(tmp_path)}
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", env=broken, check=False)
    log = herd.home / "daemon.log"
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"gpuherd: error: the daemon exited with status 1; see {log}\n"  # (said no more)
    )
    assert "ImportError: uvicorn is broken" in log.read_text()  # what is there to see
    assert not herd.is_up()


def test_a_python_connect_whose_daemon_dies_without_a_word_says_so_at_once(
    herd: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It waited START_TIMEOUT (30 s), then said the daemon "did not answer".
    monkeypatch.setenv("PYTHONPATH", breaker(tmp_path))  # (the daemon inherits it)
    began = time.monotonic()
    with pytest.raises(DaemonError) as refused:
        pyapi.connect(herd.home, fake_gpus=1)
    assert time.monotonic() - began < pyapi.START_TIMEOUT / 2
    log = herd.home / "daemon.log"
    assert str(refused.value) == f"the daemon exited before it answered; see {log}"
    assert "ImportError: uvicorn is broken" in log.read_text()
