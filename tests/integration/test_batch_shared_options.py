"""A batch whose jobs share their options (`submit --file`'s flags apply to every line, the
dashboard's boxes to every command line) is refused for them as a batch, as a sweep is: they
said `job 1 of the submission: this job can never run: ...`, one job blamed for every job's
options. A batch whose jobs differ (a hand-made HTTP one) still names the job; one job has
no prefix. And `"cwd": ""` says it is empty (it said `working directory  does not exist`).
Real daemon, 2 fake GPUs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd, started_once
from gpuherd.errors import InvalidValue

NEVER_FITS = "asks for 5 GPUs but gpuherd has only 2: give fewer gpus (--gpus), at most 2"
HOLD_AND_BEGIN = (
    "give hold (--hold) or begin (--begin), not both: begin keeps the job held until then"
)
CPU_ONLY_MEM = (
    "mem (--mem) with gpus 0 (--gpus 0): a CPU-only job gets no GPU memory; drop one of "
    "them; host memory is ram (--ram)"
)


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """One daemon for the module's tests: each refuses its submissions (the queue compared
    whole, before and after, in `refused`) or queues held jobs and looks only at those."""
    with started_once(tmp_path_factory, "--fake-gpus", "2") as herd:
        yield herd


def refused(herd: Herd, jobs: list[dict[str, Any]]) -> str:
    """What the daemon says of `POST /jobs` with `jobs`, which it must refuse, queuing none."""
    before = herd.client.get("/jobs", all=True)["jobs"]
    with pytest.raises(InvalidValue) as refusal:
        herd.client.post("/jobs", {"jobs": jobs})
    assert herd.client.get("/jobs", all=True)["jobs"] == before
    return str(refusal.value)


def test_a_files_flags_are_refused_as_the_submissions(two_gpus: Herd) -> None:
    lines = "echo a\necho b\necho c\n"
    cli = two_gpus.cli("submit", "--gpus", "5", "--file", "-", input=lines, check=False)
    said = f"this submission can never run: each of its 3 jobs {NEVER_FITS}"
    assert (cli.returncode, cli.stdout, cli.stderr) == (1, "", f"gpuherd: error: {said}\n")


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"gpus": 5}, f"this submission can never run: each of its 3 jobs {NEVER_FITS}"),
        ({"hold": True, "begin": 4e9}, f"the 3 jobs' options: {HOLD_AND_BEGIN}"),
        ({"gpus": 0, "mem": 2**30}, f"the 3 jobs' options: {CPU_ONLY_MEM}"),
        ({"cwd": ""}, "the 3 jobs' options: cwd (--cwd) is empty: give the absolute path"),
        (
            {"output": "gone/%j.log"},
            "the 3 jobs' options: output (--output) gone/%j.log: the folder ",
        ),
    ],
)
def test_a_batch_of_alike_jobs_is_refused_as_a_batch(
    two_gpus: Herd, tmp_path: Path, options: dict[str, Any], said: str
) -> None:
    jobs = [{"command": f"echo {n}", "cwd": str(tmp_path), **options} for n in range(3)]
    assert refused(two_gpus, jobs).startswith(said)


def test_jobs_that_differ_are_named_by_number(two_gpus: Herd, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    jobs = [{"command": "true", "cwd": cwd, "gpus": 5, "name": name} for name in ("a", "b")]
    assert (
        refused(two_gpus, jobs) == f"job 1 of the submission: this job can never run: {NEVER_FITS}"
    )
    jobs = [{"command": "true", "cwd": cwd}, {"command": "true", "cwd": cwd, "hold": True}]
    jobs[1]["begin"] = 4e9
    assert refused(two_gpus, jobs) == f"job 2 of the submission: {HOLD_AND_BEGIN}"


def test_one_job_is_named_by_nothing(two_gpus: Herd, tmp_path: Path) -> None:
    said = refused(two_gpus, [{"command": "true", "cwd": str(tmp_path), "gpus": 5}])
    assert said == f"this job can never run: {NEVER_FITS}"
    assert refused(two_gpus, [{"command": "true", "cwd": ""}]) == (
        "cwd (--cwd) is empty: give the absolute path of an existing folder, the job's "
        "working directory"
    )


def test_alike_jobs_that_can_run_are_queued(two_gpus: Herd, tmp_path: Path) -> None:
    lines = "echo a\necho b\n"
    cli = two_gpus.cli("submit", "--hold", "--gpus", "2", "--file", "-", input=lines, cwd=tmp_path)
    ids = [int(i) for i in cli.stdout.split(": ")[1].split("-")]
    jobs = [two_gpus.job(job_id) for job_id in range(ids[0], ids[-1] + 1)]
    assert [(j["command"], j["state"], j["cwd"]) for j in jobs] == [
        ("echo a", "held", str(tmp_path)),
        ("echo b", "held", str(tmp_path)),
    ]
