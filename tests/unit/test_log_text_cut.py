"""A log's tail read from the middle of a line (log_text.tail_lines, which `gpuherd show` and a
failed job's page use): the line's end after `…`, a redrawn line's last drawing whole, and a
line longer than a page's summary shown by its end."""

from __future__ import annotations

from pathlib import Path

from gpuherd import log_text

TAIL = log_text.TAIL_BYTES


def test_a_line_longer_than_the_tail_shows_its_end_marked_cut(tmp_path: Path) -> None:
    """The page dropped everything up to the first newline: a failure whose last line was
    longer than the part read showed nothing at all."""
    log = tmp_path / "stderr.log"
    log.write_text("Traceback (most recent call last):\n" + "ValueError: " + "x" * TAIL + "\n")
    (line,) = log_text.tail_lines(log, 6)
    assert line == "…" + "x" * (TAIL - 1)  # the tail's bytes, less the newline that ends it


def test_a_tail_that_begins_on_a_whole_line_marks_nothing(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    last = "y" * (TAIL - 1) + "\n"  # the tail is this line exactly: it begins after a newline
    log.write_text("before\n" + last)
    assert log_text.tail_lines(log, 2) == ["y" * (TAIL - 1)]
    log.write_text("before" + last)  # one byte of it before the tail: cut
    assert log_text.tail_lines(log, 2) == ["…" + "y" * (TAIL - 1)]
    log.write_text("before\n" + "\n" + "z" * (TAIL - 2) + "\n")  # an empty line shown whole
    assert log_text.tail_lines(log, 3) == ["", "z" * (TAIL - 2)]
    log.write_text("x" * TAIL + "\n" + "z" * (TAIL - 1) + "\n")  # only the first's newline
    assert log_text.tail_lines(log, 3) == ["z" * (TAIL - 1)]  # nothing of it: left out


def test_a_progress_line_begun_before_the_tail_shows_its_last_drawing(tmp_path: Path) -> None:
    """Its last drawing, after its last `\\r`, lies wholly in the tail: shown, not cut."""
    log = tmp_path / "stderr.log"
    frames = "".join(f"\r{i:5d}|{'#' * 20}" for i in range(2 * TAIL // 26))
    log.write_text(frames + "\nValueError: x\n")
    last = f"{2 * TAIL // 26 - 1:5d}|{'#' * 20}"
    assert log_text.tail_lines(log, 3) == [last, "ValueError: x"]
    log.write_text("a" * TAIL + "\rdone\r\nValueError: x\n")  # the drawing begun in the tail
    assert log_text.tail_lines(log, 3) == ["done", "ValueError: x"]
    end = "done\r\nValueError: x\n"
    log.write_text("a" * TAIL + end)  # a return that ends the line begins no drawing
    assert log_text.tail_lines(log, 3)[0] == "…" + "a" * (TAIL - len(end)) + "done"


def test_a_character_cut_at_the_tails_start_is_left_out(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_bytes("é".encode() * TAIL + b"\n")  # the tail begins in the middle of one
    (line,) = log_text.tail_lines(log, 1)
    assert line == "…" + "é" * ((TAIL - 1) // 2)
    assert "\ufffd" not in line


def test_longest_shows_a_long_lines_end(tmp_path: Path) -> None:
    """A failure's summary at the top of its page: a line of 7 KB filled the screen."""
    log = tmp_path / "stderr.log"
    log.write_text("Traceback\n" + "ValueError: " + "0.1234, " * 900 + "end\n")
    lines = log_text.tail_lines(log, 6, longest=50)
    assert lines == ["Traceback", "…" + ("0.1234, " * 900 + "end")[-49:]]
    assert len(lines[1]) == 50
    assert log_text.tail_lines(log, 6, longest=10_000)[1].startswith("ValueError: 0.1234")
