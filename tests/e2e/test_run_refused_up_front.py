"""`gpuherd run` options that no job of the run could work with are refused once, before any
job starts. A run-wide --ram or --mem more than the machine could give was refused once per
job (2,001 lines for a job file of 2,000, exit 1); an --output-dir where no folder can be made
(/proc, /sys) passed os.access for root, and each job failed in turn."""

from __future__ import annotations

import os

import pytest

from conftest import Runs

JOBS = "".join(f"echo {n}\n" for n in range(50))


@pytest.mark.parametrize(
    ("options", "said"),
    [
        pytest.param(
            ["--fake-gpus", "1", "--ram", "9000TiB"],
            "each asks for 9000.0 TiB of host memory, more than this machine has (",
            id="ram",
        ),
        pytest.param(
            ["--fake-gpus", "1x24GiB", "--mem", "30GiB"],
            "each asks for 30.0 GiB per GPU but the largest GPU has 24.0 GiB: give a smaller "
            "--mem, at most 24.0 GiB (see gpuherd run --help)",
            id="mem",
        ),
        pytest.param(
            ["--fake-gpus", "1x24GiB,1x8GiB", "--mem", "20GiB", "--gpus-per-job", "2"],
            "each asks for 2 GPUs with 20.0 GiB each but only 1 GPU has that much: give fewer "
            "--gpus-per-job, at most 1, or a smaller --mem (see gpuherd run --help)",
            id="mem-on-two",
        ),
    ],
)
def test_a_run_wide_request_no_gpu_or_memory_here_could_meet_is_refused_once(
    runs: Runs, options: list[str], said: str
) -> None:
    (runs.cwd / "jobs.txt").write_text(JOBS)
    out = runs.root / "out"
    proc = runs.run(*options, "-q", "--output-dir", str(out), "jobs.txt")
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout[-500:] + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-500:]
    assert lines[0].startswith("gpuherd: error: no job of this run could ever start: "), lines
    assert said in lines[0], lines[0]
    assert not out.exists()


def test_a_run_wide_request_that_fits_runs(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("echo ran\n")
    out = runs.root / "out"
    proc = runs.run(
        "--fake-gpus",
        "1x24GiB",
        "--mem",
        "20GiB",
        "--ram",
        "1MiB",
        "--output-dir",
        str(out),
        "jobs.txt",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "job_0" / "stdout.log").read_text() == "ran\n"


@pytest.mark.parametrize("folder", ["/proc", "/sys/kernel"])
def test_an_output_dir_no_folder_can_be_made_in_is_refused_before_any_job(
    runs: Runs, folder: str
) -> None:
    if not os.path.isdir(folder):
        pytest.skip(f"no {folder} here")
    (runs.cwd / "jobs.txt").write_text("touch ran-1\ntouch ran-2\n")
    proc = runs.run("--fake-gpus", "1", "--output-dir", folder, "jobs.txt")
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpuherd: error: --output-dir {folder}: "), (
        lines
    )
    assert "give a folder you can write to" in lines[0], lines
    assert not (runs.cwd / "ran-1").exists()


def test_the_output_dir_is_named_as_typed_when_in_use(runs: Runs) -> None:
    # It was named as Path() spells it: `./r6/` as `r6`.
    run = runs.start("--fake-gpus", "1", "--output-dir", "./r6/", "-")
    run.write("sleep 30\n")
    run.expect_line("[0] started")
    proc = runs.run("--fake-gpus", "1", "--output-dir", "./r6/", input="echo no\n")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.startswith(
        f"gpuherd: error: --output-dir ./r6/ is in use by another gpuherd run (pid {run.proc.pid})"
    ), proc.stderr
