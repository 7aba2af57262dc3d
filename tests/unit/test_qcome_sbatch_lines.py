"""A Slurm job script's `#SBATCH` lines read as sbatch reads them, and said as `gpuherd
submit`'s options (core/sbatch_directives.py)."""

from __future__ import annotations

from gpuherd.core.sbatch_directives import directive_words, submit_options

SCRIPT = """#!/bin/bash
# trains the model
#SBATCH -J train -p gpu --gres=gpu:a100:2,tmp:10G
#SBATCH --time=1-12 --mem=16000   # host memory, in MB
#SBATCH --output=logs/%x-%j.out --nice=5
#SBATCH --dependency=afterok:41 --array=0-9%2
#SBATCH--not-a-directive
python train.py
#SBATCH --gpus=8
"""


def test_the_lines_before_the_first_command_are_read_as_sbatch_options() -> None:
    assert directive_words(SCRIPT) == [
        "-J", "train", "-p", "gpu", "--gres=gpu:a100:2,tmp:10G",
        "--time=1-12", "--mem=16000",
        "--output=logs/%x-%j.out", "--nice=5",
        "--dependency=afterok:41", "--array=0-9%2",
    ]  # fmt: skip


def test_each_is_said_as_the_option_that_does_it_here_or_as_none() -> None:
    options, left_out = submit_options(directive_words(SCRIPT))
    assert options == [
        ("--name", "train"),
        ("--gpus", "2"),
        ("--timeout", "1d12h"),  # (1-12: a day and 12 hours)
        ("--ram", "16000M"),  # Slurm's --mem is host memory, in MB when bare
        ("--output", "logs/%x-%j.out"),
        ("--priority", "-5"),
    ]
    # (a dependency's ids are Slurm's, not this queue's)
    assert left_out == ["-p", "--dependency", "--array"]


def test_a_time_in_minutes_and_the_forms_of_gpus_and_values() -> None:
    words = ["-t90", "--gpus", "a100:1", "-H", "--gpus-per-node=3", "-G", "4", "--time", "2:00:00"]
    assert submit_options(words) == ([("--timeout", "2:00:00"), ("--gpus", "4")], ["-H"])
    assert submit_options(["--time=30", "--gres=gpu"]) == (
        [("--timeout", "30m"), ("--gpus", "1")],
        [],
    )
    assert submit_options(["--gres=tmp:10G"]) == ([], ["--gres"])
