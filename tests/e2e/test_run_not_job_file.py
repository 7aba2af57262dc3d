"""What `gpuherd run` and `submit --file` do with what is no job file, and `run`'s --grace and
--retry-delay.

- A script given as the job file (`run job.sh`, a `#!` first line, `#SBATCH` lines, or a
  `.py`) ran each of its lines as a job of its own, in parallel, its `cd` lost, "3
  succeeded", exit 0; `submit --file job.sh` queued 3 jobs. Now refused (exit 2, nothing
  run), naming the ways that run it, which are checked here to work; standard input is taken
  as it is (the way to run its lines as jobs all the same).
- A command given instead of a file said `No such option '--lr'` (the command's own option),
  `give one job file (got python3, train.py)` or `cannot read echo hi`.
- `run` had no --grace: a job that ignored SIGTERM outlived its --timeout by 10 s, unsaid;
  nor --retry-delay.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import Herd, Runs

SCRIPT = '#!/bin/bash\n#SBATCH --gres=gpu:1\nmkdir -p out && cd out\necho "in $(pwd)" > where.txt\n'


def refused(proc_stderr: str, returncode: int) -> str:
    """The one error line of a usage error (exit 2)."""
    assert returncode == 2, proc_stderr
    lines = proc_stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error: "), proc_stderr
    return lines[0].removeprefix("gpuherd: error: ")


@pytest.mark.parametrize(
    ("name", "text", "reason", "runs_it"),
    [
        ("job.sh", SCRIPT, "it starts with #!", "./job.sh"),
        ("bom.sh", "\ufeff" + SCRIPT, "it starts with #!", "./bom.sh"),
        ("slurm.txt", "#SBATCH --time=1:00:00\necho one\necho two\n", "it has #SBATCH lines", ""),
        ("train.py", "import sys\nprint(sys.argv)\n", "its name ends in .py", "python3 train.py"),
    ],
    ids=["shebang", "bom-shebang", "sbatch", "python"],
)
def test_run_refuses_a_script_given_as_its_job_file_and_runs_nothing(
    runs: Runs, name: str, text: str, reason: str, runs_it: str
) -> None:
    script = runs.cwd / name
    script.write_text(text)
    if name.endswith(".sh"):
        script.chmod(0o755)
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), name)
    said = refused(proc.stderr, proc.returncode)
    assert proc.stdout == ""
    run = runs_it or f"sh {name}"  # (not executable, no #!: as its shell would run it)
    quoted, outq = shlex.quote(run), shlex.quote(str(out))
    assert said == (
        f"{name} looks like a script ({reason}), not a job file of one command a line, each a job"
        f" of its own: to run it as one job, echo {quoted} | gpuherd run --fake-gpus 2 "
        f"--output-dir {outq}, or with the daemon gpuherd submit --wait -- {run}; to run its "
        f"lines as jobs all the same, give it on standard input: gpuherd run --fake-gpus 2 "
        f"--output-dir {outq} - < {shlex.quote(name)} (see gpuherd run --help)"
    )
    assert not out.exists() and not (runs.cwd / "out").exists()  # nothing ran
    # gpu-hog's --job_file is the same file.
    hog = runs.run("--job_file", name, "--fake-gpus", "2", "--output-dir", str(out))
    assert f"{name} looks like a script ({reason})" in refused(hog.stderr, hog.returncode)


def test_the_ways_the_refusal_names_run_the_script(runs: Runs) -> None:
    (runs.cwd / "job.sh").write_text(SCRIPT)
    (runs.cwd / "job.sh").chmod(0o755)
    # As one job: its `cd` holds for the lines after it.
    one = runs.run("--fake-gpus", "2", "--output-dir", "o1", input="./job.sh\n")
    assert one.returncode == 0, one.stdout + one.stderr
    assert "1 succeeded, 0 failed" in one.stdout
    assert (runs.cwd / "out" / "where.txt").read_text() == f"in {runs.cwd / 'out'}\n"
    # Its lines as jobs, on standard input: as before, nothing refused.
    lines = runs.run("--fake-gpus", "2", "--output-dir", "o2", "-", input=SCRIPT)
    assert lines.returncode == 0, lines.stdout + lines.stderr
    assert "2 succeeded, 0 failed" in lines.stdout


def test_submit_file_refuses_a_script_and_the_ways_it_names_work(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    work = tmp_path / "work"
    work.mkdir()
    (work / "job.sh").write_text(SCRIPT)
    (work / "job.sh").chmod(0o755)
    before = herd.json("ls", "--all")
    proc = herd.cli("submit", "--gpus", "1", "--file", "job.sh", check=False, cwd=work)
    assert refused(proc.stderr, proc.returncode) == (
        "job.sh looks like a script (it starts with #!), not a job file of one command a line, "
        "each a job of its own: to run it as one job, gpuherd submit --gpus 1 -- ./job.sh "
        "(--wait waits for its end); to run its lines as jobs all the same, give it on standard"
        " input: gpuherd submit --gpus 1 --file - < job.sh (see gpuherd submit --help)"
    )
    waited = herd.cli("submit", "--wait", "--file=job.sh", check=False, cwd=work)
    said = refused(waited.stderr, waited.returncode)
    assert "to run it as one job, gpuherd submit --wait -- ./job.sh; " in said
    assert herd.json("ls", "--all") == before  # nothing queued
    done = herd.cli("submit", "--wait", "--", "./job.sh", cwd=work)
    assert done.returncode == 0
    assert (work / "out" / "where.txt").read_text() == f"in {work / 'out'}\n"
    lines = herd.cli("submit", "-q", "--file", "-", input=SCRIPT, cwd=work)
    assert len(lines.stdout.split()) == 2  # its two commands, each a job


COMMAND_GIVEN = [
    (
        ["python3", "train.py", "--lr", "0.1"],
        "(python3 is no file here): to run one command, echo 'python3 train.py --lr 0.1' | "
        "gpuherd run --fake-gpus 1, or with the daemon gpuherd submit --wait -- python3 "
        "train.py --lr 0.1",
    ),
    (
        ["--", "python3", "train.py"],
        "(python3 is no file here): to run one command, echo 'python3 train.py' | gpuherd run "
        "--fake-gpus 1, or with the daemon gpuherd submit --wait -- python3 train.py",
    ),
    (
        ["echo hi"],
        "('echo hi' is no file here): to run one command, echo 'echo hi' | gpuherd run "
        "--fake-gpus 1, or with the daemon gpuherd submit --wait -- 'echo hi'",
    ),
]


@pytest.mark.parametrize(("words", "said"), COMMAND_GIVEN, ids=["option", "dashes", "quoted"])
def test_a_command_given_to_run_says_run_takes_a_job_file_and_how_to_run_one(
    runs: Runs, words: list[str], said: str
) -> None:
    proc = runs.run("--fake-gpus", "1", *words)
    assert refused(proc.stderr, proc.returncode) == (
        f"gpuherd run takes a job file (one command a line), not a command {said} (see gpuherd "
        "run --help)"
    )
    assert not (runs.cwd / "herd_runs").exists()


def test_the_way_to_run_one_command_works(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "1", "--output-dir", "o", input="echo hi\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (runs.cwd / "o" / "job_0" / "stdout.log").read_text() == "hi\n"


def test_a_job_file_with_a_mistake_after_it_is_said_as_before(runs: Runs) -> None:
    """Not taken for a command: a job file there, or a name that may be one's (a typo)."""
    (runs.cwd / "jobs.txt").write_text("true\n")
    option = runs.run("--fake-gpus", "1", "jobs.txt", "--lr", "0.1")
    assert refused(option.stderr, option.returncode).startswith("No such option '--lr'.")
    two = runs.run("--fake-gpus", "1", "jobs.txt", "nosuch.txt")
    assert refused(two.stderr, two.returncode).startswith(
        "give one job file (got jobs.txt, nosuch.txt)"
    )
    for name in ("nosuch.txt", "nosuch.py"):  # (no script: a file not there)
        missing = runs.run("--fake-gpus", "1", name)
        assert missing.returncode == 1
        assert missing.stderr.startswith(f"gpuherd: error: cannot read {name}: No such file")


def test_grace_is_the_time_a_stopped_job_gets_between_sigterm_and_sigkill(runs: Runs) -> None:
    (runs.cwd / "j.txt").write_text('trap "" TERM; echo stubborn; sleep 30\n')
    proc = runs.run(
        "--fake-gpus", "1", "--timeout", "1s", "--grace", "1s", "--output-dir", "o", "j.txt"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    ended = re.search(r"\[0\] failed \(timeout\) after ([\d.]+)s", proc.stdout)
    assert ended is not None, proc.stdout
    assert 1.5 <= float(ended.group(1)) < 5  # 1 s of timeout, 1 s of grace (was 10 s)


def test_retry_delay_waits_before_a_failed_job_runs_again(runs: Runs) -> None:
    (runs.cwd / "j.txt").write_text("date +%s.%N >> tries; exit 1\n")
    proc = runs.run(
        "--fake-gpus", "1", "--retries", "1", "--retry-delay", "2s", "--output-dir", "o", "j.txt"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    first, second = (float(line) for line in (runs.cwd / "tries").read_text().split())
    assert second - first >= 2.0
    alone = runs.run("--fake-gpus", "1", "--retry-delay", "2s", "j.txt")
    assert refused(alone.stderr, alone.returncode) == (
        "--retry-delay waits before a failed job runs again: give --retries N (or --oom-retry) "
        "with it (see gpuherd run --help)"
    )


def test_a_sweep_dry_run_names_grace_and_retry_delay_as_run_takes_them(runs: Runs) -> None:
    """The dry run's pipe into `run` lost them, and its line said `run` had none."""
    options = ["--retries", "2", "--retry-delay", "1m", "--grace", "30s"]
    proc = runs.gpuherd("sweep", "echo {x}", "-p", "x", "1", *options, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        "gpuherd: warning: the commands printed leave out --retries, --retry-delay, --grace: "
        "give gpuherd run --retries, --retry-delay, --grace"
    )
