"""A stop that reaches a job's shell as it starts its command also reaches the command
(executors/local_late_forks.py). Without it the command, forked (or exec'd) after the
shell's trap had taken the SIGTERM, never got it and ran on to the grace's SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_local_executor import TIMEOUT, job_key, log, request, run, wait_exit, wait_until

from gpuherd.executors.base import ExitStatus
from gpuherd.executors.local import LocalExecutor
from gpuherd.executors.local_late_forks import LateForks

# Builtins only (no fork) up to `ready`; then a `${x%%*a*b*}` on an 8,192-character value,
# which dash expands in ~0.4 s of CPU (cubic), in the shell itself, before it forks (or
# execs) the command: a stop sent once `ready` is in the log lands in that time.
SLOW_EXPANSION = (
    "x=aaaaaaaaaaaaaaaa; x=$x$x$x$x; x=$x$x$x$x; x=$x$x$x$x; x=$x$x; echo ready; y=${x%%*a*b*} "
)


@pytest.mark.parametrize("start", ["", "exec "], ids=["forked", "exec'd"])
def test_a_stop_during_the_expansion_of_the_command_reaches_the_command(
    tmp_path: Path, start: str
) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, f"{SLOW_EXPANSION}{start}sleep 120")
        pid = ex.launch(req)
        try:
            ended = watched(ex, pid, req.attempt_dir)
            await wait_until(lambda: "ready" in log(req), "the expansion to begin")
            ex.terminate(pid, grace=100)
            # The sleep got the SIGTERM: the job ended by it, long before the grace's SIGKILL.
            status = await asyncio.wait_for(ended, TIMEOUT)
            assert status.signal == signal.SIGTERM
        finally:
            ex.close()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)

    run(main())


def watched(ex: LocalExecutor, pid: int, attempt_dir: str) -> asyncio.Future[ExitStatus]:
    """Watch the job as the engine does, from its launch on: its end."""
    ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
    ex.watch(pid, attempt_dir, job_key(), ended.set_result)
    return ended


def test_a_stop_of_a_running_command_is_sent_once(tmp_path: Path) -> None:
    """The common case: the command runs (the shell waits for it) and gets the one SIGTERM
    the group got; nothing is sent again."""
    counter = (
        "import signal, sys, time\n"
        "n = []\n"
        "signal.signal(signal.SIGTERM, lambda *a: n.append(1))\n"
        "print('ready', flush=True)\n"
        "while not n: time.sleep(0.01)\n"
        "time.sleep(0.5)\n"
        "print('terms', len(n), flush=True)\n"
    )
    (tmp_path / "counter.py").write_text(counter)

    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, f"{sys.executable} counter.py")
        pid = ex.launch(req)
        await wait_until(lambda: "ready" in log(req), "the handler")
        ex.terminate(pid, grace=30)
        status = await wait_exit(ex, pid, req.attempt_dir)
        assert status.signal == signal.SIGTERM
        assert log(req) == "ready\nterms 1\n"
        ex.close()

    run(main())


# A stand-in for the job's shell (a Python named as its interpreter is): it traps SIGTERM,
# forks a child that keeps that trap (as the shell's copy does until it execs the command),
# and waits for it. The child execs `sleep 120` once `go` exists.
FORKING_SHELL = """
import os, signal, time
signal.signal(signal.SIGTERM, lambda *a: open("trapped", "a").write("x"))
child = os.fork()
if child == 0:
    open("forked", "w").close()
    while not os.path.exists("go"):
        time.sleep(0.01)
    os.execvp("sleep", ["sleep", "120"])
os.waitpid(child, 0)
"""


def test_a_child_that_took_the_stop_before_its_exec_gets_it_again_once_it_has(
    tmp_path: Path,
) -> None:
    shell = subprocess.Popen(
        [sys.executable, "-c", FORKING_SHELL], cwd=tmp_path, start_new_session=True
    )

    async def main() -> None:
        late = LateForks()
        late.launched(shell.pid, sys.executable)
        await wait_until(lambda: (tmp_path / "forked").exists(), "the fork")
        plan = late.plan(shell.pid, (signal.SIGCONT, signal.SIGTERM))
        assert plan is not None and not plan.childless and len(plan.unexeced) == 1
        os.killpg(shell.pid, signal.SIGTERM)
        trapped = tmp_path / "trapped"
        await wait_until(lambda: trapped.exists() and trapped.read_text() == "xx", "the traps")
        leader_fd = os.pidfd_open(shell.pid)
        late.signalled(shell.pid, leader_fd, plan)
        (tmp_path / "go").touch()  # the child execs sleep, which dies of the SIGTERM resent
        await asyncio.to_thread(shell.wait, TIMEOUT)
        late.close()
        os.close(leader_fd)

    try:
        run(main())
    finally:
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
