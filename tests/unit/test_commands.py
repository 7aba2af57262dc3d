"""Command lists as users write them: command_lines() and command_from_args()."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.core.commands import JobCutShort, command_from_args, command_lines


def sh(command: str) -> str:
    proc = subprocess.run(
        ["sh", "-c", command], capture_output=True, text=True, timeout=10, check=True
    )
    return proc.stdout


# ---- command_lines --------------------------------------------------------------------------


def test_one_job_per_line() -> None:
    assert list(command_lines(["echo 1", "echo 2"])) == ["echo 1", "echo 2"]


def test_lines_with_newlines_as_read_from_a_file() -> None:
    assert list(command_lines(["echo 1\n", "echo 2\n"])) == ["echo 1", "echo 2"]


def test_comments_and_blank_lines_are_skipped() -> None:
    lines = ["# a sweep\n", "\n", "echo 1\n", "   \n", "\t\n", "#echo no\n", "echo 2\n", "\n"]
    assert list(command_lines(lines)) == ["echo 1", "echo 2"]


def test_indented_comments_are_skipped() -> None:
    lines = ["    # indented\n", "\t# tabbed\n", "echo 1\n"]
    assert list(command_lines(lines)) == ["echo 1"]


def test_hash_inside_a_command_is_kept() -> None:
    assert list(command_lines(["echo a # trailing comment\n"])) == ["echo a # trailing comment"]


def test_shell_syntax_is_kept_verbatim() -> None:
    lines = [
        "cd /tmp && python train.py --lr 0.1\n",
        "cat log | grep loss | tail -n 1\n",
        "a || b; c > out.txt 2>&1\n",
    ]
    assert list(command_lines(lines)) == [
        "cd /tmp && python train.py --lr 0.1",
        "cat log | grep loss | tail -n 1",
        "a || b; c > out.txt 2>&1",
    ]


def test_leading_and_trailing_spaces_are_trimmed() -> None:
    assert list(command_lines(["   echo 1   \n"])) == ["echo 1"]


def test_backslash_continuation_keeps_backslash_newline() -> None:
    jobs = list(command_lines(["echo a \\\n", " b\n", "echo c\n"]))
    assert jobs == ["echo a \\\n b", "echo c"]
    assert sh(jobs[0]) == "a b\n"


def test_continuation_over_several_lines() -> None:
    jobs = list(command_lines(["printf '%s-' \\\n", "  x \\\n", "  y\n"]))
    assert len(jobs) == 1
    assert "\\\n" in jobs[0]
    assert sh(jobs[0]) == "x-y-"


def test_escaped_backslash_at_line_end_is_not_a_continuation() -> None:
    jobs = list(command_lines(["printf '%s\\n' a\\\\\n", "echo b\n"]))
    assert jobs == ["printf '%s\\n' a\\\\", "echo b"]
    assert sh(jobs[0]) == "a\\\n"


def test_odd_number_of_trailing_backslashes_is_a_continuation() -> None:
    lines = ["printf '%s\\n' a\\\\\\\n", "b\n"]  # printf '%s\n' a\\\ + newline + b
    script = "".join(lines)
    assert sh(script) == "a\\b\n"  # what sh makes of the same two lines
    jobs = list(command_lines(lines))
    assert len(jobs) == 1
    assert sh(jobs[0]) == "a\\b\n"


def test_comment_line_inside_a_continuation_is_part_of_the_job() -> None:
    lines = ["echo a \\\n", "# not skipped: the shell sees it\n", "echo b\n"]
    jobs = list(command_lines(lines))
    assert jobs == ["echo a \\\n# not skipped: the shell sees it", "echo b"]
    assert sh(jobs[0]) == sh("".join(lines[:2]))


def test_blank_line_ends_a_continuation_like_sh_does() -> None:
    lines = ["echo a \\\n", "\n", "echo b\n"]
    assert sh("".join(lines)) == "a\nb\n"
    jobs = list(command_lines(lines))
    assert len(jobs) == 2
    assert sh(jobs[0]) == "a\n"
    assert sh(jobs[1]) == "b\n"


def test_input_ending_inside_a_continuation_runs_what_there_is() -> None:
    assert list(command_lines(["echo 1\n", "echo a \\\n"])) == ["echo 1", "echo a"]
    jobs = list(command_lines(["echo a \\\n", "  b \\"]))
    assert len(jobs) == 1
    assert not jobs[0].endswith("\\")
    assert sh(jobs[0]) == "a b\n"


def test_strict_input_ending_inside_a_continuation_is_cut_short() -> None:
    # A job file's last line ending in `\`: the file was likely cut there (job_input).
    lines = ["echo 1\n", "\n", "echo a \\\n", "  b \\"]
    jobs = command_lines(lines, strict=True)
    assert next(jobs) == "echo 1"
    with pytest.raises(JobCutShort) as info:
        next(jobs)
    assert (info.value.first, info.value.last) == (3, 4)
    assert list(command_lines(["echo a \\\n", "\n"], strict=True)) == ["echo a"]  # as in sh


def test_input_of_only_a_backslash() -> None:
    assert list(command_lines(["\\\n"])) == []


def test_crlf_line_endings() -> None:
    lines = ["# c\r\n", "\r\n", "echo 1\r\n", "echo a \\\r\n", " b\r\n"]
    jobs = list(command_lines(lines))
    assert jobs == ["echo 1", "echo a \\\n b"]
    assert all("\r" not in job for job in jobs)
    assert sh(jobs[1]) == "a b\n"


def test_crlf_text_split_with_splitlines_keepends() -> None:
    text = "echo 1\r\necho a \\\r\n b\r\n"
    assert list(command_lines(text.splitlines(keepends=True))) == ["echo 1", "echo a \\\n b"]


def test_empty_input() -> None:
    assert list(command_lines([])) == []
    assert list(command_lines(["\n", "# only a comment\n"])) == []


def test_works_lazily_on_a_generator() -> None:
    consumed: list[str] = []

    def stream() -> Iterator[str]:
        for line in ["echo 1\n", "echo a \\\n", " b\n", "echo 3\n"]:
            consumed.append(line)
            yield line
        raise AssertionError("the whole stream was read")  # pragma: no cover

    jobs = command_lines(stream())
    assert next(jobs) == "echo 1"
    assert consumed == ["echo 1\n"]
    assert next(jobs) == "echo a \\\n b"
    assert len(consumed) == 3
    assert next(jobs) == "echo 3"
    assert len(consumed) == 4


def test_lazy_with_comments_before_the_first_job() -> None:
    consumed: list[str] = []

    def stream() -> Iterator[str]:
        for line in ["# header\n", "\n", "echo 1\n", "echo 2\n"]:
            consumed.append(line)
            yield line

    jobs = command_lines(stream())
    assert next(jobs) == "echo 1"
    assert len(consumed) == 3


safe_word = st.text(
    alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters="-_=.,/"),
    min_size=1,
    max_size=12,
)


@settings(deadline=None, max_examples=200)
@given(st.lists(st.one_of(safe_word, st.just(""), st.just("# comment")), max_size=20))
def test_simple_lines_give_the_non_blank_non_comment_lines(lines: list[str]) -> None:
    expected = [line for line in lines if line and not line.startswith("#")]
    assert list(command_lines(line + "\n" for line in lines)) == expected


# ---- command_from_args ----------------------------------------------------------------------


def test_one_argument_is_kept_verbatim() -> None:
    assert command_from_args(["cd /tmp && echo 'a b' | cat"]) == "cd /tmp && echo 'a b' | cat"
    assert sh(command_from_args(["echo x && echo y"])) == "x\ny\n"


def test_several_arguments_are_quoted_and_joined() -> None:
    args = ["printf", "%s|", "a b", "it's", 'say "hi"', "$HOME", "a;b", "*"]
    command = command_from_args(args)
    assert shlex.split(command) == args
    assert sh(command) == 'a b|it\'s|say "hi"|$HOME|a;b|*|'


def test_several_plain_arguments_read_naturally() -> None:
    assert command_from_args(["python", "train.py", "--lr", "0.1"]) == "python train.py --lr 0.1"


@settings(deadline=None, max_examples=200)
@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")),
        min_size=2,
        max_size=6,
    )
)
def test_several_arguments_round_trip_through_shlex(args: list[str]) -> None:
    assert shlex.split(command_from_args(args)) == args


def test_value_with_spaces_and_quotes_survives_sh() -> None:
    value = """it's "quoted" and   spaced\tout"""
    assert sh(command_from_args(["printf", "%s", value])) == value
