"""LocalExecutor against real processes and real process trees."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from gpuherd.executors import local_escaped
from gpuherd.executors.base import ExitStatus, LaunchRequest, SpawnError
from gpuherd.executors.local import LocalExecutor
from gpuherd.executors.local_records import visible_gpus

TIMEOUT = 10.0

_tests = itertools.count(1)
_home_id = f"test{os.getpid()}"
"""The home id of the running test's jobs, its own: a pass over /proc that a test's signal
left queued on its executor's scanner may run after the test, and must find no process of
the next test (nor of another run of these tests on the machine)."""


@pytest.fixture(autouse=True)
def _own_home_id() -> None:
    global _home_id
    _home_id = f"test{os.getpid()}n{next(_tests)}"


def job_key(job_id: int = 7, attempt: int = 1) -> str:
    """The attempt key `request` gives a job of the running test."""
    return f"{_home_id}:{job_id}:{attempt}"


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


def request(
    tmp_path: Path,
    command: str,
    *,
    name: str = "a1",
    cwd: Path | None = None,
    extra_env: dict[str, str] | None = None,
    job_id: int = 7,
    attempt: int = 1,
) -> LaunchRequest:
    attempt_dir = tmp_path / name
    attempt_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(GPUHERD_JOB_ID=str(job_id), GPUHERD_ATTEMPT=str(attempt))
    env["GPUHERD_ATTEMPT_KEY"] = job_key(job_id, attempt)
    env.update(extra_env or {})
    return LaunchRequest(
        job_id=job_id,
        attempt=attempt,
        command=command,
        cwd=str(cwd or tmp_path),
        env=env,
        attempt_dir=str(attempt_dir),
    )


async def wait_exit(
    executor: LocalExecutor, pid: int, attempt_dir: str, key: str | None = None
) -> ExitStatus:
    future: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
    calls: list[ExitStatus] = []

    def on_exit(status: ExitStatus) -> None:
        calls.append(status)
        future.set_result(status)

    executor.watch(pid, attempt_dir, key or job_key(), on_exit)
    status = await asyncio.wait_for(future, timeout=TIMEOUT)
    await asyncio.sleep(0)  # a second (wrong) call would have been scheduled by now
    assert calls == [status]
    return status


async def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def live_group(pgid: int) -> list[int]:
    """Pids of the group that are still alive (orphaned zombies may linger unreaped)."""
    pids = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                pids.append(proc.pid)
        except (OSError, psutil.Error):
            continue
    return pids


def sleeping(pgid: int) -> int:
    """How many of the group's live processes are `sleep` (have exec'd)."""
    count = 0
    for pid in live_group(pgid):
        try:
            count += psutil.Process(pid).name() == "sleep"
        except psutil.Error:
            continue
    return count


def log(req: LaunchRequest, name: str = "stdout.log") -> str:
    """The log so far ("" before the job's wrapper has created it)."""
    path = Path(req.attempt_dir, name)
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize("code", [0, 3])
def test_exit_code_is_recorded_and_reported(tmp_path: Path, code: int) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, f"exit {code}")
        pid = ex.launch(req)
        assert os.getpgid(pid) == pid  # leads its own group
        assert os.getsid(pid) == pid  # and its own session
        status = await wait_exit(ex, pid, req.attempt_dir)
        assert (status.exit_code, status.signal) == (code, None)
        assert not status.lost
        recorded = ex.recorded_exit(req.attempt_dir)
        assert recorded is not None and recorded.exit_code == code
        assert abs(recorded.ended_at - time.time()) < TIMEOUT
        assert ex.recorded_pid(req.attempt_dir) == pid
        ex.close()

    run(main())


def test_stdout_and_stderr_go_to_separate_files(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "echo to-out; echo to-err >&2; cat")  # cat: stdin is empty
        await wait_exit(ex, ex.launch(req), req.attempt_dir)
        assert log(req) == "to-out\n"
        assert log(req, "stderr.log") == "to-err\n"
        assert Path(req.attempt_dir, "stdout.log").stat().st_mode & 0o777 == 0o644

    run(main())


def test_env_is_exactly_the_one_passed_and_cwd_is_honoured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work dir; $(touch pwned)"  # odd names are arguments, never code
    work.mkdir()

    async def main() -> None:
        ex = LocalExecutor()
        req = request(
            tmp_path,
            'echo "$CUDA_VISIBLE_DEVICES|${ONLY_IN_DAEMON-unset}"; pwd -P',
            cwd=work,
            extra_env={"CUDA_VISIBLE_DEVICES": "2,3"},
        )
        monkeypatch.setenv("ONLY_IN_DAEMON", "1")  # set after the request's env was built
        status = await wait_exit(ex, ex.launch(req), req.attempt_dir)
        assert status.exit_code == 0
        assert log(req).splitlines() == ["2,3|unset", str(work.resolve())]
        assert not list(tmp_path.rglob("pwned"))

    run(main())


def test_signals_ignored_by_the_daemon_are_not_inherited(tmp_path: Path) -> None:
    # Python itself ignores SIGPIPE; a job must not (`yes | head` would spin on EPIPE).
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN

    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "grep SigIgn /proc/self/status")
        await wait_exit(ex, ex.launch(req), req.attempt_dir)
        ignored = int(log(req).split()[1], 16)
        # Only the standard signals: glibc's posix_spawn leaves its two internal real-time
        # signals (32, 33) ignored, which every glibc program resets at startup anyway.
        assert ignored & 0x7FFFFFFF == 0

    run(main())


def test_kill_9_of_the_leader_reports_signal_9_and_kills_the_group(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "sleep 100 & echo ready; sleep 100")
        pid = ex.launch(req)
        await wait_until(lambda: "ready" in log(req) and len(live_group(pid)) >= 3, "the tree")
        os.kill(pid, signal.SIGKILL)
        status = await wait_exit(ex, pid, req.attempt_dir)
        assert (status.exit_code, status.signal) == (None, 9)
        await wait_until(lambda: not live_group(pid), "the group to die")
        assert ex.recorded_exit(req.attempt_dir) is None

    run(main())


def test_command_killed_by_sigterm_reports_signal_15(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "kill -TERM $$")
        status = await wait_exit(ex, ex.launch(req), req.attempt_dir)
        assert (status.exit_code, status.signal) == (None, 15)

    run(main())


def test_stragglers_die_with_the_leader(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "sleep 100 & exit 0")
        pid = ex.launch(req)
        status = await wait_exit(ex, pid, req.attempt_dir)
        assert status.exit_code == 0
        await wait_until(lambda: not live_group(pid), "the straggler to die")

    run(main())


def test_terminate_kills_the_whole_tree(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "sleep 100 & sleep 100; wait")
        pid = ex.launch(req)
        # The job's shell and two sleeps. Wait for both to be `sleep`: a child the shell has
        # forked but not yet exec'd still runs the shell's TERM trap, and exec drops the caught
        # signal, so a TERM in that instant leaves the sleep running until the grace's KILL.
        await wait_until(lambda: sleeping(pid) == 2, "the tree to start")
        ex.signal(pid, signal.SIGSTOP)  # paused jobs must still end
        ex.terminate(pid, grace=5)
        status = await wait_exit(ex, pid, req.attempt_dir)
        assert status.signal in (signal.SIGTERM, signal.SIGKILL)
        assert status.exit_code is None
        await wait_until(lambda: not live_group(pid), "the group to die")
        recorded = ex.recorded_exit(req.attempt_dir)
        assert recorded is not None and recorded.signal == signal.SIGTERM
        ex.close()

    run(main())


def test_terminate_kills_a_job_ignoring_sigterm_after_the_grace(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, 'trap "" TERM; echo ready; sleep 100')
        pid = ex.launch(req)
        await wait_until(lambda: "ready" in log(req), "the trap to be set")
        started = time.monotonic()
        ex.terminate(pid, grace=0.5)
        status = await wait_exit(ex, pid, req.attempt_dir)
        elapsed = time.monotonic() - started
        assert (status.exit_code, status.signal) == (None, signal.SIGKILL)
        assert 0.5 <= elapsed < 5
        await wait_until(lambda: not live_group(pid), "the group to die")

    run(main())


def test_missing_cwd_is_a_spawn_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(SpawnError, match=f"{missing}.*does not exist"):
        LocalExecutor().launch(request(tmp_path, "true", cwd=missing))


def test_unwritable_attempt_dir_is_a_spawn_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    req = request(tmp_path, "true")
    bad = LaunchRequest(
        req.job_id, req.attempt, req.command, req.cwd, req.env, str(tmp_path / "afile" / "sub")
    )
    with pytest.raises(SpawnError, match=r"afile/sub.*Not a directory"):
        LocalExecutor().launch(bad)


def test_reattach_from_a_new_executor(tmp_path: Path) -> None:
    async def main() -> None:
        first = LocalExecutor()
        req = request(tmp_path, "sleep 0.5; exit 4")
        pid = first.launch(req)
        first.close()
        assert first.recorded_exit(req.attempt_dir) is None
        second = LocalExecutor()
        status = await wait_exit(second, pid, req.attempt_dir)
        assert status.exit_code == 4
        recorded = second.recorded_exit(req.attempt_dir)
        assert recorded is not None and recorded.exit_code == 4
        assert abs(recorded.ended_at - status.ended_at) < TIMEOUT

    run(main())


def test_watching_a_job_that_is_already_gone(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "exit 5")
        pid = ex.launch(req)
        os.waitpid(pid, 0)  # reaped elsewhere: pidfd_open will fail
        assert not ex.is_running(pid, 7, 1, job_key())
        status = await wait_exit(ex, pid, req.attempt_dir)
        assert status.exit_code == 5
        lost_dir = tmp_path / "empty"
        lost_dir.mkdir()
        assert (await wait_exit(ex, pid, str(lost_dir))).lost

    run(main())


def test_the_gpus_a_running_job_was_given_are_read_from_its_environment(tmp_path: Path) -> None:
    """What a restart reserves for a run it holds whose folder does not record its GPUs."""

    async def main() -> None:
        ex = LocalExecutor()
        env = {"CUDA_VISIBLE_DEVICES": "1,3"}
        req = request(tmp_path, "sleep 100", extra_env=env)
        pid = ex.launch(req)
        try:
            await wait_until(lambda: ex.recorded_pid(req.attempt_dir) == pid, "the wrapper")
            assert ex.given_gpus(pid) == (1, 3)
        finally:
            ex.terminate(pid, grace=1)
            await wait_exit(ex, pid, req.attempt_dir, job_key())
        assert ex.given_gpus(pid) is None  # gone

    run(main())
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == ()  # a job that asked for no GPU
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-8f2a"}) is None  # never gpuherd's
    assert visible_gpus({}) is None


def test_is_running_checks_the_jobs_identity(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, "sleep 100", job_id=12, attempt=3)
        key = job_key(12, 3)
        pid = ex.launch(req)
        try:
            # Right away, while the child may still be inside execve with no environment yet.
            assert ex.is_running(pid, 12, 3, key)
            assert not ex.is_running(pid, 12, 2, job_key(12, 2))
            assert not ex.is_running(pid, 13, 3, job_key(13, 3))
            # A fresh executor (as after a daemon restart) knows the job only by its env.
            other = LocalExecutor()
            await wait_until(lambda: ex.recorded_pid(req.attempt_dir) == pid, "the wrapper")
            assert other.is_running(pid, 12, 3, key)
            assert not other.is_running(pid, 12, 2, job_key(12, 2))
            assert not other.is_running(pid, 13, 3, job_key(13, 3))
            assert not other.is_running(os.getpid(), 12, 3, key)
            assert not ex.is_running(os.getpid(), 12, 3, key)
        finally:
            ex.terminate(pid, grace=1)
            await wait_exit(ex, pid, req.attempt_dir, key)
        assert not ex.is_running(pid, 12, 3, key)

    run(main())


def test_another_homes_job_of_the_same_number_is_not_taken_for_this_one(tmp_path: Path) -> None:
    """Two homes (two daemons, or `gpuherd run` and a daemon) number their jobs alike: only
    the attempt key, which names the home, tells their processes apart."""

    async def main() -> None:
        ex = LocalExecutor()
        theirs = request(
            tmp_path, "sleep 100", name="theirs", job_id=12, attempt=3,
            extra_env={"GPUHERD_ATTEMPT_KEY": "elsewhere:12:3"},
        )  # fmt: skip
        pid = ex.launch(theirs)
        ours = tmp_path / "ours"  # this home's attempt 3 of job 12: never started
        ours.mkdir()
        try:
            await wait_until(lambda: ex.recorded_pid(theirs.attempt_dir) == pid, "the wrapper")
            restarted = LocalExecutor()  # this home's daemon, after a restart
            assert restarted.is_running(pid, 12, 3, "elsewhere:12:3")  # theirs, by their key
            assert not restarted.is_running(pid, 12, 3, job_key(12, 3), str(ours))
            assert restarted.find_leader(12, 3, "elsewhere:12:3") == pid
            assert restarted.find_leader(12, 3, job_key(12, 3)) is None
        finally:
            ex.terminate(pid, grace=1)
            await wait_exit(ex, pid, theirs.attempt_dir, "elsewhere:12:3")

    run(main())


def test_many_jobs_leak_no_descriptor_and_no_zombie(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        await wait_exit(ex, ex.launch(request(tmp_path, "true", name="warmup")), "/nonexistent")
        fds_before = len(os.listdir("/proc/self/fd"))
        for i in range(300):
            req = request(tmp_path, "echo $GPUHERD_ATTEMPT", name=f"a{i}", attempt=i)
            status = await wait_exit(ex, ex.launch(req), req.attempt_dir)
            assert status.exit_code == 0
        assert len(os.listdir("/proc/self/fd")) == fds_before
        zombies = [p for p in psutil.Process().children() if p.status() == psutil.STATUS_ZOMBIE]
        assert zombies == []
        ex.close()

    run(main())


# ---- the job's one shell: the command runs in it as `sh -c` would run it ----------------------


def test_dollar_dollar_is_the_job_shell_that_leads_the_group(tmp_path: Path) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, 'echo "$$ $# $*"')
        pid = ex.launch(req)
        assert (await wait_exit(ex, pid, req.attempt_dir)).exit_code == 0
        assert log(req) == f"{pid} 0 \n"  # gpuherd's own arguments are not the command's
        assert Path(req.attempt_dir, "process").read_text() == f"pid {pid}\nexit 0\n"

    run(main())


@pytest.mark.parametrize(
    ("command", "code", "recorded"),
    [
        ("exec sh -c 'exit 5'", 5, None),  # the shell is replaced: nothing left to record
        ("trap 'echo bye' EXIT; exit 4", 4, None),  # the command's trap replaces gpuherd's
        ("echo (", 2, 2),  # a syntax error ends the shell like `sh -c` does
        ("f() { exit 6; }; f; echo not reached", 6, 6),
    ],
    ids=["exec", "own-exit-trap", "syntax-error", "exit-in-a-function"],
)
def test_status_however_the_command_ends(
    tmp_path: Path, command: str, code: int, recorded: int | None
) -> None:
    async def main() -> None:
        ex = LocalExecutor()
        req = request(tmp_path, command)
        status = await wait_exit(ex, ex.launch(req), req.attempt_dir)
        assert (status.exit_code, status.signal) == (code, None)  # from the process itself
        after_restart = ex.recorded_exit(req.attempt_dir)  # what a restarted daemon reads
        assert (after_restart.exit_code if after_restart else None) == recorded
        assert "not reached" not in log(req)

    run(main())


def test_an_attempt_recorded_by_an_older_gpuherd_is_still_read(tmp_path: Path) -> None:
    folder = tmp_path / "attempt-1"
    folder.mkdir()
    ex = LocalExecutor()
    assert (ex.recorded_pid(str(folder)), ex.recorded_exit(str(folder))) == (None, None)
    (folder / "pid").write_text("4321\n")
    assert (ex.recorded_pid(str(folder)), ex.recorded_exit(str(folder))) == (4321, None)
    (folder / "exit_status").write_text("137\n")
    status = ex.recorded_exit(str(folder))
    assert status is not None and (status.exit_code, status.signal) == (None, 9)


def test_a_process_whose_environment_cannot_be_read_never_blocks_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a process's environment waits for its memory map lock, which a process stuck
    in the kernel can hold for ever: the passes that find what left a job's group run off
    the event loop, and catch up once the read returns."""
    release = threading.Event()
    stuck: list[int] = []
    read = local_escaped._environment

    def first_read_hangs(pid: int) -> bytes:
        if not stuck:
            stuck.append(pid)
            release.wait(60)  # (longer than any wait below: released by the test)
        return read(pid)

    async def main() -> None:
        ex = LocalExecutor()
        pid_file = tmp_path / "escaped"
        req = request(
            tmp_path,
            f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 100' & sleep 100",
            extra_env={"GPUHERD_ATTEMPT_KEY": job_key()},
        )
        pid = ex.launch(req)
        await wait_until(lambda: pid_file.exists() and bool(pid_file.read_text()), "escape")
        escaped = int(pid_file.read_text())
        monkeypatch.setattr(local_escaped, "_environment", first_read_hangs)
        ended = asyncio.ensure_future(wait_exit(ex, pid, req.attempt_dir))
        await asyncio.sleep(0)  # watched from now on
        asked = time.monotonic()
        ex.terminate(pid, grace=30)
        assert time.monotonic() - asked < 5  # (a read on the loop would hang it for 60 s)
        # The loop goes on while the read hangs; the job drains until the pass is done: its
        # own group is gone (SIGTERMed), and still it has not ended.
        await wait_until(lambda: bool(stuck), "the pass to read an environment")
        await wait_until(lambda: not live_group(pid), "the job's own group to end")
        await asyncio.sleep(0.2)  # (time for an end not waiting for the pass to be heard)
        assert not ended.done() and alive(escaped)
        release.set()
        status = await asyncio.wait_for(ended, TIMEOUT)
        assert status.signal == signal.SIGTERM
        await wait_until(lambda: not alive(escaped), "the escaped process to be stopped")
        ex.close()

    run(main())


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# ---- a stop cut short by a daemon restart, once the job's shell had ended ---------------------

HOME_ID = f"drain{os.getpid()}"
"""A home id of these tests' own: their start-up passes kill no other test run's processes."""
KEY = f"{HOME_ID}:7:1"


def saver(tmp_path: Path) -> LaunchRequest:
    """A job whose shell ends at its SIGTERM, leaving a child that takes it as "save, then
    exit": it saves (appending to `terms`) until `go` exists, then writes `saved`."""
    child = (
        f"trap 'echo term >> {tmp_path}/terms; until [ -e {tmp_path}/go ]; do sleep 0.05; "
        f"done; touch {tmp_path}/saved; exit 0' TERM; touch {tmp_path}/ready; "
        "while :; do sleep 0.05; done"
    )
    return request(tmp_path, f'sh -c "{child}" & wait', extra_env={"GPUHERD_ATTEMPT_KEY": KEY})


@pytest.fixture
def leftovers_killed() -> Iterator[None]:
    """Whatever a failed test of `saver` leaves running is killed at its end."""
    yield
    local_escaped.signal_attempt(KEY, (signal.SIGKILL,))


async def restarted_mid_stop(tmp_path: Path) -> tuple[int, LaunchRequest, LocalExecutor]:
    """Launch `saver`, SIGTERM it, and let its shell end and be reaped while no executor
    watches (a daemon killed mid-grace, and init reaps the shell); return it with a new
    executor that has begun its start-up pass for this home's leftovers."""
    first = LocalExecutor()
    req = saver(tmp_path)
    pid = first.launch(req)
    await wait_until(lambda: (tmp_path / "ready").exists(), "the child")
    restarted = LocalExecutor()
    assert not restarted.outlived(pid, KEY)  # its leader still runs
    first.terminate(pid, grace=30)
    first.close()
    os.waitpid(pid, 0)  # the shell ends at once on SIGTERM
    assert restarted.outlived(pid, KEY)
    restarted.end_leftovers(HOME_ID)
    return pid, req, restarted


@pytest.mark.usefixtures("leftovers_killed")
def test_a_stop_whose_leader_ended_before_a_restart_keeps_its_grace(tmp_path: Path) -> None:
    async def main() -> None:
        pid, req, ex = await restarted_mid_stop(tmp_path)
        ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
        # As recovery does: watch the leader (gone), then re-arm the stop's SIGKILL.
        ex.watch(pid, req.attempt_dir, KEY, ended.set_result)
        ex.terminate(pid, grace=30, begun=True)
        await wait_until(lambda: not ex._sweeper._busy, "the start-up pass for leftovers")
        assert not ended.done() and live_group(pid)  # the child saves on
        (tmp_path / "go").touch()
        status = await asyncio.wait_for(ended, TIMEOUT)
        assert status.signal == signal.SIGTERM  # what the job's shell recorded
        assert (tmp_path / "saved").exists()
        assert (tmp_path / "terms").read_text() == "term\n"  # no second SIGTERM
        assert not ex.outlived(pid, KEY)
        ex.close()

    run(main())


@pytest.mark.usefixtures("leftovers_killed")
def test_what_outlives_the_grace_after_a_restart_is_killed_when_it_ends(tmp_path: Path) -> None:
    async def main() -> None:
        pid, req, ex = await restarted_mid_stop(tmp_path)
        ended: asyncio.Future[ExitStatus] = asyncio.get_running_loop().create_future()
        ex.watch(pid, req.attempt_dir, KEY, ended.set_result)
        started = time.monotonic()
        ex.terminate(pid, grace=1, begun=True)
        status = await asyncio.wait_for(ended, TIMEOUT)
        assert 1 <= time.monotonic() - started < 5
        assert status.signal == signal.SIGTERM
        await wait_until(lambda: not live_group(pid), "the child to be killed")
        assert not (tmp_path / "saved").exists()
        assert (tmp_path / "terms").read_text() == "term\n"
        ex.close()

    run(main())


@pytest.mark.usefixtures("leftovers_killed")
def test_a_leader_gone_before_it_was_watched_ends_at_once_without_a_stop(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        pid, req, ex = await restarted_mid_stop(tmp_path)
        status = await wait_exit(ex, pid, req.attempt_dir, KEY)  # no stop re-armed
        assert status.signal == signal.SIGTERM
        await wait_until(lambda: not live_group(pid), "the start-up pass to kill the child")
        ex.close()

    run(main())
