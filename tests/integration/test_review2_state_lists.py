"""`--state` as a comma-separated list: Tab after a comma offers the words left (the shell
gives the whole `failed,k`, which no choice begins with: nothing was offered), and a comma
too many is said as such (it was "'' is not a choice")."""

from __future__ import annotations

from pathlib import Path

from test_completion import values

from conftest import Herd


def test_tab_after_a_comma_offers_the_words_not_given(tmp_path: Path) -> None:
    herd = Herd(tmp_path / "home")  # (completing a state asks no daemon)
    assert values(herd, "gpuherd ls --state failed,k") == ["failed,killed"]
    assert values(herd, "gpuherd clean --state failed,killed,") == [
        "failed,killed,cancelled",
        "failed,killed,lost",
        "failed,killed,succeeded",
    ]
    assert values(herd, "gpuherd sweep status s --state done,m") == ["done,missing"]
    assert values(herd, "gpuherd ls --state f") == ["failed"]  # one word: as before


def test_a_comma_too_many_is_said_in_one_line(tmp_path: Path) -> None:
    herd = Herd(tmp_path / "home")  # (refused before any daemon is asked)
    for given, command in (("failed,", "ls"), (",", "clean"), ("failed,,killed", "ls")):
        said = herd.usage_error(command, "--state", given)
        assert said.startswith(
            f"gpuherd: error: --state: {given!r} has an empty word (a comma too many?): use "
        ), said
    said = herd.usage_error("ls", "--state", "")
    assert said.startswith("gpuherd: error: --state: '' is not a choice: use one of queued,")
