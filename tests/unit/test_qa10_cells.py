"""Terminal columns of marks whose combining class is 0: Thai and Hindi vowel signs, and
format characters such as a zero-width space, take none (as wcwidth counts them), so a
table with such a name stays aligned."""

from __future__ import annotations

import io

from gpuherd.cli import plain

THAI = "\u0e17\u0e35\u0e48\u0e14\u0e34\u0e19"  # ที่ดิน: 3 letters, 3 marks above them


def test_marks_of_class_zero_and_format_characters_take_no_column() -> None:
    assert plain.cells(THAI) == 3
    assert plain.cells("\u0939\u093f\u0902\u0926\u0940") == 4  # हिंदी: its anusvara takes none
    assert plain.cells("a\u200bb") == 2  # a zero-width space
    assert plain.cells("\u00ad") == 1  # but the soft hyphen, which a terminal shows
    assert plain.cut(THAI + "abc", 4) == THAI + "…"


def test_a_table_with_a_thai_name_stays_aligned() -> None:
    term = plain.Terminal(io.StringIO())
    lines = plain.table(term, ["NAME", "X"], [[THAI, "1"], ["abc", "2"]])
    assert lines == ["NAME  X", THAI + "   1", "abc   2"]
