"""A sweep's refusals name what the user gave: its points, by their parameters, as `sweep
status` names them, or the sweep itself for options every point has. They said `jobs 1 and 2
of the submission` and `job 1 of the submission: this job can never run`, numbers the user
never saw. The CLI, the Python API and HTTP alike; `submit --file`'s flags, every line's, are
refused as the submission's (test_batch_shared_options.py).
Real daemon, 4 fake GPUs of 24 GiB."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect

NEVER = "can never run: each of its points asks for"


def test_points_that_would_share_a_file_are_named_by_their_parameters(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    (work / "logs").mkdir()
    same = work / "logs" / "same.log"
    refused = herd.cli(
        "sweep", "echo {x} {y}", "-p", "x", "1", "2", "-p", "y", "a", "--name", "shared-log",
        "--gpus", "0", "-o", "logs/same.log", check=False, cwd=work,
    )  # fmt: skip
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"gpuherd: error: points x=1,y=a and x=2,y=a of sweep 'shared-log' would both write "
        f"{same}, each emptying it as it starts: put %j (the job's id) or %x (its name) in "
        "the file's name, so each job has its own\n"
    )
    api = connect(herd.home, start=False)
    with pytest.raises(InvalidValue) as from_python:
        api.sweep("echo {x}", {"x": [1, 2]}, name="py-log", gpus=0, output=str(same), cwd=work)
    assert str(from_python.value).startswith("points x=1 and x=2 of sweep 'py-log' would both")
    assert {"shared-log", "py-log"}.isdisjoint(s["name"] for s in api.sweeps())  # none made
    assert not same.exists()


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (["--gpus", "5"], "5 GPUs but gpuherd has only 4: give fewer gpus (--gpus), at most 4"),
        (
            ["--mem", "30GiB"],
            "30.0 GiB per GPU but the largest GPU has 24.0 GiB: give a smaller mem (--mem),"
            " at most 24.0 GiB",
        ),
    ],
)
def test_options_no_gpu_can_meet_refuse_the_sweep_not_its_first_job(
    shared_daemon: Herd, shared_work: Path, options: list[str], reason: str
) -> None:
    herd, work = shared_daemon, shared_work
    refused = herd.cli(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--name", "too-big", *options,
        check=False, cwd=work,
    )  # fmt: skip
    assert (refused.returncode, refused.stderr) == (
        1,
        f"gpuherd: error: sweep 'too-big' {NEVER} {reason}\n",
    )
    spec = {"name": "too-big-http", "command": "echo {x}", "grids": [{"x": [1, 2]}]}
    gpus, mem = (5, None) if options[0] == "--gpus" else (1, 30 * 2**30)
    body = {"spec": spec, "cwd": str(work), "options": {"gpus": gpus, "mem": mem}}
    with pytest.raises(InvalidValue) as over_http:
        herd.client.post("/sweeps", body)
    assert str(over_http.value) == f"sweep 'too-big-http' {NEVER} {reason}"
    assert {"too-big", "too-big-http"}.isdisjoint(s["name"] for s in herd.json("sweep", "ls"))
    assert not (work / "results").exists()


def test_a_files_flags_are_refused_as_a_sweeps_are(shared_daemon: Herd, shared_work: Path) -> None:
    herd, work = shared_daemon, shared_work
    lines = "echo a\necho b\n"
    refused = herd.cli("submit", "--gpus", "5", "--file", "-", input=lines, check=False, cwd=work)
    said = (
        "this submission can never run: each of its 2 jobs asks for 5 GPUs but gpuherd has only 4"
        ": give fewer gpus (--gpus), at most 4"
    )
    assert (refused.returncode, refused.stderr) == (1, f"gpuherd: error: {said}\n")
