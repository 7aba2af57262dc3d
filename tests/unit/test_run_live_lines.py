"""How `gpuherd run --live` cuts a job's log into the lines it shows (runner_live.Lines): pure,
with the clock passed in, so a progress bar's showing every PROGRESS_EVERY seconds is tested
without waiting for it."""

from __future__ import annotations

from gpuherd.runner_live import LONGEST, PROGRESS_EVERY, Lines


def test_a_line_written_in_pieces_is_shown_once_whole() -> None:
    lines = Lines()
    assert lines.feed(b"epoch 1 lo", 0) == []
    assert lines.feed(b"ss 0.5\nepoch 2", 0) == ["epoch 1 loss 0.5"]
    assert lines.feed(b"", 0) == []
    assert lines.finish() == ["epoch 2"]  # the job ended without the newline
    assert lines.finish() == []


def test_a_progress_bar_redrawn_in_place_is_its_latest_drawing_now_and_then() -> None:
    lines = Lines()
    assert lines.feed(b"\r  0%|", 0) == []
    assert lines.feed(b"\r 10%|#", PROGRESS_EVERY - 1) == []
    assert lines.feed(b"\r 20%|##", PROGRESS_EVERY) == [" 20%|##"]
    assert lines.feed(b"\r 30%|###", PROGRESS_EVERY + 1) == []
    assert lines.feed(b"", 3 * PROGRESS_EVERY) == []  # stuck: not shown again and again
    assert lines.feed(b"\r100%|##########\n", PROGRESS_EVERY + 2) == ["100%|##########"]
    # A bar that draws after its \r, a thousand times: only the last drawing is kept.
    for n in range(1000):
        lines.feed(f"step {n}\r".encode(), 100)
    assert lines.finish() == ["step 999"]


def test_long_lines_come_in_pieces_never_cut_inside_a_character() -> None:
    text = "é" * LONGEST  # two bytes each: twice LONGEST
    shown = Lines().feed(text.encode() + b"\n", 0)
    assert len(shown) == 2 and "".join(shown) == text
    lines = Lines()
    pending = lines.feed(b"z" * (3 * LONGEST), 0)  # no newline yet: cut all the same
    assert pending == ["z" * LONGEST] * 2
    assert lines.finish() == ["z" * LONGEST]


def test_bytes_that_are_not_utf8_show_as_replacement_characters() -> None:
    assert Lines().feed(b"loss \xff\xfe nan\n", 0) == ["loss \ufffd\ufffd nan"]
