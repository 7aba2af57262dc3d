"""Stopping and pausing running jobs: the last person's word wins, asking again never delays
the SIGKILL, a paused job's time limits stand still, and a stop survives a daemon crash."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from test_stopping_advice import DEAF, deaf_now

from conftest import Herd, item, load_stretch, one_gpu_engine, serving, stays, wait_dead, wait_for
from gpuherd.core.states import JobState
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store

# Takes a while to stop (its TERM trap), so a second request comes while it is stopping.
SLOW_TO_STOP = "trap 'sleep 0.5; exit 0' TERM; sleep 100 & wait"


def stopping_until(saved: Path) -> str:
    """A job that, once SIGTERMed, ends only when `saved` exists (a checkpoint being saved):
    what a test asks during its stop cannot come after its end (0.5 s once did, loaded)."""
    return f"trap 'while [ ! -e {saved} ]; do sleep 0.02; done; exit 0' TERM; sleep 100 & wait"


def test_a_kill_after_a_retry_wins_and_so_does_a_retry_after_a_kill(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    first = daemon.submit("--grace", "10s", "--", stopping_until(tmp_path / "first"))
    daemon.wait_state(first, "running")
    assert "stopping, then queued again" in daemon.cli("retry", str(first)).stdout
    assert daemon.job(first)["reason"] == "stopping (killed, then queued again)"
    daemon.cli("kill", str(first))
    assert daemon.job(first)["reason"] == "stopping (killed)"
    (tmp_path / "first").touch()
    assert daemon.wait_state(first, "killed")["attempt"] == 1  # not run again

    stop = stopping_until(tmp_path / "second")
    second = daemon.submit("--grace", "10s", "--", f'[ "$GPUHERD_ATTEMPT" = 2 ] || {{ {stop}; }}')
    daemon.wait_state(second, "running")
    daemon.cli("kill", str(second))
    daemon.cli("retry", str(second))  # changed my mind: run it again
    (tmp_path / "second").touch()
    done = daemon.wait_state(second, "succeeded", "killed")
    assert (done["state"], done["attempt"]) == ("succeeded", 2)


def test_asking_again_never_delays_the_sigkill(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    grace = round(3 * load_stretch())  # (room for kills asked again within it, under load)
    job = daemon.submit("--grace", f"{grace:g}s", "--", DEAF)
    deaf_now(daemon, job)
    began = time.time()
    while daemon.job(job)["state"] == "running" and time.time() < began + 15:
        # Every kill used to start the grace again. One may land just after the SIGKILL:
        # then it answers "already ended (killed)", no error either, and the loop ends.
        again = daemon.cli("kill", str(job), check=False)
        assert again.returncode == 0, again.stderr
        time.sleep(0.2)
    ended = daemon.wait_state(job, "killed")
    # From the daemon's records, not the CLI's speed: the first kill's stop, and its SIGKILL.
    events = ended["events"]
    stops = [e["at"] for e in events if e["event"] == "stop"]
    killed = next(e["at"] for e in events if e["event"] == "kill")
    assert any(stops[0] < at < stops[0] + grace for at in stops[1:]), stops  # asked again
    assert killed - stops[0] < grace + 1.5, (stops, killed)


def test_time_limits_stand_still_while_a_job_is_paused(daemon: Herd, tmp_path: Path) -> None:
    # Each needs 3 s of running: less than its limit, unless paused time counted. Submitted
    # held and released at once, so that on a loaded machine none can end before the pause
    # (three submissions in turn once took longer than the first job's run).
    work = "for i in 1 2 3 4 5 6; do sleep 0.5; done"
    timed = daemon.submit("--hold", "--timeout", "4s", "--", work)
    chatty = daemon.submit(
        "--hold", "--no-output-timeout", "1s", "--on-no-output", "kill", "--",
        "for i in $(seq 12); do echo $i; sleep 0.25; done",
    )  # fmt: skip
    restarted = daemon.submit("--hold", "--timeout", "4s", "--", work)
    daemon.cli("release", str(timed), str(chatty), str(restarted))
    for job in (timed, chatty, restarted):
        daemon.wait_state(job, "running")
    daemon.cli("pause", str(timed), str(chatty), str(restarted))
    stays(lambda: daemon.job(timed)["state"] == "paused", seconds=2.5)
    daemon.cli("resume", str(timed), str(chatty))
    # The third stays paused through a crash: its paused time is read back from its events.
    daemon.kill9()
    daemon.start()
    assert daemon.job(restarted)["state"] == "paused"
    daemon.cli("resume", str(restarted))
    for job in (timed, chatty, restarted):
        assert daemon.wait_state(job, "succeeded", "failed")["state"] == "succeeded", job


def test_a_timeout_stop_survives_a_crash_during_its_grace(daemon: Herd, tmp_path: Path) -> None:
    job = daemon.submit(
        "--timeout", "0.5s", "--grace", "20s", "--", SLOW_TO_STOP.replace("0.5", "2")
    )
    wait_for(lambda: any(e["event"] == "stop" for e in daemon.json("show", str(job))["events"]))
    daemon.kill9()
    process_file = daemon.home / "jobs" / str(job) / "attempt-1" / "process"
    wait_for(lambda: "exit" in process_file.read_text(), what="its end, while no daemon runs")
    daemon.start()
    ended = daemon.wait_state(job, "failed", "succeeded")
    assert (ended["state"], ended["outcome"]) == ("failed", "timeout")


def test_a_job_that_cleans_its_environment_is_still_found_after_a_crash(
    daemon: Herd, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    job = daemon.submit("--", f'exec env -i sh -c "while [ ! -e {go} ]; do sleep 0.05; done"')
    daemon.wait_state(job, "running")
    pid = daemon.job(job)["pid"]
    wait_for(lambda: "GPUHERD_JOB_ID" not in psutil.Process(pid).environ(), what="the exec")
    daemon.kill9()
    daemon.start()
    assert daemon.job(job)["state"] == "running"  # was `lost`, its GPU given to the next job
    other = daemon.submit("--gpus", "4", "--", "true")
    assert "waiting" in daemon.job(other)["reason"]
    go.touch()
    daemon.wait_state(other, "succeeded")


def test_what_a_job_left_running_while_no_daemon_ran_is_killed(
    daemon: Herd, tmp_path: Path
) -> None:
    go, child = tmp_path / "go", tmp_path / "child"
    job = daemon.submit(
        "--", f"sleep 300 & echo $! > {child}; while [ ! -e {go} ]; do sleep 0.05; done"
    )
    wait_for(lambda: child.exists() and child.read_text().strip(), what="the child")
    straggler = psutil.Process(int(child.read_text()))
    daemon.kill9()
    go.touch()
    process_file = daemon.home / "jobs" / str(job) / "attempt-1" / "process"
    wait_for(lambda: "exit" in process_file.read_text(), what="the job's end")
    assert straggler.is_running()
    daemon.start()
    assert daemon.wait_state(job, "succeeded")["state"] == "succeeded"
    wait_for(lambda: not straggler.is_running() or straggler.status() == "zombie",
             what="the child to be killed")  # fmt: skip


def test_silence_while_no_daemon_ran_counts_toward_no_output_timeout(daemon: Herd) -> None:
    limit = 3.0  # (more than a loaded machine's daemon start: the test tells < limit apart)
    job = daemon.submit(
        "--no-output-timeout", f"{limit:g}s", "--on-no-output", "kill", "--",
        "echo started; sleep 60",
    )  # fmt: skip
    log = daemon.home / "jobs" / str(job) / "attempt-1" / "stdout.log"
    wait_for(lambda: log.exists() and log.read_text() == "started\n", what="its one line")
    daemon.kill9()
    silent_since = log.stat().st_mtime
    while time.time() < silent_since + limit + 0.5:  # silent past its limit, unwatched
        time.sleep(0.05)
    daemon.start()
    # When the new daemon's service began (before its engine re-attached the job): its
    # start-up, several seconds on a loaded machine, is not counted against the limit.
    began = time.time() - float(daemon.client.get("/daemon")["uptime"])
    ended = daemon.wait_state(job, "failed", timeout=20)
    assert ended["outcome"] == "stalled"
    assert ended["ended_at"] - began < limit  # it used to count from the re-attachment


def saving_child(terms: Path, ready: Path, saved: Path, go: Path | None) -> str:
    """A job whose shell starts a child and waits. The child takes its SIGTERM as "save a
    checkpoint, then exit": it saves until `go` exists (for ever without one). The job's
    shell ends at once on the SIGTERM, so the child outlives its leader."""
    until = f"[ -e {go} ]" if go else "false"
    child = (
        f"trap 'echo term >> {terms}; until {until}; do sleep 0.05; done; touch {saved}; exit 0' "
        f"TERM; touch {ready}; while :; do sleep 0.05; done"
    )
    return f"sh -c {shlex.quote(child)} & echo $! > {ready}.pid; wait"


def crash_once_the_leader_ended(
    daemon: Herd, job: int, ready: Path
) -> tuple[psutil.Process, float]:
    """Kill the job, kill -9 the daemon once the job's shell has ended (its child still
    saving), and start it again; return the child, and when the new daemon was serving."""
    pid_file = Path(f"{ready}.pid")
    wait_for(lambda: ready.exists() and pid_file.exists() and pid_file.read_text().strip(),
             what="the child")  # fmt: skip
    child = psutil.Process(int(pid_file.read_text()))
    daemon.cli("kill", str(job))
    process_file = daemon.home / "jobs" / str(job) / "attempt-1" / "process"
    wait_for(lambda: "exit" in process_file.read_text(), what="the job's shell to end")
    daemon.kill9()
    daemon.start()
    return child, time.time()


def test_a_restart_after_the_leader_ended_leaves_its_children_their_grace(
    daemon: Herd, tmp_path: Path
) -> None:
    terms, ready, saved, go = (tmp_path / name for name in ("terms", "ready", "saved", "go"))
    job = daemon.submit("--grace", "60s", "--", saving_child(terms, ready, saved, go))
    child, _ = crash_once_the_leader_ended(daemon, job, ready)
    # Was recorded `killed` at once, and the start-up pass SIGKILLed the child mid-save.
    assert daemon.job(job)["state"] == "running"
    assert child.is_running() and child.status() != psutil.STATUS_ZOMBIE
    go.touch()
    ended = daemon.wait_state(job, "killed", "failed", "succeeded", "lost")
    assert (ended["state"], ended["outcome"]) == ("killed", "killed")
    assert saved.exists()  # it finished saving: it ended by itself, well within its grace
    assert terms.read_text() == "term\n"  # one SIGTERM: the restarted daemon sent none


def test_children_that_outlive_the_grace_after_a_restart_are_killed_when_it_ends(
    daemon: Herd, tmp_path: Path
) -> None:
    grace = 6.0
    terms, ready, saved = (tmp_path / name for name in ("terms", "ready", "saved"))
    job = daemon.submit("--grace", f"{grace:g}s", "--", saving_child(terms, ready, saved, None))
    child, restarted = crash_once_the_leader_ended(daemon, job, ready)
    shown = daemon.json("show", str(job))
    due = next(e["at"] for e in shown["events"] if e["event"] == "stop") + grace
    if restarted < due - 1:  # (a loaded machine may take longer to restart than the grace)
        assert shown["state"] == "running"  # the restart left the children their grace
    ended = daemon.wait_state(job, "killed", "failed", "succeeded", "lost", timeout=2 * grace)
    assert (ended["state"], ended["outcome"]) == ("killed", "killed")
    wait_dead(child)
    assert not saved.exists()
    killed = next(e["at"] for e in ended["events"] if e["event"] == "kill")
    # Killed when the grace the kill gave ran out: not at the restart, not later; or at once
    # by a daemon that came back only after that (at a load of 16 the kill came 26 s after
    # the stop, and the wait for it, 12 s from the restart, did not time out).
    assert due - 0.1 <= killed < max(due, restarted) + 3
    assert terms.read_text() == "term\n"


def test_a_second_kill_says_the_sigkill_stays_due_and_a_stopping_job_is_not_paused(
    shared_daemon: Herd,
) -> None:
    job = shared_daemon.submit("--grace", "30s", "--", DEAF)
    deaf_now(shared_daemon, job)
    first = shared_daemon.cli("kill", str(job)).stdout
    assert first == f"job {job}: stopping (SIGTERM, then SIGKILL after 30s)\n"
    wait_for(lambda: shared_daemon.job(job)["reason"], what="the stop to be under way")
    again = shared_daemon.cli("kill", str(job)).stdout  # it said "after 30s" again
    assert again.startswith(f"job {job}: already stopping (SIGKILL in "), again
    paused = shared_daemon.cli("pause", str(job), check=False)  # it froze the job's grace
    assert paused.returncode == 1
    assert paused.stderr.startswith(
        f"gpuherd: error: job {job} is being stopped (killed): it is not paused during its "
        "grace; it ends by itself or at its SIGKILL in "
    ), paused.stderr
    assert shared_daemon.job(job)["state"] == "running"
    # Its SIGKILL, now: the grace's 30 s were the fixture's teardown's (30 s of the suite).
    os.killpg(shared_daemon.job(job)["pid"], signal.SIGKILL)
    shared_daemon.wait_state(job, "killed")


class LateToSignal(LocalExecutor):
    """Sends a stop's signals 0.1 s late, as a daemon descheduled on a busy machine may."""

    def terminate(
        self, pid: int, grace: float, begun: bool = False, sent: Callable[[], object] | None = None
    ) -> None:
        time.sleep(0.1)
        super().terminate(pid, grace, begun, sent)


async def _until(done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    # (30 s: 10 s ran out on a loaded CI machine before a trapped SIGTERM's file was written)
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def test_a_first_kill_says_stopping_however_long_its_signals_took(tmp_path: Path) -> None:
    # A kill was told apart from a second one by the time left to its SIGKILL: a daemon 0.05 s
    # slow between setting that time and reading it (a loaded machine) answered the first
    # kill "already stopping (SIGKILL in 9.9s)" (a dashboard test failed so in a full run).
    store = Store(tmp_path / "herd.db")

    async def main() -> list[str]:
        engine = one_gpu_engine(tmp_path, store, LateToSignal())
        async with serving(engine, tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "sleep 60")])
            await _until(lambda: job_id in engine.live, "the job to start")
            said = [r.message for r in service.kill([job_id]) + service.kill([job_id])]

            def killed() -> bool:
                job = store.get_job(job_id)
                return job is not None and job.state is JobState.KILLED

            await _until(killed, "the job to end")  # ended and reaped: no process left
        return said

    first, again = asyncio.run(main())
    store.close()
    assert first == "stopping (SIGTERM, then SIGKILL after 10s)"
    assert again.startswith("already stopping (SIGKILL in 9."), again


def test_a_kill_just_after_the_start_records_the_pid_before_its_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A spawned job's pid waits for the next tick (PID_RECORD_DELAY, 50 ms): a kill in that
    # window (the forked test CLI is that fast) left the job running with no pid, and its
    # events had the stop before the spawn. Here the window is an hour, so it is hit surely.
    monkeypatch.setattr("gpuherd.engine_spawns.PID_RECORD_DELAY", 3600.0)
    store = Store(tmp_path / "herd.db")

    async def main() -> tuple[int, str]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "sleep 60")])
            await _until(lambda: job_id in engine.live, "the job to start")
            unrecorded = store.get_job(job_id)
            assert unrecorded is not None and unrecorded.pid is None  # the window
            (said,) = service.kill([job_id])
            stopping = store.get_job(job_id)
            assert stopping is not None and stopping.pid, "running, being stopped, no pid"
            await _until(lambda: job_id not in engine.live, "the job to end")
        return job_id, said.message

    job_id, said = asyncio.run(main())
    assert said == "stopping (SIGTERM, then SIGKILL after 10s)"
    job = store.get_job(job_id)
    assert job is not None and job.state is JobState.KILLED and job.pid
    events = [e.event for e in store.events(job_id)]
    store.close()
    assert events == ["submit", "start", "spawn", "stop", "kill"]


class SlowToLook(LocalExecutor):
    """Takes 3 s over each look at whether a job runs (a /proc pass on a busy machine), as
    a restarted daemon's recovery asks of every job the database says is live."""

    def is_running(
        self, pid: int, job_id: int, attempt: int, key: str, attempt_dir: str = ""
    ) -> bool:
        time.sleep(3.0)
        return super().is_running(pid, job_id, attempt, key, attempt_dir)


def _ended(store: Store, job_id: int) -> Callable[[], bool]:
    def ended() -> bool:
        job = store.get_job(job_id)
        return job is not None and job.state not in (JobState.RUNNING, JobState.PAUSED)

    return ended


async def _recover_slowly(tmp_path: Path, store: Store, job_id: int) -> dict[str, float]:
    """Start an engine whose recovery is slow, and wait for the job to end: its events."""
    engine = one_gpu_engine(tmp_path, store, SlowToLook())
    async with serving(engine, tmp_path):
        await _until(_ended(store, job_id), "the job to end")
    return {e.event: e.at for e in store.events(job_id)}


# Their timers were reckoned from the clock at the recovery's start, and a recovery slowed by
# its looks stopped them that much later than they were due (3 s late in these two).


def test_a_slow_recovery_keeps_the_sigkill_when_it_was_due(tmp_path: Path) -> None:
    grace = 5.0
    terms, ready, saved = (tmp_path / name for name in ("terms", "ready", "saved"))
    store = Store(tmp_path / "herd.db")

    async def stop_and_leave() -> int:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            command = saving_child(terms, ready, saved, None)
            (job_id,) = service.submit([item(tmp_path, command, grace=grace)])
            # `ready`, not only its pid file: the child touches it once its trap is set (a
            # SIGTERM before that ended it unsaid, and `terms` never came: a CI flake).
            started = Path(f"{ready}.pid")
            await _until(lambda: ready.exists() and started.exists(), "the child to start")
            service.kill([job_id])
            await _until(lambda: terms.exists(), "the child's SIGTERM")
            job = store.get_job(job_id)
            assert job is not None
            process = engine.layout.attempt_dir(job, 1) / "process"
            await _until(lambda: "exit" in process.read_text(), "the job's shell to end")
        return job_id  # the engine closed as a killed daemon leaves: the stop under way

    job_id = asyncio.run(stop_and_leave())
    events = asyncio.run(_recover_slowly(tmp_path, store, job_id))
    store.close()
    due = events["stop"] + grace
    assert due - 0.1 <= events["kill"] < due + 2.5, events["kill"] - due
    assert not saved.exists()


def test_a_slow_recovery_keeps_the_timeout_when_it_was_due(tmp_path: Path) -> None:
    timeout = 4.0
    store = Store(tmp_path / "herd.db")

    async def start_and_leave() -> int:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        async with serving(engine, tmp_path) as service:
            (job_id,) = service.submit([item(tmp_path, "sleep 60", timeout=timeout, grace=1)])
            await _until(lambda: job_id in engine.live, "the job to start")
        return job_id  # left running, as a killed daemon leaves it

    job_id = asyncio.run(start_and_leave())
    events = asyncio.run(_recover_slowly(tmp_path, store, job_id))
    job = store.get_job(job_id)
    store.close()
    assert job is not None and job.state is JobState.FAILED, job  # (its outcome: timeout)
    due = events["start"] + timeout
    assert due - 0.1 <= events["stop"] < due + 2.5, (events, due)
