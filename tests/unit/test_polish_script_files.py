"""missing_script: which file a command runs (`python -u train.py`, `bash run.sh`,
`./train.sh`), and whether it is there from the job's folder; submit and sweep warn of one
that is not (a 5,000-point sweep of `python nosuch.py` was queued without a word, every
point to fail)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.script_files import missing_script, missing_script_hints

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "run.sh").write_text("echo hi\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").write_text("")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "onpath.sh").write_text("echo hi\n")
    (tmp_path / "bin" / "onpath.sh").chmod(0o755)
    return tmp_path


@pytest.mark.parametrize(
    ("command", "missing"),
    [
        ("python nosuch.py", "nosuch.py"),
        ("python3 nosuch.py --lr 0.1", "nosuch.py"),
        ("python3.11 -u -W ignore -X dev nosuch.py", "nosuch.py"),  # options and their values
        ("python -uWignore nosuch.py", "nosuch.py"),  # a value in the cluster
        ("CUDA_VISIBLE_DEVICES=0 python -- nosuch.py", "nosuch.py"),
        ("venv/bin/python nosuch.py", "nosuch.py"),  # an interpreter named by its path
        ("bash -e -o pipefail nosuch.sh 1 2", "nosuch.sh"),
        ("sh nosuch.sh", "nosuch.sh"),
        ("./train.sh --lr 0.1", "./train.sh"),  # the program itself, a path
        ("scripts/run.py", "scripts/run.py"),
        ("python scripts/run.py", "scripts/run.py"),
        ("/nowhere/at/all/run.sh", "/nowhere/at/all/run.sh"),
    ],
)
def test_the_file_a_command_runs_that_is_not_there_is_named(
    work: Path, command: str, missing: str
) -> None:
    assert missing_script(command, str(work), ENV) == missing


@pytest.mark.parametrize(
    "command",
    [
        "python train.py --lr 0.1",
        "python -u ./train.py",
        "bash run.sh",
        "venv/bin/python train.py",
        "python -m pkg.train --lr 0.1",  # a module, not a file
        "python -c 'print(1)'",
        "python3 -",  # stdin
        "python",
        "bash -c 'python nosuch.py'",  # the shell's own command line: not looked into
        "bash -ec 'true'",
        "sh -s < nosuch.sh",
        "bash onpath.sh",  # bash looks on PATH for a script it does not find here
        "python $SCRIPT",  # expanded by the shell
        "python ~/train.py",
        "python nosuch.py;",  # the shell's operators: not judged
        "cd sub && python nosuch.py",  # another folder
        "torchrun nosuch.py",  # not an interpreter known here
        "nosuch.sh",  # not found on PATH: not_on_path_hint's, if anyone's
        "python 'unbalanced",
        "",
    ],
)
def test_nothing_is_said_when_it_is_there_or_unsure(work: Path, command: str) -> None:
    env = {"PATH": f"{work / 'bin'}:/usr/bin:/bin"}
    assert missing_script(command, str(work), env) is None


def test_one_warning_per_file_says_how_many_run_it_and_where_it_looked(work: Path) -> None:
    one = missing_script_hints(["python nosuch.py"], str(work), ENV)
    assert one == [
        f"nosuch.py does not exist in {work} (the job's working directory): the job will fail"
        " unless it is made before it starts; check the path or pass --cwd"
    ]
    commands = [f"python3 {script} --x {x}" for script in ("train.py", "a.py") for x in (1, 2)]
    hints = missing_script_hints([*commands, "python a.py", "sh c.sh"], str(work), ENV, "point")
    assert hints == [
        f"a.py does not exist in {work} (the points' working directory): the 3 points that run"
        " it will fail unless it is made before they start; check the path or pass --cwd",
        f"c.sh does not exist in {work} (the points' working directory): the point that runs"
        " it will fail unless it is made before it starts; check the path or pass --cwd",
    ]
    every = missing_script_hints(["python b.py 1", "python b.py 2"], str(work), ENV, "point")
    assert every == [
        f"b.py does not exist in {work} (the points' working directory): every point will fail"
        " unless it is made before they start; check the path or pass --cwd"
    ]
    assert missing_script_hints(["python b.py"], str(work / "gone"), ENV) == []  # refused so
