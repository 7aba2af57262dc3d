"""A hook that prints at the disk's speed (`cat` of a job's huge log, `yes`) does not fill the
disk while it runs: hooks.log keeps only the first and last 4 KiB of a run's output, and the
daemon gives back the space of the middle as it is written, not once the hook has ended."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import psutil

from conftest import Herd, hooks_log, item, one_gpu_engine, serving, wait_dead, wait_for
from gpuherd.core.model import Policy
from gpuherd.executors.local import LocalExecutor
from gpuherd.hooks import EndHooks
from gpuherd.store import Store

PRINTED = 64_000_000
"""Bytes the hook prints: far more than the test lets it keep on disk."""
KEPT_AT_MOST = 8_000_000
HEAD = TAIL = 4096
"""hooks.log keeps the first and last 4 KiB of a run's output (README)."""


def test_a_hook_printing_at_disk_speed_keeps_little_on_disk_while_it_runs(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    daemon.cli(
        "config",
        "set",
        "on-end",
        f"yes hook-line 2>/dev/null | head -c {PRINTED}; "
        f"while [ ! -e {go} ]; do sleep 0.05; done; echo last",
    )
    daemon.submit("--", "true")
    running = daemon.home / "hooks.running"

    def printed_all_and_kept_little() -> bool:
        files = list(running.iterdir()) if running.exists() else []
        if not files:
            return False
        size = files[0].stat()
        return size.st_size > PRINTED and size.st_blocks * 512 < KEPT_AT_MOST

    wait_for(printed_all_and_kept_little, timeout=30, what="the hook's output to be freed")
    go.touch()
    hooks_log = daemon.home / "hooks.log"
    wait_for(lambda: hooks_log.exists() and "last" in hooks_log.read_text(), timeout=30)
    text = hooks_log.read_text()
    assert "\0" not in text  # the freed middle (zeros) is never read
    lines = text.splitlines()
    assert lines[0].startswith("--- ") and " succeeded: yes hook-line" in lines[0]
    output = PRINTED + len("last\n")
    skipped = f"… {output - HEAD - TAIL:,} bytes left out …"
    assert skipped in lines, [line for line in lines if "left out" in line]
    head, tail = lines[1 : lines.index(skipped)], lines[lines.index(skipped) + 1 :]
    assert set(head[:-1]) == {"hook-line"} and "hook-line".startswith(head[-1])
    assert tail[-1] == "last" and set(tail[1:-1]) == {"hook-line"}
    assert list(running.iterdir()) == []


def test_a_hooks_pipeline_ends_its_writer_as_a_shell_would(daemon: Herd) -> None:
    """The daemon (Python) ignores SIGPIPE; the hook got that too, so `yes | head -n 1` left
    `yes` writing into a closed pipe (`yes: standard output: Broken pipe` in hooks.log, and a
    `while :; do echo; done | head` writer that never ended until the hook's 60 s kill)."""
    daemon.cli("config", "set", "on-end", "yes | head -n 1; echo after")
    daemon.submit("--", "true")
    hooks_log = daemon.home / "hooks.log"
    wait_for(lambda: hooks_log.exists() and "after" in hooks_log.read_text())
    assert hooks_log.read_text().splitlines()[1:] == ["y", "after"]


def test_a_hook_running_through_a_daemon_restart_has_its_output_in_hooks_log(
    daemon: Herd, tmp_path: Path
) -> None:
    """The next daemon follows the output of a hook the last one left running: written out
    once the hook ends. It waited for yet another daemon start, growing until then."""
    go = tmp_path / "go"
    daemon.cli(
        "config",
        "set",
        "on-end",
        f"echo before; while [ ! -e {go} ]; do sleep 0.05; done; echo after",
    )
    daemon.submit("--", "true")
    running = daemon.home / "hooks.running"

    def printed_before() -> bool:
        files = list(running.iterdir()) if running.exists() else []
        return bool(files) and "before" in files[0].read_text()

    wait_for(printed_before, what="the hook to start")
    daemon.cli("daemon", "restart")
    go.touch()
    hooks_log = daemon.home / "hooks.log"
    wait_for(lambda: hooks_log.exists() and "after" in hooks_log.read_text())
    assert hooks_log.read_text().splitlines()[1:] == ["before", "after"]
    assert list(running.iterdir()) == []


def test_a_hook_the_last_daemon_left_running_is_killed_at_its_time(tmp_path: Path) -> None:
    """A hook still running as its daemon stopped went on for ever (its kill was the stopped
    daemon's timer): the next daemon kills it `timeout` after its own start."""
    store = Store(tmp_path / "herd.db")
    shell_pid, limit = tmp_path / "shell.pid", 1.0

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        engine.policy = Policy(on_end=f'echo $$ > "{shell_pid}"; echo before; sleep 600')
        first = EndHooks(engine, tmp_path)  # its own time: 60 s
        first.start()
        async with serving(engine, tmp_path) as service:
            try:
                service.submit([item(tmp_path, "true")])
                deadline = time.monotonic() + 20
                while not shell_pid.exists() and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
            finally:
                first.stop()  # as a daemon stops: its running hook goes on
            assert shell_pid.exists()
            next_one = EndHooks(engine, tmp_path, timeout=limit)
            next_one.start()
            try:
                deadline = time.monotonic() + 20
                while "killed" not in hooks_log(tmp_path) and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
            finally:
                next_one.stop()

    asyncio.run(main())
    store.close()
    pid = int(shell_pid.read_text())
    try:
        with contextlib.suppress(psutil.NoSuchProcess):
            wait_dead(psutil.Process(pid))
        assert hooks_log(tmp_path).splitlines()[1:] == [
            "before",
            "… the hook still ran after 1s: killed, with its process group",
        ]
    finally:  # (not left sleeping where the hook was not killed)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
