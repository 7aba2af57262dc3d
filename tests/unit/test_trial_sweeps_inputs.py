"""Mistakes a user switching from other sweep tools makes in `gpuherd sweep` (a trial of
docs/sweeps.md): each is one line saying what is wrong and what to type instead, exit 2,
no daemon needed (a dry run, or refused before anything is sent)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import forks
from gpuherd.sweepfile import SweepFileError, load_sweep


def sweep(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUHERD_HOME": str(tmp_path / "home")}
    return forks.gpuherd(["sweep", *args], env=env, cwd=tmp_path, input=None, timeout=60)


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        (["-p", "lr=0.1"], "-p lr 0.1"),  # W&B's and simple_hypersearch's habit
        (["-p", "lr=0.1,0.01"], "-p lr 0.1 0.01"),  # Hydra's multirun
        (["-p", "lr=0.1", "0.01"], "-p lr 0.1 0.01"),  # was a parameter named `lr=0.1`
    ],
)
def test_a_name_joined_to_its_values_says_how_to_write_them(
    tmp_path: Path, given: list[str], meant: str
) -> None:
    done = sweep(tmp_path, "echo {lr}", *given, "--dry-run")
    assert done.returncode == 2, done.stdout
    assert done.stdout == ""
    assert done.stderr == (
        f"gpuherd: error: -p {given[1]}: give the name and its values apart, as separate"
        f" words: {meant}\n"
    )


def test_a_template_typed_after_a_joined_name_is_not_advised_as_a_value(tmp_path: Path) -> None:
    # The advice was `-p lr 0.1 0.01 'python train.py --lr {lr}'`: typed, the template was a
    # third value of lr.
    done = sweep(tmp_path, "-p", "lr=0.1,0.01", "python train.py --lr {lr}", "--dry-run")
    assert done.returncode == 2, done.stdout
    assert done.stderr == (
        "gpuherd: error: -p lr=0.1,0.01: give the name and its values apart, as separate words:"
        " -p lr 0.1 0.01 (after the command template: 'python train.py --lr {lr}' -p lr 0.1"
        " 0.01)\n"
    )
    advised = sweep(tmp_path, "python train.py --lr {lr}", "-p", "lr", "0.1", "0.01", "--dry-run")
    assert advised.stdout.splitlines()[:2] == [
        "python train.py --lr 0.1",
        "python train.py --lr 0.01",
    ], advised.stderr


def test_a_bad_samples_count_names_the_flag_typed_in_the_docs(tmp_path: Path) -> None:
    done = sweep(tmp_path, "echo {lr}", "-p", "lr", "1", "2", "--samples", "0", "--dry-run")
    assert done.returncode == 2
    assert done.stderr.startswith("gpuherd: error: --samples: 0 is out of range: use a whole")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("command: echo {lr}\ngrid:\n\tlr: [0.1]\n", "3: invalid YAML: a tab (column 1)"),
        ("command:\techo {lr}\ngrid: {lr: [0.1]}\n", "1: invalid YAML: a tab (column 9)"),
    ],
)
def test_a_tab_in_a_yaml_file_says_to_use_spaces(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "tabs.yaml"
    path.write_text(text)
    said = f"{where}: YAML indents and separates with spaces only; replace it with spaces"
    with pytest.raises(SweepFileError) as refused:
        load_sweep(str(path))
    assert str(refused.value) == f"{path}:{said}"
    done = sweep(tmp_path, "tabs.yaml", "--dry-run")
    assert done.returncode == 1
    assert done.stderr == f"gpuherd: error: tabs.yaml:{said}\n"
