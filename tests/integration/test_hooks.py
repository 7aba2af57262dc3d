"""The on-end hook (`gpuherd config set on-end CMD`): run once per job that ran and ended,
told of the job in GPUHERD_JOB_* variables; never for a job cancelled before it started;
kept across restarts; a failing or hanging hook is logged and never holds the queue."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path

import psutil
import pytest

from conftest import (
    Herd,
    hooks_log,
    item,
    one_gpu_engine,
    read_line,
    serving,
    stays,
    wait_dead,
    wait_for,
)
from gpuherd.core.model import Policy
from gpuherd.executors.local import LocalExecutor
from gpuherd.hook_files import ROTATE_AT
from gpuherd.hooks import EndHooks
from gpuherd.store import Store


def record_hook(folder: Path) -> str:
    """A hook that saves its GPUHERD_ variables as FOLDER/<job id>.env (whole, by rename)."""
    folder.mkdir(exist_ok=True)
    return (
        f'env | grep ^GPUHERD_ > "{folder}/tmp.$$" && '
        f'mv "{folder}/tmp.$$" "{folder}/$GPUHERD_JOB_ID.env"'
    )


def told(folder: Path, job_id: int, timeout: float = 15.0) -> dict[str, str]:
    path = folder / f"{job_id}.env"
    wait_for(path.exists, timeout, f"the hook of job {job_id}")
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_the_hook_runs_once_for_each_job_that_ran_and_ended(daemon: Herd, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    assert "on-end = " in daemon.cli("config", "set", "on-end", record_hook(seen)).stdout
    assert daemon.cli("config", "get", "on-end").stdout.strip() == record_hook(seen)

    ok = daemon.submit("--name", "good", "--project", "p1", "--", "echo hi")
    bad = daemon.submit("--retries", "1", "--", "exit 4")
    never = daemon.submit("--hold", "--", "true")
    daemon.cli("kill", str(never))
    running = daemon.submit("--", "sleep 60")
    daemon.wait_state(running, "running")
    daemon.cli("kill", str(running))

    good = told(seen, ok)
    assert good["GPUHERD_JOB_STATE"] == "succeeded"
    assert good["GPUHERD_JOB_OUTCOME"] == "exit"
    assert good["GPUHERD_JOB_EXIT_CODE"] == "0"
    assert good["GPUHERD_JOB_NAME"] == "good"
    assert good["GPUHERD_JOB_PROJECT"] == "p1"
    assert good["GPUHERD_JOB_COMMAND"] == "echo hi"
    assert good["GPUHERD_ATTEMPT"] == "1"
    assert good["GPUHERD_JOB_GPUS"] in {"0", "1", "2", "3"}
    attempt_dir = Path(good["GPUHERD_ATTEMPT_DIR"])
    assert (attempt_dir / "stdout.log").read_text() == "hi\n"
    assert Path(good["GPUHERD_JOB_DIR"]) == attempt_dir.parent
    assert float(good["GPUHERD_JOB_SECONDS"]) >= 0

    failed = told(seen, bad)  # once, after its last attempt: a retry is not an end
    assert failed["GPUHERD_JOB_STATE"] == "failed"
    assert failed["GPUHERD_JOB_EXIT_CODE"] == "4"
    assert failed["GPUHERD_JOB_DETAIL"] == "exit 4"
    assert failed["GPUHERD_ATTEMPT"] == "2"

    killed = told(seen, running)
    assert killed["GPUHERD_JOB_STATE"] == "killed"
    assert killed["GPUHERD_JOB_EXIT_CODE"] == ""
    assert killed["GPUHERD_JOBS_LEFT"] == "0"
    # The cancelled job's change came before the kill's: it was passed over, not pending.
    assert not (seen / f"{never}.env").exists()
    assert "GPUHERD_TOKEN" not in killed
    assert "on-end hook" not in (daemon.home / "daemon.log").read_text()


def test_a_failing_hook_is_logged_and_none_turns_it_off(daemon: Herd, tmp_path: Path) -> None:
    daemon.cli("config", "set", "on-end", 'echo told $GPUHERD_JOB_ID in "$(pwd)"; exit 3')
    first = daemon.submit("--", "true")
    log = daemon.home / "daemon.log"
    wait_for(lambda: f"on-end hook for job {first} exited 3" in log.read_text(), 15, "the warning")
    hooks_log = (daemon.home / "hooks.log").read_text()
    assert f"job {first} succeeded: echo told" in hooks_log
    assert f"told {first} in {daemon.home}\n" in hooks_log  # not where the daemon started

    assert daemon.cli("config", "set", "on-end", "none").stdout.strip() == "on-end = none"
    second = daemon.submit("--", "true")
    daemon.wait_state(second, "succeeded")
    stays(lambda: f"job {second}" not in (daemon.home / "hooks.log").read_text())


def test_the_hook_is_kept_and_runs_for_a_job_that_ended_while_the_daemon_was_down(
    daemon: Herd, tmp_path: Path
) -> None:
    seen, go = tmp_path / "seen", tmp_path / "go"
    daemon.cli("config", "set", "on-end", record_hook(seen))
    job = daemon.submit("--", f"while [ ! -e {go} ]; do sleep 0.05; done; exit 7")
    daemon.wait_state(job, "running")
    daemon.kill9()
    go.touch()
    daemon.start()

    recovered = told(seen, job)
    assert recovered["GPUHERD_JOB_STATE"] == "failed"
    assert recovered["GPUHERD_JOB_EXIT_CODE"] == "7"


def test_a_hook_past_its_time_is_killed_and_hooks_run_a_few_at_a_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "herd.db")
    marks = tmp_path / "marks"
    marks.mkdir()
    # Each hook writes its pid, then hangs until killed: with 2 at a time, the third job's
    # hook can start only once one of the first two was killed at its time limit.
    hang = f'echo $$ >"{marks}/t$$" && mv "{marks}/t$$" "{marks}/$GPUHERD_JOB_ID"; exec sleep 600'
    limit = 1.0

    async def main() -> list[int]:
        engine = one_gpu_engine(tmp_path, store, LocalExecutor())
        engine.policy = Policy(on_end=hang)
        hooks = EndHooks(engine, tmp_path, timeout=limit, parallel=2)
        hooks.start()
        async with serving(engine, tmp_path) as service:
            try:
                ids = service.submit([item(tmp_path, "true")] * 3)
                deadline = time.monotonic() + 20
                while (len(os.listdir(marks)) < 3 or hooks.running) and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                assert not hooks.running
                return ids
            finally:
                hooks.stop()  # before the engine closes

    with caplog.at_level(logging.WARNING, logger="gpuherd.hooks"):
        ids = asyncio.run(main())
    store.close()
    started = [os.stat(marks / str(i)).st_mtime for i in ids]
    assert started[2] - min(started[:2]) > limit * 0.9  # it waited for a place
    for job_id in ids:
        assert not psutil.pid_exists(int((marks / str(job_id)).read_text()))
    killed = [r.getMessage() for r in caplog.records if "was killed" in r.getMessage()]
    assert len(killed) == 3, killed
    assert not [r for r in caplog.records if "died of signal" in r.getMessage()]


def test_hooks_left_waiting_by_a_crash_run_at_the_next_start(daemon: Herd, tmp_path: Path) -> None:
    started, done, go = tmp_path / "started", tmp_path / "done", tmp_path / "go"
    started.mkdir()
    before = daemon.submit("--", "true")  # ended before the hook was set: never hooked
    daemon.wait_state(before, "succeeded")
    # 4 hooks run at once: they hold on until `go`, so the other ends wait their turn.
    daemon.cli(
        "config",
        "set",
        "on-end",
        f'touch "{started}/$GPUHERD_JOB_ID"; while [ ! -e {go} ]; do sleep 0.02; done; '
        f'echo "$GPUHERD_JOB_ID" >> {done}',
    )
    ids = [daemon.submit("--gpus", "0", "--", "true") for _ in range(7)]
    for job_id in ids:
        daemon.wait_state(job_id, "succeeded")
    wait_for(lambda: len(os.listdir(started)) == 4, what="4 hooks to start")
    daemon.kill9()  # 3 hooks still waiting: in memory only, until now
    daemon.start()
    go.touch()
    wait_for(lambda: done.exists() and len(done.read_text().split()) == len(ids), timeout=30)
    stays(lambda: len(done.read_text().split()) == len(ids))  # none twice
    assert sorted(map(int, done.read_text().split())) == ids
    assert not (started / str(before)).exists()


def test_jobs_that_ended_out_of_order_while_no_daemon_ran_are_hooked_once(
    daemon: Herd, tmp_path: Path
) -> None:
    ends, go_a, go_b = tmp_path / "ends", tmp_path / "go-a", tmp_path / "go-b"
    daemon.cli("config", "set", "on-end", f'echo "$GPUHERD_JOB_ID" >> {ends}')
    wait_go = "while [ ! -e {} ]; do sleep 0.02; done"
    a = daemon.submit("--", wait_go.format(go_a))
    b = daemon.submit("--", wait_go.format(go_b))
    folders = [Path(daemon.wait_state(j, "running")["job_dir"]) / "attempt-1" for j in (a, b)]
    daemon.cli("daemon", "stop")  # the jobs go on
    for go, folder in ((go_b, folders[1]), (go_a, folders[0])):  # b ends first, then a
        go.touch()
        wait_for(lambda f=folder: "exit 0" in (f / "process").read_text(), what="its end")
    daemon.start()  # recorded (and hooked) in id order: a, then b, which ended earlier
    wait_for(lambda: ends.exists() and sorted(ends.read_text().split()) == [str(a), str(b)])
    daemon.cli("daemon", "stop")
    daemon.start()
    stays(lambda: sorted(ends.read_text().split()) == [str(a), str(b)])  # none again


def test_a_hooks_output_is_capped_cleaned_and_shown_by_daemon_log_hooks(daemon: Herd) -> None:
    # A hook printing 3 MB made hooks.log 3 MB, its colours stored raw.
    daemon.cli(
        "config",
        "set",
        "on-end",
        r"printf '\033[31mred\033[0m start\n'; head -c 3000000 /dev/zero | tr '\0' x; "
        r"printf '\nthe end\n'",
    )
    job = daemon.submit("--", "true")
    wait_for(lambda: "the end\n" in hooks_log(daemon.home), what="the hook's output in hooks.log")
    text = hooks_log(daemon.home)
    lines = text.splitlines()
    assert lines[0].startswith("--- ") and f" job {job} succeeded: printf " in lines[0]
    assert lines[1] == "red start" and "\x1b" not in text
    printed = len("\x1b[31mred\x1b[0m start\n") + 3_000_000 + len("\nthe end\n")
    assert lines[3] == f"… {printed - 2 * 4096:,} bytes left out …"  # all but 4 KiB at each end
    assert lines[2] == "x" * (4096 - 19) and lines[4] == "x" * (4096 - 9)
    assert lines[5:] == ["the end"]
    assert list((daemon.home / "hooks.running").iterdir()) == []
    assert daemon.cli("daemon", "log", "--hooks", "-n", "2").stdout == "x" * 4087 + "\nthe end\n"


def test_hooks_log_is_rotated_and_a_multi_line_hook_shows_on_one_line(daemon: Herd) -> None:
    old = "old line\n" * (ROTATE_AT // 9)  # 10 MiB but a few bytes: the next entry passes it
    (daemon.home / "hooks.log").write_text(old)
    daemon.cli("config", "set", "on-end", "echo first\necho second")
    table = daemon.cli("config").stdout.splitlines()
    assert [line for line in table if line.startswith("on-end")] == [
        "on-end          echo first⏎echo second"
    ]  # its second line broke the table
    job = daemon.submit("--", "true")
    wait_for(lambda: "second" in hooks_log(daemon.home), what="the hook's output")
    assert (daemon.home / "hooks.log.1").read_text() == old
    lines = hooks_log(daemon.home).splitlines()
    assert lines[0].endswith(f" job {job} succeeded: echo first⏎echo second")
    assert lines[1:] == ["first", "second"]


def test_the_output_of_a_hook_left_running_by_a_crash_is_written_out_once_it_ended(
    daemon: Herd, tmp_path: Path
) -> None:
    pid_file, go = tmp_path / "hook.pid", tmp_path / "go"
    daemon.cli(
        "config",
        "set",
        "on-end",
        f'echo before; echo $$ > "{pid_file}.t" && mv "{pid_file}.t" "{pid_file}"; '
        f"while [ ! -e {go} ]; do sleep 0.02; done; echo after",
    )
    job = daemon.submit("--", "true")
    hook = psutil.Process(int(wait_for(lambda: pid_file.exists() and pid_file.read_text())))
    daemon.kill9()
    daemon.start()  # the hook still runs: its output is left where it is
    (left,) = (daemon.home / "hooks.running").iterdir()
    assert left.name.startswith(f"job{job}-")
    assert "before" not in hooks_log(daemon.home)
    go.touch()
    wait_dead(hook)
    daemon.cli("daemon", "stop")
    daemon.start()
    wait_for(lambda: "after" in hooks_log(daemon.home), what="the hook's output in hooks.log")
    assert hooks_log(daemon.home).splitlines()[1:] == ["before", "after"]
    assert list((daemon.home / "hooks.running").iterdir()) == []


def test_daemon_log_hooks_follows_hooks_log_through_its_rotation(herd: Herd) -> None:
    herd.home.mkdir(parents=True)
    missing = herd.cli("daemon", "log", "--hooks", check=False)
    assert (missing.returncode, missing.stderr) == (
        1,
        f"gpuherd: error: no hook log at {herd.home / 'hooks.log'} yet: no on-end hook has run "
        "there (gpuherd config get on-end shows the one set; gpuherd daemon log --hooks -f "
        "waits for its first run)\n",
    )
    log = herd.home / "hooks.log"
    follow = herd.popen("daemon", "log", "--hooks", "-f")  # before the first hook: it waits
    try:
        assert follow.stdout is not None and follow.stderr is not None
        said = read_line(follow.stderr.fileno(), bytearray()).decode()
        assert said == f"gpuherd: no on-end hook has run yet; waiting for its first run ({log})"
        log.write_text("one\n")
        buffer = bytearray()
        assert read_line(follow.stdout.fileno(), buffer) == b"one"
        log.rename(herd.home / "hooks.log.1")  # as the daemon rotates it
        log.write_text("two\n")
        assert read_line(follow.stdout.fileno(), buffer) == b"two"
    finally:
        follow.kill()
        follow.communicate()  # (closes its pipes)


def test_on_end_none_drops_the_hooks_still_waiting_their_turn(daemon: Herd, tmp_path: Path) -> None:
    """A hook that hangs (or mails) for each of many ends is stopped by `on-end none`: the
    runs still waiting behind the 4 running ones are not run afterwards, as after a restart."""
    started, go = tmp_path / "started", tmp_path / "go"
    started.mkdir()
    daemon.cli(
        "config",
        "set",
        "on-end",
        f'touch "{started}/$GPUHERD_JOB_ID"; while [ ! -e {go} ]; do sleep 0.02; done',
    )
    ids = [daemon.submit("--gpus", "0", "--", "true") for _ in range(6)]
    for job_id in ids:
        daemon.wait_state(job_id, "succeeded")
    wait_for(lambda: len(os.listdir(started)) == 4, what="4 hooks to start")
    daemon.cli("config", "set", "on-end", "none")
    go.touch()  # the 4 running hooks end: the 2 waiting ones would start now
    hooks_log = daemon.home / "hooks.log"
    wait_for(lambda: hooks_log.exists() and hooks_log.read_text().count("--- ") >= 4)
    stays(lambda: len(os.listdir(started)) == 4, seconds=1.0, what="no further hook")
    note = "on-end changed: 2 hooks of the command set before, still waiting their turn"
    assert note in (daemon.home / "daemon.log").read_text()
