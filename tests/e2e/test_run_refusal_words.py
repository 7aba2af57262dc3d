"""What `gpuherd run` says of a job file it cannot read and of a job that could never run:
in its own options, with what to do.

- `run nosuch.txt` said only `cannot read nosuch.txt: No such file or directory`.
- A refusal's way out named `--gpus` (`give fewer gpus (--gpus)`), which in `run` gives the
  GPUs to use: a job's count is its --gpus-per-job.
- A --ram above the machine's memory said `give a smaller ram (--ram)`, and no size.
"""

from __future__ import annotations

from conftest import Runs
from gpuherd.core.units import format_size, format_size_down
from gpuherd.host_memory import host_memory_total


def test_a_missing_job_file_says_to_check_the_path_or_read_stdin(runs: Runs) -> None:
    proc = runs.run("--fake-gpus", "1", "nosuch.txt")
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert proc.stderr == (
        "gpuherd: error: cannot read nosuch.txt: No such file or directory: check the path, or "
        "give - to read the jobs from standard input\n"
    )
    piped = runs.run(
        "--fake-gpus", "1", "--output-dir", str(runs.root / "out"), "-", input="true\n"
    )
    assert piped.returncode == 0, piped.stderr  # the way out works as said


def test_a_refusal_names_gpus_per_job_not_gpus(runs: Runs) -> None:
    out = runs.root / "out"
    asked = ("--fake-gpus", "2x24GiB,2x80GiB", "--gpus-per-job", "3", "--mem", "40GiB")
    proc = runs.run(*asked, "--output-dir", str(out), "-", input="true\n")
    # Run-wide: refused before any job (it was once per job).
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout + proc.stderr
    assert proc.stderr == (
        "gpuherd: error: no job of this run could ever start: each asks for 3 GPUs with 40.0 "
        "GiB each but only 2 GPUs have that much: give fewer --gpus-per-job, at most 2, or a "
        "smaller --mem (see gpuherd run --help)\n"
    )
    # A job's own count, beside a run-wide --mem: refused alone, in the run's words.
    yielder = runs.root / "jobs.py"
    yielder.write_text('def yielder():\n    yield {"command": "true", "gpus": 3}\n')
    asked = ("--fake-gpus", "2x24GiB,2x80GiB", "--mem", "40GiB", "--yielder", str(yielder))
    proc = runs.run(*asked, "--output-dir", str(out))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[0] == (
        "[0] could not run: true: this job can never run: asks for 3 GPUs with 40.0 GiB each "
        "but only 2 GPUs have that much: give fewer gpus (--gpus-per-job), at most 2, or a "
        "smaller mem (--mem)"
    )
    # The way out works as said.
    fewer = ("--fake-gpus", "2x24GiB,2x80GiB", "--gpus-per-job", "2", "--mem", "40GiB")
    done = runs.run(*fewer, "--output-dir", str(runs.root / "fewer"), "-", input="true\n")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_ram_above_the_machines_says_the_most_it_may_be(runs: Runs) -> None:
    total = host_memory_total()
    out = runs.root / "out"
    proc = runs.run(
        "--fake-gpus", "1", "--ram", "100TiB", "--output-dir", str(out), "-", input="true\n"
    )
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout + proc.stderr
    most = format_size_down(total)
    assert proc.stderr == (  # before any job (it was said once per job)
        "gpuherd: error: no job of this run could ever start: each asks for 100.0 TiB of host "
        f"memory, more than this machine has ({format_size(total)}): give a smaller --ram, at "
        f"most {most} (see gpuherd run --help)\n"
    )
