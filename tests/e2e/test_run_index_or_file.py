"""`gpuherd run --gpus 0 1` where a file `1` is there: the word is a GPU index and a job file's
name. It was taken for the job file whenever a path of that name existed: the file `1` ran on
GPU 0 alone and standard input was ignored (exit 0); `--gpus 0 1 jobs.txt` was refused as two
job files; a folder `1` was read as the job file (`cannot read 1: Is a directory`). Now the
reading that makes the command line valid is taken, and where both do, the run asks which."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Probe, Runs


@pytest.fixture
def two_jobs(probe: Probe) -> str:
    """Two jobs that wait until both run (on two GPUs, where the run has two)."""
    return "".join(probe.cmd(name, barrier=2) + "\n" for name in ("a", "b"))


def gpus_of(probe: Probe) -> dict[str, str]:
    """The GPUs each job that ran saw, by its name."""
    return {name: record["gpus"] for name, record in probe.by_name().items()}


@pytest.fixture
def file_1(runs: Runs, probe: Probe, two_jobs: str) -> Path:
    """A job file named as GPU 1 is, in the run's folder, and `cmds`, another."""
    (runs.cwd / "1").write_text(probe.cmd("file-1") + "\n")
    (runs.cwd / "cmds").write_text(two_jobs)
    return runs.cwd / "1"


def test_an_index_that_is_also_the_only_file_named_is_refused_saying_both_ways(
    runs: Runs, probe: Probe, file_1: Path, two_jobs: str
) -> None:
    out = runs.root / "out"
    proc = runs.run("--gpus", "0", "1", "--output-dir", str(out), input=two_jobs)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout + proc.stderr
    assert proc.stderr == (
        "gpuherd: error: --gpus 0 1: 1 is a GPU index and a file here: write --gpus 0,1 to use"
        " GPU 1 too (jobs from standard input), or --gpus 0 ./1 to run the job file 1 (see "
        "gpuherd run --help)\n"
    )
    assert not out.exists() and probe.records() == []


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--gpus", "0", "1", "cmds"], id="then-the-file"),
        pytest.param(["cmds", "--gpus", "0", "1"], id="after-the-file"),
        pytest.param(["--gpus", "0", "-q", "1", "cmds"], id="apart-from-gpus"),
        pytest.param(["--gpus", "0", "1", "--job_file", "cmds"], id="gpu-hog"),
    ],
)
def test_an_index_that_names_a_file_is_an_index_where_another_is_the_job_file(
    runs: Runs, probe: Probe, file_1: Path, args: list[str]
) -> None:
    proc = runs.run(*args, "--output-dir", str(runs.root / "out"), input=None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = gpus_of(probe)
    assert (sorted(ran), sorted(ran.values())) == (["a", "b"], ["0", "1"]), ran


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--gpus", "0", "./1"], id="dot-slash"),
        pytest.param(["--gpus", "0", "--job_file", "1"], id="gpu-hog"),
        pytest.param(["1", "--gpus", "0"], id="before-gpus"),
    ],
)
def test_the_file_is_run_where_it_is_written_as_one(
    runs: Runs, probe: Probe, file_1: Path, two_jobs: str, args: list[str]
) -> None:
    proc = runs.run(*args, "--output-dir", str(runs.root / "out"), input=two_jobs)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert gpus_of(probe) == {"file-1": "0"}


def test_a_folder_named_as_an_index_is_no_job_file(runs: Runs, probe: Probe, two_jobs: str) -> None:
    (runs.cwd / "1").mkdir()  # (it said `cannot read 1: Is a directory`)
    proc = runs.run("--gpus", "0", "1", "--output-dir", str(runs.root / "out"), input=two_jobs)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(gpus_of(probe).values()) == ["0", "1"]
