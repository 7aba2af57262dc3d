"""script_files.shell_words: the words of a command as shlex gives them, split at its blanks
where nothing in it quotes or escapes (shlex took ~0.3 ms a long line, four times per line:
a `submit --file` of 3,000 such lines waited 3.4 s for its warnings)."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuherd.script_files import joined_lines, shell_words

# Quotes, escapes, continued lines, the blanks str.split takes and shlex does not (\x0b,
# \x1c, \x85, \xa0, \u2003), and the shell's operators, which shlex keeps in words.
TRICKY = " \t\r\n'\"\\#$;|&(){}~*?=\x0b\x0c\x1c\x1f\x85\xa0\u2003é"
COMMANDS = st.text(alphabet=st.sampled_from(list(TRICKY) + list("ab0.-/")), max_size=30)


def by_shlex(command: str) -> tuple[str, ...] | None:
    try:
        return tuple(shlex.split(joined_lines(command)))
    except ValueError:
        return None


@settings(max_examples=2000)
@given(COMMANDS)
def test_the_words_are_shlexs_whatever_the_command(command: str) -> None:
    shell_words.cache_clear()  # (each case split afresh, not as an earlier one was)
    assert shell_words(command) == by_shlex(command)


def test_plain_and_quoted_commands_alike() -> None:
    assert shell_words("python train.py --lr 0.1") == ("python", "train.py", "--lr", "0.1")
    assert shell_words('echo \'a b\' "c\\"d"') == ("echo", "a b", 'c"d')
    assert shell_words("python \\\ntrain.py") == ("python", "train.py")  # (joined)
    assert shell_words("echo 'unbalanced") is None
    assert shell_words("a\xa0b") == ("a\xa0b",)  # (one word to the shell; two to str.split)
