"""What an on-end hook's background processes print after the hook's shell ended
(`notify-send ... &`, `(sleep 1; echo late) &`) reaches hooks.log: the run's output is
written out once no process holds it any more, or once the hook's time is up."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import psutil

from conftest import Herd, hooks_log, item, one_gpu_engine, serving, wait_for
from gpuherd.core.model import Policy
from gpuherd.executors.local import LocalExecutor
from gpuherd.hooks import EndHooks
from gpuherd.store import Store


def test_what_a_hooks_background_child_prints_after_the_hook_ended_is_kept(
    daemon: Herd, tmp_path: Path
) -> None:
    shell_pid, go = tmp_path / "shell.pid", tmp_path / "go"
    daemon.cli(
        "config",
        "set",
        "on-end",
        f"echo early; (while [ ! -e {go} ]; do sleep 0.02; done; echo late) & "
        f'echo $$ > "{shell_pid}.t" && mv "{shell_pid}.t" "{shell_pid}"',
    )
    job = daemon.submit("--", "true")
    shell = int(wait_for(lambda: shell_pid.exists() and shell_pid.read_text()))
    # Gone, not a zombie: the daemon reaped it, after it looked at its output file.
    wait_for(lambda: not psutil.pid_exists(shell), what="the daemon to reap the hook's shell")
    (held,) = (daemon.home / "hooks.running").iterdir()  # the child still writes to it
    assert held.name.startswith(f"job{job}-")
    assert hooks_log(daemon.home) == ""  # written out once, whole: not yet
    go.touch()
    wait_for(lambda: "late" in hooks_log(daemon.home), what="the late line in hooks.log")
    lines = hooks_log(daemon.home).splitlines()
    assert lines[0].startswith("--- ") and f" job {job} succeeded: echo early;" in lines[0]
    assert lines[1:] == ["early", "late"]
    assert list((daemon.home / "hooks.running").iterdir()) == []


def test_a_background_child_still_running_when_the_hooks_time_is_up_is_left_alone(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "herd.db")
    child_pid = tmp_path / "child.pid"
    limit = 1.0

    async def main() -> None:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        engine.policy = Policy(on_end=f'echo early; sleep 600 & echo $! > "{child_pid}"')
        hooks = EndHooks(engine, tmp_path, timeout=limit)
        hooks.start()
        async with serving(engine, tmp_path) as service:
            try:
                service.submit([item(tmp_path, "true")])
                deadline = time.monotonic() + 20
                while "not kept" not in hooks_log(tmp_path) and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
            finally:
                hooks.stop()  # before the engine closes

    started = time.monotonic()
    asyncio.run(main())
    store.close()
    child = psutil.Process(int(child_pid.read_text()))
    try:
        assert child.is_running() and child.status() != psutil.STATUS_ZOMBIE  # not killed
        assert time.monotonic() - started > limit * 0.9  # it was waited for, up to the limit
        assert hooks_log(tmp_path).splitlines()[1:] == [
            "early",
            "… the hook's background processes still ran after 1s: what they print from "
            "then on is not kept",
        ]
        assert list((tmp_path / "hooks.running").iterdir()) == []
    finally:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
