"""`gpuherd run`'s input read as sh reads it: a `\\` that ends a `# comment` continues nothing
(the jobs, and the command shown, are what sh runs), a word of bash's that /bin/sh lacks is
found where a command starts, and `--gpus` given twice keeps both."""

from __future__ import annotations

import subprocess

import pytest

from gpuherd.cli.run_args import gpu_indices_together
from gpuherd.cli.run_warnings import bash_word
from gpuherd.core.commands import command_lines, flat_command
from gpuherd.runner_rerun import job_key


def sh(command: str) -> str:
    proc = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=10)
    return proc.stdout


@pytest.mark.parametrize(
    ("text", "jobs"),
    [
        # The comment ends at the line break: two jobs, as sh runs two commands.
        ("echo x # note \\\necho y\n", ["echo x # note \\", "echo y"]),
        ("echo a \\\n  # c \\\necho y\n", ["echo a \\\n  # c \\", "echo y"]),
        # No comment: `#` in quotes, inside a word, or escaped continues as before.
        ('echo "x # y \\\nz"\n', ['echo "x # y \\\nz"']),
        ("echo 'x # y' \\\nz\n", ["echo 'x # y' \\\nz"]),
        ("echo x#y \\\nz\n", ["echo x#y \\\nz"]),
        ("echo x \\# y \\\nz\n", ["echo x \\# y \\\nz"]),
        # Joined onto `a`, a `#` at the next line's start is inside a word: no comment.
        ("echo a\\\n#b \\\nc\n", ["echo a\\\n#b \\\nc"]),
    ],
)
def test_jobs_are_the_commands_sh_runs(text: str, jobs: list[str]) -> None:
    assert list(command_lines(text.splitlines(keepends=True))) == jobs
    assert "".join(sh(job) for job in jobs) == sh(text)


def test_a_comments_backslash_shown_keeps_its_line_break() -> None:
    """A yielded command holds what a job file's lines no longer make: shown as one line, it
    read `echo x # note echo y`, as if the comment held the second command."""
    command = "echo x # note \\\necho y"
    assert flat_command(command) == command
    shown = flat_command("python a.py \\\n  --b 1 # c \\\necho y")
    assert shown == "python a.py --b 1 # c \\\necho y"


@pytest.mark.parametrize(
    ("command", "word"),
    [
        ("source venv/bin/activate && python train.py", "source"),
        ("cd x && source env.sh; python t.py", "source"),
        ("if [[ -f x ]]; then echo y; fi", "[["),
        ("pushd /tmp; ls", "pushd"),
        ("python -c 'source = 1'", None),
        ('echo "now source it"', None),
        ("echo source", None),
        (". venv/bin/activate && python train.py", None),
        ("python train.py --resource 2", None),
    ],
)
def test_a_bash_word_is_found_where_a_command_starts(command: str, word: str | None) -> None:
    assert bash_word(command) == word


@pytest.mark.parametrize(
    ("args", "ours"),
    [
        (["--gpus", "0", "--gpus", "1", "jobs.txt"], ["--gpus", "0,1", "jobs.txt"]),
        (["-q", "--gpus=0", "--gpus", "1", "2"], ["-q", "--gpus", "0,1,2"]),
        (["--gpus", "0", "--gpus", "0"], ["--gpus", "0,0"]),  # (a repeated index: a slot)
    ],
)
def test_gpus_given_twice_are_joined(args: list[str], ours: list[str]) -> None:
    assert gpu_indices_together(args) == (ours, None)


def test_visible_devices_are_no_part_of_a_jobs_key() -> None:
    """Never seen by the job (the run sets it), and recorded in job.json by runs of before."""
    assert job_key("true", {"CUDA_VISIBLE_DEVICES": "7", "LR": "1"}) == job_key("true", {"LR": "1"})
    assert job_key("true", {"CUDA_VISIBLE_DEVICES": "7"}) == job_key("true", None)
