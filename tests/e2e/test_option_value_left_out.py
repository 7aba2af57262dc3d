"""An option typed without its value, so that the next option reads as its value, is said as
such in one line (exit 2), by `run`, `submit` and `sweep`: `run --prefix --gpus 0 jobs.txt`
made `--gpus` the prefix and then said "unexpected argument 0: did you mean --gpus?", and
`submit --name -q -- true` queued a job named `-q`. A value that is no option of the command
(`-p -5`, `-n -quick`, `-o -`) or one given joined (`--name=-q`) is taken as before.

A real daemon (4 fake GPUs) for submit and sweep; `gpuherd run` in a scratch folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conftest import Herd, Runs


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    herd = Herd(tmp_path_factory.mktemp("e2e") / "home")
    try:
        herd.start("--fake-gpus", "4")
        yield herd
    finally:
        herd.cleanup()


RUN_LEFT_OUT = [
    (
        ["--prefix", "--gpus", "0", "jobs.txt"],
        "--prefix: no value given (--gpus is an option): give one after it, e.g. --prefix job_;"
        " or, to give --gpus itself, --prefix=--gpus",
    ),
    (
        ["jobs.txt", "--prefix", "-q"],
        "--prefix: no value given (-q is an option): give one after it, e.g. --prefix job_;"
        " or, to give -q itself, --prefix=-q",
    ),
    (
        ["--timeout", "--max-parallel", "2", "jobs.txt"],
        "--timeout: no value given (--max-parallel is an option): give one after it,"
        " e.g. --timeout 2h",
    ),
    (
        ["--gpus", "--gpus-per-job", "1", "jobs.txt"],
        "--gpus: no value given (--gpus-per-job is an option): give one after it, e.g. --gpus 0,1",
    ),
    (
        ["--yielder", "-q"],
        "--yielder: no value given: give the yielder's Python file after it",
    ),
    (
        ["--job_file", "-q"],
        "--job_file: no value given: give the job file after it",
    ),
]


@pytest.mark.parametrize(("args", "said"), RUN_LEFT_OUT, ids=lambda v: " ".join(v))
def test_run_option_without_its_value_is_said_so(runs: Runs, args: list[str], said: str) -> None:
    (runs.cwd / "jobs.txt").write_text("true\n")
    proc = runs.run("--fake-gpus", "2", *args)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"gpuherd: error: {said} (see gpuherd run --help)\n"
    assert not (runs.cwd / "herd_runs").exists()


def test_run_takes_a_value_given_joined_or_a_file_of_that_name(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("true\n")
    (runs.cwd / "-q").mkdir()  # a folder named -q, given as --output-dir: the folder
    proc = runs.run("--fake-gpus", "1", "--prefix=-q", "--output-dir", "-q", "jobs.txt")
    assert proc.returncode == 0, proc.stderr
    assert (runs.cwd / "-q" / "-q0" / "SUCCESS").exists()


SUBMIT_LEFT_OUT = [
    (
        ["submit", "-n", "--gpus", "0", "--", "true"],
        "-n: no value given (--gpus is an option): give one after it, e.g. -n train-lr0.1;"
        " or, to give --gpus itself, --name=--gpus",
        "submit",
    ),
    (
        ["submit", "--name", "-q", "--", "true"],
        "--name: no value given (-q is an option): give one after it, e.g. --name train-lr0.1;"
        " or, to give -q itself, --name=-q",
        "submit",
    ),
    (
        ["submit", "-qn", "-w", "--", "true"],
        "-n: no value given (-w is an option): give one after it, e.g. -n train-lr0.1;"
        " or, to give -w itself, --name=-w",
        "submit",
    ),
    (
        ["submit", "--cwd", "--hold", "--", "true"],
        "--cwd: no value given (--hold is an option): give one after it, e.g. --cwd /data/run3",
        "submit",
    ),
    (
        ["sweep", "echo {x}", "-p", "x", "1", "2", "--name", "--gpus", "1"],
        "--name: no value given (--gpus is an option): give one after it, e.g. --name lr-grid;"
        " or, to give --gpus itself, --name=--gpus",
        "sweep",
    ),
    (
        ["sweep", "echo {x}", "--results-dir", "--dry-run", "-p", "x", "1"],
        "--results-dir: no value given (--dry-run is an option): give one after it,"
        " e.g. --results-dir results/lr",
        "sweep",
    ),
]


@pytest.mark.parametrize(
    ("args", "said", "command"), SUBMIT_LEFT_OUT, ids=lambda v: " ".join(v) if v else ""
)
def test_submit_or_sweep_option_without_its_value_is_said_so(
    herd: Herd, args: list[str], said: str, command: str
) -> None:
    before = herd.all_jobs()
    proc = herd.cli(*args, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"gpuherd: error: {said} (see gpuherd {command} --help)\n"
    assert herd.all_jobs() == before


def test_values_that_are_no_option_are_taken(herd: Herd) -> None:
    first = herd.submit("--hold", "-p", "-5", "-n", "-quick", "--", "true")
    second = herd.submit("--hold", "--name=-q", "--", "true")
    third = herd.submit("--hold", "echo", "--name", "-q")  # the command's own words
    jobs = {job["id"]: job for job in herd.all_jobs()}
    assert (jobs[first]["name"], jobs[first]["priority"]) == ("-quick", -5)
    assert jobs[second]["name"] == "-q"
    assert (jobs[third]["name"], jobs[third]["command"]) == (None, "echo --name -q")
