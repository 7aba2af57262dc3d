"""`ls` says a herd.db replaced under the daemon (GET /jobs' database_replaced): on stderr, and
above the table of `ls --watch`, whose redraws would wipe a line on stderr."""

from __future__ import annotations

import pytest

from gpuherd.cli.ls_table import warned


def test_a_watched_table_carries_the_warning_above_it(capsys: pytest.CaptureFixture[str]) -> None:
    answer = {"jobs": [], "database_replaced": "herd.db was replaced while the daemon ran"}
    assert warned(["ID  STATE"], answer, watched=True) == [
        "warning: herd.db was replaced while the daemon ran",
        "ID  STATE",
    ]
    assert capsys.readouterr().err == ""


def test_a_plain_table_says_it_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    answer = {"jobs": [], "database_replaced": "herd.db was replaced"}
    assert warned(["ID  STATE"], answer, watched=False) == ["ID  STATE"]
    assert capsys.readouterr().err.endswith(": warning: herd.db was replaced\n")


@pytest.mark.parametrize("answer", [{"jobs": []}, {"jobs": [], "database_replaced": None}])
def test_nothing_is_said_of_a_database_not_replaced(
    answer: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert warned(["x"], answer, watched=True) == ["x"]  # (an older daemon sends no field)
    assert capsys.readouterr().err == ""
