"""`gpuherd run` when its terminal goes away: SIGHUP (the terminal closed, ssh dropped) and
output nobody reads any more (a closed terminal: EIO; a pipe whose reader left: EPIPE).

The user is gone, so the running jobs are killed, their ends recorded (job.json, FAILURE),
and the run exits 129, printing its summary if anyone can still read it.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import time
from pathlib import Path

from conftest import GPUHERD_BIN, Probe, Runs, gone, group_members, job_info, read_line, wait_for


def jobs_file(runs: Runs, probe: Probe, names: str, **opts: object) -> Path:
    jobs = runs.root / "jobs.txt"
    jobs.write_text("".join(probe.cmd(n, **opts) + "\n" for n in names))
    return jobs


def assert_killed_and_recorded(out: Path, folders: list[str], pids: list[int]) -> None:
    """Every running job was killed, its process group is empty, and its end is recorded."""
    for pid in pids:
        assert gone(pid), f"job process {pid} survived the run"
    for name in folders:
        info = job_info(out / name)
        assert info["ended_at"] is not None, info
        assert info["outcome"] in ("killed", "signal"), info
        assert group_members(info["pid"]) == []
        assert (out / name / "FAILURE").exists() and not (out / name / "SUCCESS").exists()


def test_sighup_kills_the_running_jobs_records_their_ends_and_prints_the_summary(
    runs: Runs, probe: Probe
) -> None:
    # The README's repro: `gpuherd run ... & kill -HUP $!` with three jobs on two GPUs.
    out = runs.root / "out"
    jobs = jobs_file(runs, probe, "abc", wait="never")
    run = runs.start("--fake-gpus", "2", "--output-dir", str(out), str(jobs))
    running = wait_for(
        lambda: (
            [n for n in "abc" if probe.started(n)] if sum(map(probe.started, "abc")) == 2 else 0
        ),
        what="two jobs to start",
    )
    pids = [int((probe.folder / f"{n}.started").read_text()) for n in running]
    run.proc.send_signal(signal.SIGHUP)
    assert run.expect_line("hung up") == "hung up: killing 2 running jobs"
    status, rest, err = run.finish(timeout=20)
    assert status == 129, rest + err
    assert err == ""
    assert rest.splitlines()[-1] == f"0 succeeded, 2 failed, 1 not run; logs in {out}"
    assert probe.records() == []  # killed, never finished
    assert not probe.started(({*"abc"} - {*running}).pop())
    assert sorted(p.name for p in out.iterdir()) == ["job_0", "job_1"]
    assert_killed_and_recorded(out, ["job_0", "job_1"], pids)


def test_sighup_after_a_first_ctrl_c_kills_the_jobs_it_waited_for(runs: Runs, probe: Probe) -> None:
    out = runs.root / "out"
    jobs = jobs_file(runs, probe, "ab", wait="never")  # one GPU: b waits, and never runs
    run = runs.start("--fake-gpus", "1", "--output-dir", str(out), str(jobs))
    wait_for(lambda: probe.started("a"), what="job a to start")
    run.proc.send_signal(signal.SIGINT)
    run.expect_line("interrupted")
    run.proc.send_signal(signal.SIGHUP)
    run.expect_line("hung up")
    status, rest, err = run.finish(timeout=20)
    assert status == 129, rest + err
    assert rest.splitlines()[-1] == f"0 succeeded, 1 failed, 1 not run; logs in {out}"
    assert_killed_and_recorded(out, ["job_0"], [int((probe.folder / "a.started").read_text())])


def test_sighup_after_the_terminal_closed_still_kills_and_records_without_a_traceback(
    runs: Runs, probe: Probe
) -> None:
    # A closed terminal: the run's stdout is a pseudo-terminal whose other side is closed,
    # so every write to it fails with EIO (the progress bar's refresh thread's too).
    out = runs.root / "out"
    jobs = jobs_file(runs, probe, "ab", wait="never")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [GPUHERD_BIN, "run", "--fake-gpus", "2", "--output-dir", str(out), str(jobs)],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        cwd=runs.cwd,
        env={**runs.env, "TERM": "xterm", "COLUMNS": "100"},
        start_new_session=True,
    )
    os.close(follower)
    try:
        wait_for(lambda: probe.started("a") and probe.started("b"), what="both jobs to start")
        os.close(leader)  # the terminal window closes...
        leader = -1
        proc.send_signal(signal.SIGHUP)  # ...and its process group is hung up
        _, err = proc.communicate(timeout=20)
    finally:
        if leader >= 0:
            os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 129, err
    assert err == b""  # no traceback, no "Exception ignored" at exit
    pids = [int((probe.folder / f"{n}.started").read_text()) for n in "ab"]
    assert_killed_and_recorded(out, ["job_0", "job_1"], pids)


def test_a_run_whose_output_reader_left_goes_on_and_records_every_job(
    runs: Runs, probe: Probe
) -> None:
    # `gpuherd run jobs.txt | head -1`: once head has exited, every line meets EPIPE. The run
    # must neither die nor leave its jobs untracked: they finish and their ends are recorded.
    out = runs.root / "out"
    jobs = jobs_file(runs, probe, "abc", wait="go")
    run = runs.start("--fake-gpus", "2", "--output-dir", str(out), str(jobs))
    run.expect_line("[")  # the first line, as `head -1` would take it
    assert run.proc.stdout is not None
    run.proc.stdout.close()
    run.proc.stdout = None  # so that finish() reads nothing more from it
    wait_for(lambda: probe.started("a") and probe.started("b"), what="two jobs to start")
    probe.touch("go")
    run.close_stdin()
    started = time.monotonic()
    status = run.proc.wait(timeout=30)
    assert run.proc.stderr is not None
    err = run.proc.stderr.read()
    assert status == 0, (err, time.monotonic() - started)
    assert err == b""
    assert sorted(probe.by_name()) == ["a", "b", "c"]
    for n in range(3):
        assert (out / f"job_{n}" / "SUCCESS").exists()
        assert job_info(out / f"job_{n}")["ended_at"] is not None


def test_under_nohup_a_sighup_is_ignored_and_the_jobs_finish(runs: Runs, probe: Probe) -> None:
    out = runs.root / "out"
    jobs = jobs_file(runs, probe, "ab", wait="go")
    run = subprocess.Popen(
        ["nohup", GPUHERD_BIN, "run", "--fake-gpus", "2", "--output-dir", str(out), str(jobs)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=runs.cwd,
        env=runs.env,
        start_new_session=True,
    )
    assert run.stdout is not None
    buffer, lines = bytearray(), []
    try:
        wait_for(lambda: probe.started("a") and probe.started("b"), what="both jobs to start")
        run.send_signal(signal.SIGHUP)
        # A Ctrl-C after it: its line comes once the hangup was dealt with (signals arrive in
        # order), so the hangup had its chance to kill the jobs before they are let go.
        run.send_signal(signal.SIGINT)
        while not lines or not lines[-1].startswith("interrupted"):
            lines.append(read_line(run.stdout.fileno(), buffer).decode())
        probe.touch("go")
        rest, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=10)
    assert run.returncode == 130, (lines, rest, err)
    assert not any(line.startswith("hung up") for line in lines), lines
    assert sorted(probe.by_name()) == ["a", "b"]
    assert all((out / f"job_{n}" / "SUCCESS").exists() for n in (0, 1))


def test_ctrl_c_with_no_job_running_says_only_that_nothing_new_starts(
    runs: Runs, probe: Probe
) -> None:
    # It said "waiting for 0 running jobs to finish (Ctrl-C again kills them)".
    run = runs.start("--fake-gpus", "1", "--output-dir", str(runs.root / "out"))
    run.write(probe.cmd("a") + "\n")  # its input stays open: the run waits for more
    run.expect_line("[0] succeeded")
    run.proc.send_signal(signal.SIGINT)
    assert run.expect_line("interrupted") == "interrupted: starting nothing new"
    status, rest, err = run.finish()
    assert status == 130, rest + err
    assert "Traceback" not in err


def test_a_sigterm_is_told_what_a_second_one_does(runs: Runs) -> None:
    # The first SIGTERM said "Ctrl-C again kills it": a SIGTERM does it too.
    run = runs.start("--fake-gpus", "1", "--output-dir", str(runs.root / "out"))
    run.write("sleep 30\n")
    run.expect_line("[0] started")
    run.proc.send_signal(signal.SIGTERM)
    assert run.expect_line("interrupted") == (
        "interrupted: starting nothing new; waiting for 1 running job to finish (a second "
        "Ctrl-C or SIGTERM kills it)"
    )
    run.proc.send_signal(signal.SIGTERM)
    status, rest, err = run.finish()
    assert status == 130 and "[0] killed" in rest, rest + err


def test_a_sigterm_while_a_long_input_is_read_stops_the_run(runs: Runs) -> None:
    """Each line read woke the run's loop through its wake-up pipe, which asyncio also uses to
    learn which signal came: with 100,000 lines read while the loop started jobs the pipe was
    full, the signal's byte was dropped (`Exception ignored when trying to write to the signal
    wakeup fd: ... BlockingIOError`), and the run went on as if never asked to stop."""
    out, jobs = runs.root / "out", runs.root / "jobs.txt"
    jobs.write_text("true\n" * 100_000)
    words = ("--gpus-per-job", "0", "--max-parallel", "2", "-q", "--output-dir", str(out))
    run = runs.start(*words, str(jobs))
    wait_for(lambda: out.is_dir() and len(os.listdir(out)) >= 5, 60, "jobs to be started")
    run.proc.send_signal(signal.SIGTERM)
    status, _, err = run.finish(timeout=60)
    assert status == 130 and "Traceback" not in err and "Exception" not in err, err
    assert len(os.listdir(out)) < 50_000  # stopped midway, not once every job had run
