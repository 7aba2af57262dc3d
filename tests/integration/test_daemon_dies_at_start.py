"""A daemon that dies in its start-up on a failure none of its checks foresaw (an import error
of a broken install, say; or a bug) wrote a traceback alone, no `gpuherd daemon: ...` line:
`daemon start` and `gpuherd.connect()` could only point at the daemon's log. It now ends
with its one line (daemon_failure.py), which they say at once; the traceback stays in the log.

The daemon is broken for real: PYTHONPATH (which the daemon inherits) puts first a `uvicorn`
that fails to import. Only the daemon imports uvicorn (daemon.serve), so the CLI and this
test's process run as usual."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import Herd
from gpuherd import pyapi, pyapi_start
from gpuherd.errors import DaemonError

BROKEN = 'raise ImportError("uvicorn is broken: a test\'s stand-in")\n'


def breaker(tmp_path: Path, code: str = BROKEN) -> str:
    """A folder for PYTHONPATH whose `uvicorn` fails to import (runs `code`)."""
    folder = tmp_path / "breaker"
    folder.mkdir()
    (folder / "uvicorn.py").write_text(code)
    return str(folder)


def cannot_import(folder: str, log: Path) -> str:
    return (
        f"cannot import uvicorn ({folder}/uvicorn.py): uvicorn is broken: a test's stand-in; "
        f"reinstall gpuherd, or fix PYTHONPATH (the traceback is in {log})"
    )


def start_refused(herd: Herd, folder: str) -> tuple[str, Path]:
    """`daemon start` with `folder` first on PYTHONPATH: refused (exit 1, nothing on stdout);
    its stderr, and the daemon's log."""
    broken = {**herd.env, "PYTHONPATH": folder}
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", env=broken, check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    return refused.stderr, herd.home / "daemon.log"


def test_a_start_whose_daemon_cannot_import_a_module_says_which_and_what_to_do(
    herd: Herd, tmp_path: Path
) -> None:
    # It said "the daemon exited with status 1; see daemon.log": the daemon had said nothing.
    folder = breaker(tmp_path)
    said, log = start_refused(herd, folder)
    assert said == f"gpuherd: error: {cannot_import(folder, log)}\n"
    logged = log.read_text()
    assert "ImportError: uvicorn is broken" in logged  # the traceback, for debugging
    assert logged.endswith(f"gpuherd daemon: {cannot_import(folder, log)}\n")  # then its word
    assert not herd.is_up()


def test_a_start_whose_daemon_cannot_find_a_module_says_which(herd: Herd, tmp_path: Path) -> None:
    code = "import gpuherd_no_such_module  # a dependency that is not installed\n"
    said, log = start_refused(herd, breaker(tmp_path, code))
    assert said == (
        "gpuherd: error: cannot import gpuherd_no_such_module: No module named "
        f"'gpuherd_no_such_module'; reinstall gpuherd, or fix PYTHONPATH (the traceback is in "
        f"{log})\n"
    )


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("def broken(:\n", "SyntaxError: invalid syntax (uvicorn.py, line 1)"),  # half-written
        ('raise RuntimeError("broken")\n', "RuntimeError: broken"),
    ],
)
def test_a_module_that_fails_as_it_is_imported_is_a_broken_install_not_a_bug(
    herd: Herd, tmp_path: Path, code: str, said: str
) -> None:
    # They said `the daemon failed: SyntaxError: ... (a bug: please report it, ...)`: only an
    # ImportError was taken for a broken install.
    folder = breaker(tmp_path, code)
    refused, log = start_refused(herd, folder)
    assert refused == (
        f"gpuherd: error: cannot import uvicorn ({folder}/uvicorn.py): {said}; reinstall "
        f"gpuherd, or fix PYTHONPATH (the traceback is in {log})\n"
    )


def test_a_start_whose_daemon_fails_on_a_bug_says_so_in_one_line(
    herd: Herd, tmp_path: Path
) -> None:
    # The bug's stand-in: the real uvicorn, imported in full, whose Config raises when the
    # daemon calls it (no module's import raised: not a broken install).
    code = (
        "import importlib, os, sys\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != here]\n"
        "del sys.modules['uvicorn']\n"
        "real = importlib.import_module('uvicorn')\n"
        "def config(*args, **kwargs):\n"
        '    raise RuntimeError("a bug: a test\'s stand-in")\n'
        "real.Config = config\n"
    )
    said, log = start_refused(herd, breaker(tmp_path, code))
    assert said == (
        "gpuherd: error: the daemon failed: RuntimeError: a bug: a test's stand-in (a bug: "
        f"please report it, with the traceback in {log})\n"
    )
    assert "RuntimeError: a bug: a test's stand-in" in log.read_text().splitlines()[-2]
    assert not herd.is_up()


def test_a_python_connect_whose_daemon_cannot_import_a_module_says_so_at_once(
    herd: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It waited START_TIMEOUT (30 s), then said the daemon "did not answer"; then it said "the
    # daemon exited before it answered; see daemon.log".
    folder = breaker(tmp_path)
    monkeypatch.setenv("PYTHONPATH", folder)  # (the daemon inherits it)
    began = time.monotonic()
    with pytest.raises(DaemonError) as refused:
        pyapi.connect(herd.home, fake_gpus=1)
    assert time.monotonic() - began < pyapi_start.START_TIMEOUT / 2
    log = herd.home / "daemon.log"
    assert str(refused.value) == cannot_import(folder, log)
    assert "ImportError: uvicorn is broken" in log.read_text()
