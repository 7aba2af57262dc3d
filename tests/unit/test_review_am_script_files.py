"""The missing-script warning on commands that work, and on many files at once: a line ended by
a backslash (a sweep file's `command: |` block) was read with the newline as a word, so a
script "\\n" was said not to exist; `python {run_dir}/train.py` runs a file of its own per
point, and a 5,000-point sweep printed 5,000 warnings. And `Herd.submit`'s keyword typos name
its own `cwd` and `name` as the closest, as `Herd.sweep`'s do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuherd.cli.submit_hints import spaced_program_hint
from gpuherd.client import Client
from gpuherd.pyapi import Herd
from gpuherd.script_files import missing_script, missing_script_hints

ENV = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
"""A PATH where `python` is found (a venv's): not every machine has /usr/bin/python."""


@pytest.mark.parametrize(
    "command",
    [
        "python \\\n  train.py --lr 0.1",
        "python -u \\\n    train.py",
        "CUDA_VISIBLE_DEVICES=0 \\\n  python train.py",
    ],
)
def test_a_line_continued_by_a_backslash_is_read_as_the_shell_joins_it(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    assert missing_script(command, str(tmp_path), ENV) is None
    assert spaced_program_hint(command, str(tmp_path), ENV) is None
    gone = command.replace("train.py", "nosuch.py")
    assert missing_script(gone, str(tmp_path), ENV) == "nosuch.py"
    # `\\` is a backslash; the newline after it then separates words, as the shell reads it.
    assert missing_script("python nosuch.py\\\\\n", str(tmp_path), ENV) == "nosuch.py\\"


def test_many_files_not_there_are_said_in_one_line(tmp_path: Path) -> None:
    run_dirs = [f"{tmp_path}/results/s/lr={lr}" for lr in range(5)]
    commands = [f"python {run_dir}/train.py --lr 1" for run_dir in run_dirs]
    assert missing_script_hints(commands, str(tmp_path), ENV, "point") == [
        f"5 files the points run do not exist, as {run_dirs[0]}/train.py and"
        f" {run_dirs[1]}/train.py: every point will fail unless its file is made before it"
        " starts; check the paths"
    ]
    (tmp_path / "there.py").write_text("")
    some = [f"python {name}.py" for name in ("a", "b", "c", "d", "there", "a")]
    assert missing_script_hints(some, str(tmp_path), ENV, "job") == [
        f"4 files the jobs run do not exist in {tmp_path} (the jobs' working directory), as"
        " a.py and b.py: the 5 jobs that run them will fail unless their files are made first;"
        " check the paths or pass --cwd"
    ]
    three = missing_script_hints(["python a.py", "python b.py", "python c.py"], str(tmp_path), ENV)
    assert len(three) == 3  # a few are still said one by one


@pytest.mark.parametrize(("typo", "meant"), [("cwdd", "cwd"), ("nmae", "name")])
def test_a_submit_keyword_typo_names_submits_own_keyword(
    tmp_path: Path, typo: str, meant: str
) -> None:
    herd = Herd(Client(tmp_path, waits_for_socket=False))  # refused before any request
    with pytest.raises(TypeError, match=rf"unknown option '{typo}' \(did you mean '{meant}'\?\)"):
        herd.submit("python train.py", **{typo: "x"})
