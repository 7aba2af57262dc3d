"""`gpuherd daemon restart` checks the GPUs the next daemon starts with, the last start's
(`--fake-gpus FILE`), before it stops anything: a state file made invalid while the daemon
ran (it serves on, on its last good reading) stopped the daemon, and the new one did not
start, leaving none running."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd

GOOD = json.dumps({"gpus": [{"name": "A", "memory_total": "24GiB"}]})


def refused_restart(herd: Herd, *options: str) -> str:
    """`daemon restart OPTIONS`, refused before anything stopped: its one line (exit 1,
    nothing on stdout, where a stop says `stopping`)."""
    proc = herd.cli("daemon", "restart", *options, check=False)
    assert (proc.returncode, proc.stdout) == (1, ""), proc
    assert proc.stderr.count("\n") == 1, proc
    return proc.stderr


def left_running(pid: int) -> str:
    return (
        f"the daemon (pid {pid}) was left running: fix the file, then `gpuherd daemon restart` "
        "(or, for other GPUs, `gpuherd daemon stop`, then `gpuherd daemon start` with them)\n"
    )


def test_a_state_file_made_invalid_leaves_the_daemon_running(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(GOOD)
    herd.start("--fake-gpus", str(state))
    pid = herd.pid
    state.write_text("garbage\n")
    assert refused_restart(herd) == (
        f"gpuherd: error: the GPUs the daemon restarts with, the last start's --fake-gpus "
        f"{state}, cannot be used: fake GPU state file {state}: not valid JSON at line 1, "
        f"column 1: Expecting value; {left_running(pid)}"
    )
    assert herd.pid == pid  # it answers: neither stopped nor replaced
    state.write_text(GOOD)  # as it says
    assert herd.cli("daemon", "restart").stdout.splitlines()[:2] == ["stopping", "daemon stopped"]
    assert herd.pid != pid


def test_restart_kill_kills_nothing_when_the_state_file_is_gone(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(GOOD)
    herd.start("--fake-gpus", str(state))
    pid = herd.pid
    job = herd.running_until(tmp_path / "go")
    state.unlink()
    assert refused_restart(herd, "--kill") == (
        f"gpuherd: error: the GPUs the daemon restarts with, the last start's --fake-gpus "
        f"{state}, cannot be used: fake GPU state file not found: {state}: create it, or use "
        f"a count (4), sizes (2x24GiB,1x80GiB) or a .json state file; {left_running(pid)}"
    )
    assert herd.pid == pid
    assert herd.job(job)["state"] == "running"  # not killed
