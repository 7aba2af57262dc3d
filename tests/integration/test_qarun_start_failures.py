"""`gpuherd run` and jobs whose shell cannot start: a GPUHERD_SHELL that names no program is
refused once, before any job (each job failed with the same line, leaving a FAILURE folder
each); a job whose shell a yielder's env makes unrunnable fails with a line in the run's words
(no `starting job 3` for the run's [2]) that names no log it never had.
"""

from __future__ import annotations

import os

from conftest import Runs

SHELL_ADVICE = (
    "is not a program here: set it to a POSIX shell such as bash (or its path), or unset it "
    "for /bin/sh"
)


def test_a_shell_that_is_no_program_is_refused_before_any_job(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("true\ntrue\n")
    out = runs.root / "out"
    runs.env["GPUHERD_SHELL"] = "no-such-shell-here"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "jobs.txt")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"gpuherd: error: GPUHERD_SHELL=no-such-shell-here {SHELL_ADVICE}\n"
    assert not out.exists()


def test_a_job_that_could_not_start_is_named_by_its_number_and_no_missing_log(
    runs: Runs,
) -> None:
    not_a_program = runs.cwd / "not-a-program"  # executable, but no ELF and no #! line
    not_a_program.write_text("echo hi\n")
    os.chmod(not_a_program, 0o755)
    (runs.cwd / "make_jobs.py").write_text(
        "def yielder():\n"
        "    yield 'true'\n"
        "    yield 'true'\n"
        f"    yield {{'command': 'true', 'env': {{'GPUHERD_SHELL': '{not_a_program}'}}}}\n"
        "    yield {'command': 'true', 'env': {'GPUHERD_SHELL': '/no/such/shell'}}\n"
    )
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "--yielder", "make_jobs.py")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [line for line in proc.stdout.splitlines() if " failed (" in line]
    assert len(failed) == 2, proc.stdout
    assert failed[0].startswith(
        f"[2] failed (cannot start its shell {not_a_program}: Exec format error; set "
        "GPUHERD_SHELL to a POSIX shell such as bash (or its path), or unset it for /bin/sh) "
    ), failed
    assert failed[1].startswith(f"[3] failed (GPUHERD_SHELL=/no/such/shell {SHELL_ADVICE}) ")
    # Neither names the queue's id (job 3, job 4), nor a log to see: there is none.
    assert all("job 3" not in line and "job 4" not in line for line in failed), failed
    assert all(" see " not in line and line.endswith("s") for line in failed), failed
    assert not (out / "job_2" / "stderr.log").exists()
    assert proc.stdout.splitlines()[-1] == f"2 succeeded, 2 failed; logs in {out}"
