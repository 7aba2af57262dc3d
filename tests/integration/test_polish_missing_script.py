"""A command whose script is not there (`python nosuch.py`) was queued without a word, every
job (every point of a sweep) to fail as it started. `submit`, `sweep` and the Python API now
warn once, naming the file and where it was looked for, and queue the jobs all the same: an
earlier job may make the file (`--after`). Real daemon, 4 fake GPUs, real jobs."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd


def warned(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("gpuherd: warning: ")]


def test_submit_warns_and_queues_the_job_which_runs_once_an_earlier_job_made_it(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    make = herd.submit(
        "--gpus", "0", "--hold", "--cwd", str(work), "--", "echo 'print(42)' > made.py"
    )
    done = herd.cli(
        "submit", "--gpus", "0", "--after", str(make), "--cwd", str(work), "-q", "--",
        "python3", "-u", "made.py",
    )  # fmt: skip
    assert warned(done.stderr) == [
        f"gpuherd: warning: made.py does not exist in {work} (the job's working directory): the"
        " job will fail unless it is made before it starts; check the path or pass --cwd"
    ]
    herd.cli("release", str(make))
    job = herd.wait_state(int(done.stdout), "succeeded", "failed")
    assert job["state"] == "succeeded"  # queued all the same, and ran once it was there
    again = herd.cli("submit", "--gpus", "0", "--hold", "--", "python3", "made.py", cwd=work)
    assert warned(again.stderr) == []  # there now


def test_a_sweep_says_it_once_for_all_its_points_and_by_point_for_a_templated_script(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    (work / "a.py").write_text("")
    swept = herd.cli(
        "sweep", "python3 nosuch.py --lr {lr}", "-p", "lr", "0.1", "0.01", "0.001",
        "--name", "nosuch", "--gpus", "0", "--hold", "--json", cwd=work,
    )  # fmt: skip
    said = (
        f"nosuch.py does not exist in {work} (the points' working directory): every point will"
        " fail unless it is made before they start; check the path or pass --cwd"
    )
    assert warned(swept.stderr) == [f"gpuherd: warning: {said}"]
    assert len(herd.json("sweep", "status", "nosuch")["rows"]) == 3  # all submitted
    templated = herd.cli(
        "sweep", "python {script} {x}", "-p", "script", "a.py", "b.py", "-p", "x", "1", "2",
        "--name", "tpl", "--gpus", "0", "--hold", cwd=work,
    )  # fmt: skip
    assert warned(templated.stderr) == [
        f"gpuherd: warning: b.py does not exist in {work} (the points' working directory): the"
        " 2 points that run it will fail unless it is made before they start; check the path or"
        " pass --cwd"
    ]
    dry = herd.cli("sweep", "python3 nosuch.py {x}", "-p", "x", "1", "--dry-run", cwd=work)
    assert warned(dry.stderr) == [
        f"gpuherd: warning: nosuch.py does not exist in {work} (the point's working directory):"
        " the point will fail unless it is made before it starts; check the path or pass --cwd"
    ]
    fine = herd.cli(
        "sweep", "python -m pkg --x {x}", "-p", "x", "1", "2", "--gpus", "0", "--hold", cwd=work
    )
    assert warned(fine.stderr) == []


def test_python_warns_at_the_callers_line_in_its_own_words(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    api = gpuherd.connect(herd.home, start=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        job = api.submit("python nosuch.py", gpus=0, hold=True, cwd=work)
        sweep = api.sweep("python3 other.py {x}", {"x": [1, 2]}, gpus=0, hold=True, cwd=work)
    assert [(w.category, w.filename, str(w.message)) for w in caught] == [
        (
            UserWarning,
            __file__,
            f"nosuch.py does not exist in {work} (the job's working directory): the job will"
            " fail unless it is made before it starts; check the path or pass cwd=",
        ),
        (
            gpuherd.SweepWarning,
            __file__,
            f"other.py does not exist in {work} (the points' working directory): every point"
            " will fail unless it is made before they start; check the path or pass cwd=",
        ),
    ]
    assert job.state() == "held" and len(sweep.ids) == 2  # queued all the same
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (work / "there.py").write_text("")
        api.submit(["python3", "-u", "there.py"], gpus=0, hold=True, cwd=work)
        api.submit("python3 -c 'print(1)'", gpus=0, hold=True, cwd=work)


@pytest.mark.parametrize("command", ["./train.sh", "scripts/run.py --lr 1"])
def test_a_program_named_by_a_path_that_is_not_there_is_warned_of(
    shared_daemon: Herd, shared_work: Path, command: str
) -> None:
    herd, work = shared_daemon, shared_work
    submitted = herd.cli("submit", "--gpus", "0", "--hold", command, cwd=work)
    file = command.split()[0]
    assert warned(submitted.stderr) == [
        f"gpuherd: warning: {file} does not exist in {work} (the job's working directory): the"
        " job will fail unless it is made before it starts; check the path or pass --cwd"
    ]
