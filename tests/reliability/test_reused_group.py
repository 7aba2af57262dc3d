"""A job's group number taken by another program: its kill never reaches that program.

The daemon kills a job's whole process group when it ends, or is stopped, so that nothing it
started outlives it. A job re-attached after a restart is not the daemon's child: once its
whole group has gone, Linux may give its number to an unrelated program that makes itself a
group leader, and a killpg by number would hit that program. These tests make that happen:
the job's group empties while the daemon cannot look (stopped with SIGSTOP, or, for the
executor alone, while its event loop is held), a new program is given the number through
ns_last_pid (root only: skipped elsewhere), and then the daemon sees the job's end.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from faults import take_pid

from conftest import Herd, wait_for
from gpuherd.executors import local_groups
from gpuherd.executors.base import ExitStatus, LaunchRequest
from gpuherd.executors.local import LocalExecutor
from gpuherd.executors.local_groups import boot_ticks
from gpuherd.jobfiles import KEY_VARIABLE
from waits import kill_pinned, pidfd_ended, pin

TIMEOUT = 10.0
# A key per job: a pass over /proc that an executor's signal left queued may run after its
# test has ended, and would signal the next test's job if the two shared a key.
_JOB_NUMBERS = itertools.count(1)


def number_free(pid: int) -> bool:
    """No process has the number `pid` as its own, its group's or its session's: Linux may
    give it to the next new process."""
    for proc in psutil.process_iter():
        try:
            if pid in (proc.pid, os.getpgid(proc.pid), os.getsid(proc.pid)):
                return False
        except (OSError, psutil.Error):
            continue
    return True


def impostor_for(pid: int) -> subprocess.Popen[bytes]:
    """A new program leading a session of its own, numbered `pid` once its job's group has
    gone (the test skips where orphans are not reaped, or the number cannot be chosen)."""
    try:
        wait_for(lambda: number_free(pid), 5, f"the number {pid} to be free")
    except AssertionError:
        pytest.skip("nothing reaps orphans here: the number is never free")
    impostor = take_pid(pid)
    if impostor is None:
        pytest.skip("cannot choose the next pid here (/proc/sys/kernel/ns_last_pid)")
    return impostor


def untouched(impostor: subprocess.Popen[bytes]) -> bool:
    """Neither killed nor stopped (asked of the process: the old code could even reap it)."""
    try:
        state = psutil.Process(impostor.pid).status()
    except psutil.NoSuchProcess:
        return False
    return state not in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE)


@pytest.fixture
def impostors() -> Iterator[list[subprocess.Popen[bytes]]]:
    made: list[subprocess.Popen[bytes]] = []
    yield made
    for impostor in made:
        impostor.kill()
        impostor.wait()


def test_a_reattached_jobs_end_spares_the_program_that_took_its_number(
    daemon: Herd, tmp_path: Path, impostors: list[subprocess.Popen[bytes]]
) -> None:
    go = tmp_path / "go"
    job = daemon.running_until(go)
    pid = int(wait_for(lambda: daemon.job(job)["pid"], what="the job's pid"))
    daemon.cli("daemon", "stop")  # the job runs on...
    daemon.start()  # ...and is re-attached: not this daemon's child
    assert daemon.job(job)["state"] == "running"
    stopped = psutil.Process(daemon.pid)
    stopped.suspend()  # the daemon sees the job's end only once its number is taken
    try:
        go.touch()
        impostors.append(impostor_for(pid))
    finally:
        stopped.resume()
    ended = daemon.wait_state(job, "succeeded", "failed", "killed", "lost")
    assert (ended["state"], ended["pid"]) == ("succeeded", pid)
    assert untouched(impostors[0])


def launch_request(folder: Path, command: str) -> LaunchRequest:
    folder.mkdir()
    return LaunchRequest(
        job_id=7,
        attempt=1,
        command=command,
        cwd=str(folder),
        env={**os.environ, KEY_VARIABLE: f"reused{os.getpid()}:{next(_JOB_NUMBERS)}:1"},
        attempt_dir=str(folder),
    )


@pytest.fixture(params=[True, False], ids=["pidfd", "before Linux 6.9"])
def pidfd(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways of signalling a group: through the leader's pidfd, and, as on a kernel that
    cannot (EINVAL for the flag), killpg once the group is known to hold the job's process."""
    if not request.param:
        monkeypatch.setattr(local_groups, "PIDFD_SIGNAL_PROCESS_GROUP", 1 << 30)
    return bool(request.param)


def test_a_stop_whose_group_emptied_spares_the_program_that_took_its_number(
    tmp_path: Path, impostors: list[subprocess.Popen[bytes]], pidfd: bool
) -> None:
    """A stop of a re-attached job: its shell ends at the SIGTERM, and its last process ends
    during the grace; a pause comes after the number was taken, before the daemon saw the end.
    Before, the program was stopped, kept the job draining as if it were the job's, and was
    SIGKILLed once the grace was over. (Without the pidfd, it still keeps the job draining
    until then: the grace is short there.)"""
    go = tmp_path / "go"
    saver = f"trap '' TERM; touch {tmp_path}/ready; until [ -e {go} ]; do sleep 0.02; done"
    req = launch_request(tmp_path / "a1", f'sh -c "{saver}" & wait')

    async def main() -> ExitStatus:
        pid = LocalExecutor().launch(req)  # (a daemon since gone)
        wait_for(lambda: (tmp_path / "ready").exists(), what="the job's child")
        ex = LocalExecutor()
        ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
        ex.watch(pid, req.attempt_dir, req.env[KEY_VARIABLE], ended.set_result)  # re-attached
        ex.terminate(pid, grace=60 if pidfd else 1)
        # From here to the await the loop does not run: the executor sees nothing yet.
        os.waitpid(pid, 0)  # the shell ends at its SIGTERM, reaped as init reaps orphans
        go.touch()  # its child ends
        impostors.append(impostor_for(pid))
        ex.signal(pid, signal.SIGSTOP)
        try:
            return await asyncio.wait_for(ended, TIMEOUT)
        finally:
            ex.close()

    status = asyncio.run(main())
    assert (status.exit_code, status.signal) == (None, signal.SIGTERM)
    assert untouched(impostors[0])


@pytest.mark.usefixtures("pidfd")
def test_a_reattached_jobs_end_still_kills_what_it_left_in_its_group(tmp_path: Path) -> None:
    """What the job left in its group dies with it, also a process that cleared its
    environment (no attempt key): it started while the leader was watched alive."""
    go = tmp_path / "go"
    req = launch_request(
        tmp_path / "a1", f"env -i sleep 300 & until [ -e {go} ]; do sleep 0.02; done"
    )

    async def main() -> None:
        pid = LocalExecutor().launch(req)  # (a daemon since gone)
        left = wait_for(lambda: sleeper(pid), what="the job's sleep")
        left_fd = pin(left)  # (its number is soon another process's: signals go through this)
        assert left_fd is not None
        start = int(Path(f"/proc/{left}/stat").read_text().rsplit(")", 1)[1].split()[19])
        wait_for(lambda: boot_ticks() > start, what="a clock tick after its start")
        ex = LocalExecutor()
        ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
        ex.watch(pid, req.attempt_dir, req.env[KEY_VARIABLE], ended.set_result)  # re-attached
        go.touch()
        os.waitpid(pid, 0)  # reaped as init reaps orphans
        try:
            status = await asyncio.wait_for(ended, TIMEOUT)
            assert status.exit_code == 0
            wait_for(lambda: pidfd_ended(left_fd), what="the sleep to be killed")
        finally:
            ex.close()
            kill_pinned(left_fd, group=False)
            os.close(left_fd)

    asyncio.run(main())


def sleeper(pgid: int) -> int | None:
    """The `sleep` of the job's group."""
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if proc.info["cmdline"] == ["sleep", "300"] and os.getpgid(proc.pid) == pgid:
                return int(proc.pid)
        except (OSError, psutil.Error):
            continue
    return None
