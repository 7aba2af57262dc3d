"""A job page's live log (api/log_cursor.LogCursor) of a log emptied under it (`: > x.log`,
logrotate's copytruncate) shows it again from its start, saying so: it waited for the log to
grow past where it had read, showing nothing of what was written below that."""

from __future__ import annotations

from pathlib import Path

from gpuherd.api.log_cursor import LogCursor


def test_a_log_emptied_under_the_page_is_shown_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "stdout.log"
    log.write_bytes(b"line-1\nline-2\n")
    cursor = LogCursor("stdout", log, 0, keep_open=True)
    try:
        assert cursor.read(final=False) == "line-1\nline-2\n"
        with log.open("r+b") as f:  # (as copytruncate: the same file, emptied)
            f.truncate(0)
        with log.open("ab") as f:
            f.write(b"line-3\n")
        assert cursor.read(final=False) == "[log truncated: shown again from its start]\nline-3\n"
        assert cursor.read(final=True) == ""
    finally:
        LogCursor.close([cursor])
