"""A `\\`-continued command reads on one line in listings (core.commands.flat_command)."""

from __future__ import annotations

import subprocess

import pytest

from gpuherd.core.commands import command_lines, flat_command


def _job(text: str) -> str:
    (job,) = command_lines(text.splitlines(keepends=True))
    return job


@pytest.mark.parametrize(
    ("lines", "shown"),
    [
        ("python train.py \\\n    --ckpt x\n", "python train.py --ckpt x"),
        ("python train.py\\\n\t--lr 1 \\\n  --bs 2\n", "python train.py --lr 1 --bs 2"),
        ("python train.py --lr\\\n1\n", "python train.py --lr1"),  # as the shell joins it
        ("plain command\n", "plain command"),
    ],
)
def test_continued_lines_read_as_the_shell_runs_them(lines: str, shown: str) -> None:
    assert flat_command(_job(lines)) == shown


def test_a_line_break_that_is_no_continuation_is_kept() -> None:
    """An escaped backslash at a line's end, or a newline in a submitted script, separates
    commands: it is not a space between words."""
    assert flat_command("echo a\\\\\necho b") == "echo a\\\\\necho b"
    assert flat_command("echo a\necho b") == "echo a\necho b"


def test_the_words_shown_are_the_words_the_shell_runs() -> None:
    job = _job("printf '<%s>' one \\\n    two\\\n3 \\\n\tfour\n")
    ran = subprocess.run(["sh", "-c", job], capture_output=True, text=True, check=True).stdout
    shown = subprocess.run(
        ["sh", "-c", flat_command(job)], capture_output=True, text=True, check=True
    ).stdout
    assert ran == shown == "<one><two3><four>"
