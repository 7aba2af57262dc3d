"""core.text's visible() (a job's line with its control bytes shown) and shell_word() (a path
on one line, as a shell reads it back)."""

from __future__ import annotations

import os
import subprocess

import pytest

from gpuherd.core.text import shell_word, visible


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("a\0b", "a^@b"),  # a NUL is not a blank
        ("\x01\x1f\x7f", "^A^_^?"),
        ("x\x85y\u202ez", "x<U+0085>y<U+202E>z"),
        ("\x1b[31mred\x1b[0m", "red"),  # colours dropped
        ("\0\tx", "^@      x"),  # a tab to the stop after what is shown before it
        ("plain é 中", "plain é 中"),
    ],
)
def test_visible(line: str, shown: str) -> None:
    assert visible(line) == shown


@pytest.mark.parametrize(
    ("path", "word"),
    [
        ("/home/me/runs", "/home/me/runs"),
        ("/home/josé/runs", "/home/josé/runs"),  # letters are plain, in any script
        ("/tmp/a b", "'/tmp/a b'"),
        ("", "''"),
        ("/tmp/out\nx", "$'/tmp/out\\nx'"),
        ("/t/it's", "'/t/it'\"'\"'s'"),
        (os.fsdecode(b"/t/\xff\x1b") + "\u202e", "$'/t/\\xff\\x1b\\u202e'"),
    ],
)
def test_shell_word(path: str, word: str) -> None:
    assert shell_word(path) == word
    assert "\n" not in word


@pytest.mark.parametrize(
    "path", ["/t/a b", "/t/out\nx y", "/t/it's\\\t\r", os.fsdecode(b"/t/\xff\xc2\x85\x1b")]
)
def test_bash_reads_the_word_back_as_the_path(path: str) -> None:
    said = subprocess.run(["bash", "-c", f"printf %s {shell_word(path)}"], capture_output=True)
    assert said.stdout == os.fsencode(path)
