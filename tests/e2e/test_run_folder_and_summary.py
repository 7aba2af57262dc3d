"""`gpuherd run`: one run at a time in an output folder, and a summary that counts every job.

Two runs into one --output-dir at once wrote into each other's job folders (one stdout.log
mixing both, one run's job.json, the other's failure recorded nowhere): the second is now
refused before it starts anything. A job that failed and waited for a retry when the run
was interrupted was counted nowhere. The jobs of a piped input's lines before a bad line
ran or not depending on how fast the bad line came after them.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import Probe, Runs, job_info, wait_for
from waits import kill_pinned, pin


def jobs_file(runs: Runs, name: str, *lines: str) -> Path:
    jobs = runs.root / name
    jobs.write_text("".join(line + "\n" for line in lines))
    return jobs


def assert_refused(proc: subprocess.CompletedProcess[str], out: Path, pid: int) -> None:
    """One line naming the folder, the run that holds it and what to do; nothing else."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"gpuherd: error: --output-dir {out} is in use by another gpuherd run (pid {pid}): "
        "give another --output-dir, or wait until that run has ended"
    ]


@pytest.mark.parametrize(
    "options",
    [
        pytest.param([], id="plain"),
        pytest.param(["--keep-state"], id="keep-state"),
        pytest.param(["--order", "longest-first"], id="longest-first"),  # reads the folder
    ],
)
def test_a_second_run_into_a_folder_in_use_is_refused_and_a_later_one_runs_as_before(
    runs: Runs, probe: Probe, options: list[str]
) -> None:
    out = runs.root / "same"
    first_cmd, second_cmd = probe.cmd("first", wait="go"), probe.cmd("second", exit=3)
    first = runs.start("--fake-gpus", "1", "--output-dir", str(out), *options, "-")
    first.write(first_cmd + "\n")
    first.close_stdin()
    wait_for(lambda: probe.started("first"), what="the first run's job to start")
    second = jobs_file(runs, "second.txt", second_cmd)

    refused = runs.run("--fake-gpus", "1", "--output-dir", str(out), *options, str(second))
    assert_refused(refused, out, first.proc.pid)
    assert not probe.started("second")

    probe.touch("go")
    status, rest, err = first.finish()
    # (--order longest-first with no earlier run times streams the pipe, saying nothing there)
    assert (status, err) == (0, ""), rest + err
    assert (out / "job_0" / "SUCCESS").exists() and not (out / "job_0" / "FAILURE").exists()
    assert job_info(out / "job_0")["command"] == first_cmd
    kept = ["herd.db"] if "--keep-state" in options else []
    assert sorted(p.name for p in out.iterdir()) == [*kept, "job_0"]  # no lock file left

    # Once the first run has ended, a rerun into the folder replaces its job's folder.
    again = runs.run("--fake-gpus", "1", "--output-dir", str(out), *options, str(second))
    assert again.returncode == 1, again.stdout + again.stderr  # its job exits 3
    assert again.stdout.splitlines()[-1] == f"0 succeeded, 1 failed; logs in {out}"
    assert probe.by_name()["second"]["exit"] == 3
    assert job_info(out / "job_0")["command"] == second_cmd
    assert (out / "job_0" / "FAILURE").exists() and not (out / "job_0" / "SUCCESS").exists()
    assert sorted(p.name for p in out.iterdir()) == [*kept, "job_0"]


def test_a_folder_held_by_a_run_killed_with_sigkill_is_free_again(runs: Runs, probe: Probe) -> None:
    out = runs.root / "out"
    first = runs.start("--fake-gpus", "1", "--output-dir", str(out), "-")
    first.write(probe.cmd("first", wait="never") + "\n")
    wait_for(lambda: probe.started("first"), what="the first run's job to start")
    second = jobs_file(runs, "second.txt", probe.cmd("second"))
    assert_refused(
        runs.run("--fake-gpus", "1", "--output-dir", str(out), str(second)), out, first.proc.pid
    )

    watchdog = first.watchdog()  # (it holds the lock until the killed run's jobs are gone)
    first.proc.kill()  # no cleanup: the kernel alone releases the lock
    first.proc.wait(timeout=10)
    orphan = pin(int((probe.folder / "first.started").read_text()))
    if orphan is not None:  # (the watchdog may have ended it: then its number is not its own)
        kill_pinned(orphan, group=False)
        os.close(orphan)
    watchdog.wait(timeout=30)
    again = runs.run("--fake-gpus", "1", "--output-dir", str(out), str(second))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "second" in probe.by_name()
    assert sorted(p.name for p in out.iterdir()) == ["job_0"]  # the dead run's lock file went


def test_a_job_failing_after_ctrl_c_with_retries_left_is_counted_failed_not_queued_again(
    runs: Runs, probe: Probe
) -> None:
    # QA's repro: the failing job was said to be "queued again" and then counted nowhere.
    out = runs.root / "out"
    jobs = jobs_file(
        runs,
        "jobs.txt",
        probe.cmd("a", wait="a-go", exit=1),
        probe.cmd("b", wait="b-go"),
        probe.cmd("c"),
    )
    run = runs.start("--fake-gpus", "2", "--retries", "2", "--output-dir", str(out), str(jobs))
    wait_for(lambda: probe.started("a") and probe.started("b"), what="two jobs to start")
    run.proc.send_signal(signal.SIGINT)
    run.expect_line("interrupted")
    probe.touch("a-go")
    line = run.expect_line("[0] ")
    assert line.startswith("[0] failed (exit 1; not retried: the run stopped) after "), line
    assert line.endswith(f"see {out}/job_0/stderr.log"), line
    probe.touch("b-go")
    status, rest, err = run.finish()
    assert status == 130, rest + err  # interrupted, as the README says
    assert "queued again" not in "".join(run.lines) + rest
    assert rest.splitlines()[-1] == f"1 succeeded, 1 failed, 1 not run; logs in {out}"
    assert [r["name"] for r in probe.records()] == ["a", "b"]  # a once: no retry ran
    assert (out / "job_0" / "FAILURE").exists()
    assert job_info(out / "job_0")["exit_code"] == 1


def test_a_job_stopped_while_it_waits_for_its_retry_delay_says_only_why_it_is_not_retried(
    runs: Runs,
) -> None:
    # It said both `runs again in 20s (--retry-delay)` and `not retried: the run stopped`.
    out = runs.root / "out"
    jobs = jobs_file(runs, "jobs.txt", "exit 1")
    options = ["--retries", "1", "--retry-delay", "20s", "--output-dir", str(out), str(jobs)]
    run = runs.start("--fake-gpus", "1", *options)
    queued = run.expect_line("[0] failed")
    assert queued == "[0] failed (exit 1; runs again in 20s (--retry-delay)); queued again"
    run.proc.send_signal(signal.SIGINT)
    run.expect_line("interrupted")
    line = run.expect_line("[0] ")
    assert line.startswith("[0] failed (exit 1; not retried: the run stopped) after "), line
    status, rest, err = run.finish()
    assert status == 130, rest + err
    assert rest.splitlines()[-1] == f"0 succeeded, 1 failed; logs in {out}"


def test_a_single_job_failing_after_ctrl_c_is_in_the_summary(runs: Runs, probe: Probe) -> None:
    out = runs.root / "out"
    jobs = jobs_file(runs, "jobs.txt", probe.cmd("a", wait="a-go", exit=1))
    run = runs.start("--fake-gpus", "2", "--retries", "2", "--output-dir", str(out), str(jobs))
    wait_for(lambda: probe.started("a"), what="the job to start")
    run.proc.send_signal(signal.SIGINT)
    run.expect_line("interrupted")
    probe.touch("a-go")
    status, rest, err = run.finish()
    assert status == 130, rest + err
    assert rest.splitlines()[-1] == f"0 succeeded, 1 failed; logs in {out}"


def test_a_job_queued_again_before_ctrl_c_that_never_restarts_is_counted_failed(
    runs: Runs, probe: Probe
) -> None:
    # A CUDA out-of-memory failure asks for more memory (3 GiB) than the GPU has free while
    # the other job (2 GiB of 4) runs: queued again, it waits, and the interrupt stops it.
    out = runs.root / "out"
    started = probe.folder / "b.started"
    oom = (
        f"for i in $(seq 1500); do [ -e {started} ] && break; sleep 0.02; done; "
        "echo 'CUDA out of memory' >&2; exit 1"
    )
    jobs = jobs_file(runs, "jobs.txt", oom, probe.cmd("b", wait="b-go"))
    run = runs.start(
        "--fake-gpus", "1x4GiB", "--mem", "2GiB", "--oom-retry", "--output-dir", str(out), str(jobs)
    )
    assert run.expect_line("[0] failed").startswith("[0] failed (cuda_oom")
    assert "queued again" in run.lines[-1]  # true then: the run was not stopping
    run.proc.send_signal(signal.SIGINT)
    run.expect_line("interrupted")
    probe.touch("b-go")
    status, rest, err = run.finish()
    assert status == 130, rest + err
    lines = rest.splitlines()
    ended = [line for line in lines if line.startswith("[0] failed")]
    assert len(ended) == 1 and "not retried: the run stopped" in ended[0], lines
    assert lines[-1] == f"1 succeeded, 1 failed; logs in {out}"


def test_piped_lines_before_a_bad_line_run_and_nothing_after_it_is_read(
    runs: Runs, probe: Probe
) -> None:
    # Everything arrives at once: the jobs before the bad line were refused with it.
    out = runs.root / "out"
    run = runs.start("--fake-gpus", "2", "--output-dir", str(out))
    text = f"{probe.cmd('one')}\n{probe.cmd('two')}\n".encode() + b"echo \xff\n"
    assert run.proc.stdin is not None
    run.proc.stdin.write(text + f"{probe.cmd('four')}\n".encode())
    status, rest, err = run.finish()
    assert status == 1, rest + err
    lines = rest.splitlines()
    assert "input stopped: standard input is not UTF-8 text (byte 0xff at line 3)" in rest, lines
    assert lines[-1] == f"2 succeeded, 0 failed; logs in {out}"
    assert sorted(probe.by_name()) == ["one", "two"]
    assert not probe.started("four")
    assert sorted(p.name for p in out.iterdir()) == ["job_0", "job_1"]
