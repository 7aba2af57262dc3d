"""A module that the daemon imports as it loads (gpuherd.daemon's own imports: pydantic_core
through its listing reader, fastapi, the engine) and that does not import is said in the
daemon's one line, as one it imports later (uvicorn: test_daemon_dies_at_start.py) already
was. Those imports ran before any handler, and `daemon start` said only "the daemon exited
with status 1; see daemon.log" (daemon_entry.py now makes them, under its handler).

The daemon is broken for real: PYTHONPATH, which it inherits, puts first a `pydantic_core`
that fails to import. The CLI never imports pydantic_core, and runs as usual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Herd


def shadowed(tmp_path: Path, code: str) -> str:
    """A folder for PYTHONPATH whose `pydantic_core` runs `code` as it is imported."""
    folder = tmp_path / "shadow"
    folder.mkdir()
    (folder / "pydantic_core.py").write_text(code)
    return str(folder)


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ('raise RuntimeError("shadow broken")\n', "RuntimeError: shadow broken"),
        ("def broken(:\n", "SyntaxError: invalid syntax (pydantic_core.py, line 1)"),
    ],
)
def test_a_module_the_daemon_imports_as_it_loads_is_named_when_it_fails(
    herd: Herd, tmp_path: Path, code: str, said: str
) -> None:
    folder = shadowed(tmp_path, code)
    broken = {**herd.env, "PYTHONPATH": folder}
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", env=broken, check=False)
    log = herd.home / "daemon.log"
    line = (
        f"cannot import pydantic_core ({folder}/pydantic_core.py): {said}; reinstall gpuherd, "
        f"or fix PYTHONPATH (the traceback is in {log})"
    )
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1,
        "",
        f"gpuherd: error: {line}\n",
    )
    logged = log.read_text()
    assert "ERROR gpuherd.daemon: the daemon failed\nTraceback" in logged  # for debugging
    assert logged.endswith(f"gpuherd daemon: {line}\n")
    assert not herd.is_up()
    herd.start("--fake-gpus", "1")  # PYTHONPATH fixed: it starts


def test_a_dependency_missing_under_it_is_named(herd: Herd, tmp_path: Path) -> None:
    folder = shadowed(tmp_path, "import gpuherd_no_such_module  # a dependency not installed\n")
    broken = {**herd.env, "PYTHONPATH": folder}
    refused = herd.cli("daemon", "start", "--fake-gpus", "1", env=broken, check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        "gpuherd: error: cannot import gpuherd_no_such_module: No module named "
        "'gpuherd_no_such_module'; reinstall gpuherd, or fix PYTHONPATH (the traceback is in "
        f"{herd.home / 'daemon.log'})\n"
    )


def test_a_foreground_daemon_says_it_on_stderr_and_in_its_log_file(
    herd: Herd, tmp_path: Path
) -> None:
    """As `daemon start --foreground` runs it (its stderr a terminal or a journal), a real
    process: its last line on stderr and in its --log-file, after the traceback."""
    folder = shadowed(tmp_path, 'raise RuntimeError("shadow broken")\n')
    log = tmp_path / "foreground.log"
    options = ["--home", str(herd.home), "--log-file", str(log), "--fake-gpus", "1"]
    ran = subprocess.run(
        [sys.executable, "-m", "gpuherd.daemon", *options],
        env={**herd.env, "PYTHONPATH": folder},
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = (
        f"gpuherd daemon: cannot import pydantic_core ({folder}/pydantic_core.py): RuntimeError: "
        f"shadow broken; reinstall gpuherd, or fix PYTHONPATH (the traceback is in {log})\n"
    )
    assert (ran.returncode, ran.stdout) == (1, "")
    assert "Traceback" in ran.stderr and ran.stderr.endswith(line)
    assert "Traceback" in log.read_text() and log.read_text().endswith(line)
