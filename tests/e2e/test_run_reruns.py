"""`gpuherd run` run again into the same --output-dir, as users of GPU Task Scheduler
(`force_rerun=False`) and simple_gpu_scheduler do after a Ctrl-C or a partly failed run:
`--skip-succeeded` reruns only what did not succeed. And what the user trial found around it:
--order longest-first on a stream, a yielder's empty command, a very long command, a job file
saved in another encoding than UTF-8.

Jobs are real processes that append a line to `ran.txt` in the run's folder: what ran is read
there, not from what the run says.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from conftest import Runs, wait_for


def ran(runs: Runs) -> list[str]:
    record = runs.cwd / "ran.txt"
    return record.read_text().split() if record.exists() else []


def job(tag: str, then: str = "") -> str:
    """A job that records it ran (`tag` in ran.txt), then does `then`."""
    return f"echo {tag} >> ran.txt" + (f"; {then}" if then else "")


def write_jobs(runs: Runs, *lines: str, name: str = "jobs.txt") -> Path:
    jobs = runs.root / name
    jobs.write_text("".join(line + "\n" for line in lines))
    return jobs


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of a job folder: its bytes and its modification time (ns)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# ---- 1. --skip-succeeded --------------------------------------------------------------------


def test_a_rerun_runs_only_the_failed_job_and_leaves_the_succeeded_folders_as_they_were(
    runs: Runs,
) -> None:
    out = runs.root / "out"
    jobs = write_jobs(runs, job("a"), job("b", "test -e fixed"), job("c"))
    first = runs.run("--fake-gpus", "2", "--output-dir", str(out), str(jobs))
    assert first.returncode == 1, first.stdout + first.stderr
    assert sorted(ran(runs)) == ["a", "b", "c"]
    kept = {n: snapshot(out / f"job_{n}") for n in (0, 2)}

    (runs.cwd / "fixed").touch()
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--skip-succeeded", str(jobs))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(ran(runs)) == ["a", "b", "b", "c"]  # b alone ran again
    lines = proc.stdout.splitlines()
    assert f"[0] skipped: succeeded before ({out}/job_0)" in lines
    assert f"[2] skipped: succeeded before ({out}/job_2)" in lines
    assert not any(line.startswith(("[0] started", "[2] started")) for line in lines), lines
    assert lines[-1] == f"1 succeeded, 0 failed, 2 skipped; logs in {out}"
    assert {n: snapshot(out / f"job_{n}") for n in (0, 2)} == kept  # not touched
    assert (out / "job_1" / "SUCCESS").exists() and not (out / "job_1" / "FAILURE").exists()
    # A rerun clears job_1 (its job.json named job 2; b is job 1 now): nothing set aside, as
    # a daemon's job sets aside another's ended run in its folder (unknown_ended.set_aside).
    assert not (out / "job_1" / "previous-runs").exists()


def test_only_a_success_of_the_same_command_is_skipped(runs: Runs) -> None:
    out = runs.root / "out"
    jobs = write_jobs(runs, job("a"), job("b"), job("c"), job("d"))
    assert runs.run("--fake-gpus", "2", "--output-dir", str(out), str(jobs)).returncode == 0
    (out / "job_1" / "SUCCESS").unlink()  # no marker: a run killed before it ended
    (out / "job_2" / "SUCCESS").rename(out / "job_2" / "FAILURE")
    jobs = write_jobs(runs, job("a"), job("b"), job("c"), job("d2"))  # line 3 changed
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--skip-succeeded", str(jobs))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert sorted(ran(runs)) == sorted(["a", "b", "c", "d", "b", "c"])
    assert proc.stdout.splitlines()[-1] == (
        f"2 succeeded, 0 failed, 1 skipped, 1 not run; logs in {out}"
    )
    # d's success is kept, not overwritten by d2 (tests/integration/test_skip_moved_lines.py)
    assert "d2" not in (out / "job_3" / "job.json").read_text()


def test_the_jobs_not_run_after_a_ctrl_c_run_on_the_rerun(runs: Runs) -> None:
    out = runs.root / "out"
    jobs = write_jobs(runs, job("a", "sleep 1"), job("b"), job("c"))
    run = runs.start("--fake-gpus", "1", "--output-dir", str(out), str(jobs))
    run.expect_line("[0] started")
    run.proc.send_signal(signal.SIGINT)
    status, rest, _ = run.finish()
    # (its whole output on failure: a CI run once counted 1 not run here, not reproduced)
    assert status == 130 and rest.splitlines()[-1].endswith("2 not run; logs in " + str(out)), rest
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--skip-succeeded", str(jobs))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ran(runs) == ["a", "b", "c"]
    assert proc.stdout.splitlines()[-1] == f"2 succeeded, 0 failed, 1 skipped; logs in {out}"


def test_a_line_that_comes_after_a_ctrl_c_is_counted_as_not_run(runs: Runs) -> None:
    # After a Ctrl-C the run awaits no more input, but its pending get still took the next
    # line from the queue, and that job was counted nowhere (a CI run said "1 not run" of 2).
    go = runs.root / "go"
    run = runs.start("--fake-gpus", "1", "--output-dir", str(runs.root / "out"))
    run.write(job("a", f"while [ ! -e {go} ]; do sleep 0.02; done") + "\n")
    run.expect_line("[0] started")
    run.proc.send_signal(signal.SIGINT)
    run.expect_line("interrupted: starting nothing new")
    run.write(job("b") + "\n")  # read while job a still runs: not run, and said so
    wait_for(lambda: run.unread() == 0, what="the line to be read")
    go.touch()  # job a ends, and with it the run
    status, rest, err = run.finish()
    assert status == 130, rest + err
    assert rest.splitlines()[-1].startswith("1 succeeded, 0 failed, 1 not run; logs in "), rest
    assert ran(runs) == ["a"]


def test_stdin_a_yielder_a_prefix_retries_and_longest_first_skip_the_same_way(
    runs: Runs,
) -> None:
    # A job that succeeded at its second attempt has SUCCESS in its folder: skipped too.
    out = runs.root / "out"
    lines = [job("a"), job("b", 'test "$GPUHERD_ATTEMPT" = 2')]
    common = ["--fake-gpus", "2", "--output-dir", str(out), "--prefix", "run-"]
    first = runs.run(*common, "--retries", "1", input="\n".join(lines) + "\n")
    assert first.returncode == 0, first.stdout + first.stderr
    assert sorted(ran(runs)) == ["a", "b", "b"]
    for extra in (["--order", "longest-first"], ["-q"], []):
        proc = runs.run(*common, *extra, "--skip-succeeded", input="\n".join(lines) + "\n")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.splitlines()[-1] == f"0 succeeded, 0 failed, 2 skipped; logs in {out}"
        assert ("[1] skipped: succeeded before" in proc.stdout) == ("-q" not in extra)
    assert sorted(ran(runs)) == ["a", "b", "b"]

    # A yielded job is its position; its env is part of what it ran.
    (runs.cwd / "ran.txt").unlink()
    maker = runs.root / "make_jobs.py"
    maker.write_text(
        "import os\n\ndef yielder():\n"
        "    yield {'command': 'echo x$LR >> ran.txt', 'env': {'LR': os.environ['LR']}}\n"
        "    yield 'echo y >> ran.txt'\n"
    )
    yielder = ["--fake-gpus", "2", "--output-dir", str(runs.root / "y"), "--yielder", str(maker)]
    runs.env["LR"] = "1"
    assert runs.run(*yielder).returncode == 0
    assert runs.run(*yielder, "--skip-succeeded").returncode == 0
    runs.env["LR"] = "2"  # another env for job 0: not run over the success of LR=1
    proc = runs.run(*yielder, "--skip-succeeded")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith(
        f"[0] not run: {runs.root}/y/job_0 holds a run of this command with another env that "
        'succeeded ({"LR": "1"}), kept: '
    )
    assert sorted(ran(runs)) == ["x1", "y"]


def test_folders_of_an_earlier_longer_run_are_kept_and_named(runs: Runs) -> None:
    out = runs.root / "out"
    jobs = write_jobs(runs, job("a"), job("b"), job("c"))
    assert runs.run("--fake-gpus", "2", "--output-dir", str(out), str(jobs)).returncode == 0
    jobs = write_jobs(runs, job("a"))
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "--skip-succeeded", str(jobs))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-2:] == [
        f"{out} also holds job_1, job_2 (from an earlier run of more jobs than this input's "
        "1 job): kept as they were; remove them if they are not wanted",
        f"0 succeeded, 0 failed, 1 skipped; logs in {out}",
    ]
    assert (out / "job_2" / "SUCCESS").exists()
    # An input of no job runs nothing, and says only that (its folders are no leftovers of it).
    no_job = runs.root / "no_job.py"
    no_job.write_text("def yielder():\n    return iter(())\n")
    for given, said in (
        ([str(write_jobs(runs, "# none yet"))], "the input holds no command"),
        (["--yielder", str(no_job)], "the yielder yielded no job"),
    ):
        proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), *given)
        assert (proc.returncode, proc.stdout) == (0, f"{said}: nothing to run\n"), proc.stderr


def test_skip_succeeded_without_an_output_dir_is_refused(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "1", "--skip-succeeded", input="true\n")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "gpuherd: error: --skip-succeeded skips what succeeded in --output-dir: give the earlier "
        "run's --output-dir (without it, each run gets a new folder) (see gpuherd run --help)"
    ]
    assert not (runs.cwd / "herd_runs").exists()


# ---- 2. --order longest-first on a stream --------------------------------------------------


def ctrl_c_while_read_whole(runs: Runs, *args: str) -> tuple[int, str, str]:
    """`gpuherd run --order longest-first ARGS` (with earlier run times) on a stream of three
    lines, Ctrl-C once they are read: before any job starts. Its status, stdout, stderr."""
    earlier = runs.root / "earlier"
    first = runs.run("--fake-gpus", "1", "-q", "--output-dir", str(earlier), input=job("x") + "\n")
    assert first.returncode == 0, first.stdout + first.stderr
    longest = ["--order", "longest-first", "--times-from", str(earlier)]
    run = runs.start("--fake-gpus", "2", *longest, *args)
    run.write("".join(job(tag) + "\n" for tag in "abc"))
    wait_for(lambda: run.unread() == 0, what="the lines to be read")
    run.proc.send_signal(signal.SIGINT)
    return run.finish()


def test_longest_first_on_a_stream_says_it_reads_it_whole_and_counts_its_lines_on_ctrl_c(
    runs: Runs,
) -> None:
    # `tail -f -n 0 q | gpuherd run --order longest-first`: it started nothing, said nothing,
    # and its Ctrl-C summary said `0 succeeded, 0 failed`, the lines read left out. (It holds
    # the stream only with earlier run times to order by: test_run_order_stream.py.)
    out = runs.root / "out"
    status, rest, err = ctrl_c_while_read_whole(runs, "--output-dir", str(out))
    assert status == 130, rest + err
    assert rest.splitlines()[-1] == f"0 succeeded, 0 failed, 3 not run; logs in {out}"
    assert err.splitlines() == [
        "--order longest-first: reading the whole input before the first job starts (until it "
        "is closed; Ctrl-C stops the run)"
    ]
    assert ran(runs) == ["x"]  # (the earlier run's job alone)


def test_a_ctrl_c_before_any_job_names_no_new_folder_it_removes(runs: Runs) -> None:
    # Without --output-dir, the summary said `logs in .../herd_runs/<timestamp>`, a folder
    # removed as the run ended (nothing in it): the user looked there in vain.
    status, rest, err = ctrl_c_while_read_whole(runs)
    assert status == 130, rest + err
    assert rest.splitlines()[-1] == "0 succeeded, 0 failed, 3 not run", rest
    assert not (runs.cwd / "herd_runs").exists()


# ---- 3. a yielder's empty command ----------------------------------------------------------


@pytest.mark.parametrize("empty", ["''", "'  '", "'\\t'"], ids=["empty", "blanks", "tab"])
def test_a_yielded_empty_command_gets_advice_for_the_yielder(runs: Runs, empty: str) -> None:
    # One of blanks alone got submit's advice, `[1] could not run:   : the command is empty:
    # give it after -- or as one string`.
    maker = runs.root / "make_jobs.py"
    maker.write_text(f"def yielder():\n    yield 'echo a >> ran.txt'\n    yield {empty}\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", str(maker))
    assert proc.returncode == 1
    assert (
        "[1] could not run: the command is empty: yield the command to run (a string, or a "
        "dict's 'command')"
    ) in proc.stdout.splitlines(), proc.stdout
    assert ran(runs) == ["a"]


# ---- 4. a very long command ----------------------------------------------------------------


def test_a_very_long_command_is_shown_cut_naming_its_job_json(runs: Runs) -> None:
    command = "echo long >> ran.txt; : " + "x" * 100_000
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), input=command + "\n")
    assert proc.returncode == 0, proc.stderr
    started = [line for line in proc.stdout.splitlines() if line.startswith("[0] started")]
    assert started == [
        f"[0] started on GPU 0: {command[:999]}… (100,024 characters, whole in job_0/job.json)"
    ]
    assert command in (out / "job_0" / "job.json").read_text()


# ---- 5. a job file that is not UTF-8 -------------------------------------------------------


def test_a_utf16_or_latin1_job_file_is_refused_saying_to_save_it_as_utf8(runs: Runs) -> None:
    utf16 = runs.root / "ps.txt"
    utf16.write_text("echo a >> ran.txt\n", encoding="utf-16")  # as PowerShell's > writes
    latin1 = runs.root / "latin1.txt"
    latin1.write_bytes(b"echo a >> ran.txt\necho caf\xe9 >> ran.txt\n")
    said = {}
    for jobs in (utf16, latin1):
        proc = runs.run("--fake-gpus", "1", "--output-dir", str(runs.root / "out"), str(jobs))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        said[jobs.name] = proc.stderr.splitlines()
    assert said == {
        "ps.txt": [
            f"gpuherd: error: {utf16} is UTF-16 text (as Windows PowerShell's > writes): save it "
            "as UTF-8 (iconv -f UTF-16 -t UTF-8; in PowerShell, Out-File -Encoding utf8)"
        ],
        "latin1.txt": [
            f"gpuherd: error: {latin1} is not UTF-8 text (byte 0xe9 at line 2): if it holds "
            "commands, save it as UTF-8 (from Latin-1: iconv -f LATIN1 -t UTF-8)"
        ],
    }
    assert ran(runs) == []
