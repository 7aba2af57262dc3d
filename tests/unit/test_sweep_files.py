"""The point folders' JSON files: kept between reads only while they are unchanged, never
when just written; and a file that is not JSON says where it stops."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import wait_for
from gpuherd import sweep_files
from gpuherd.sweep_files import NotJson, load_json, read_json


def age(path: Path, seconds: float) -> os.stat_result:
    """Give the file a modification time `seconds` ago; its lstat."""
    then = time.time() - seconds
    os.utime(path, (then, then))
    return os.lstat(path)


def test_a_kept_file_is_read_again_once_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # utime() sets the change time to now: keep even fresh files here.
    monkeypatch.setattr(sweep_files, "SETTLED", -1.0)
    path = tmp_path / "metrics.json"
    path.write_text('{"acc": 1}')
    old = age(path, 60)
    assert load_json(str(path)) == {"acc": 1}
    assert str(path) in sweep_files._kept  # kept: the next read only stats it
    # Rewritten at the same size and given back the same modification time: its change
    # time (which no one can set) still tells the versions apart, once the file system's
    # clock has ticked (SETTLED is there for files changed within a tick).
    probe = tmp_path / "probe"

    def ticked() -> bool:
        probe.write_text("")
        return os.lstat(probe).st_ctime_ns > old.st_ctime_ns

    wait_for(ticked, 5, "the file system's clock to tick")
    path.write_text('{"acc": 2}')
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert os.lstat(path).st_mtime_ns == old.st_mtime_ns
    assert load_json(str(path)) == {"acc": 2}


def test_a_file_just_written_is_read_each_time(tmp_path: Path) -> None:
    path = tmp_path / "params.json"
    path.write_text('{"x": 1}')
    assert read_json(path) == {"x": 1}
    assert str(path) not in sweep_files._kept


def test_not_json_says_where_and_a_link_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "metrics.json"
    path.write_text('{"acc": 0.3,\n "loss": ')
    with pytest.raises(NotJson, match=r"^not valid JSON: it stops mid-value at line 2, column 10 "):
        load_json(str(path))
    path.write_text('{"acc": 0.3} x')  # not at its end: json's own words of what it expected
    with pytest.raises(NotJson, match=r"^not valid JSON at line 1, column 14: Extra data$"):
        load_json(str(path))
    assert read_json(path) is None
    # Cut inside a string (a key, a value): json named where the string began, and its
    # message trailed off ("Unterminated string starting at"), advising one object.
    for cut in ('{"acc": 0.9, "lo', '{"acc": "hel'):
        path.write_text(cut)
        said = f"^not valid JSON: it stops mid-value at line 1, column {len(cut) + 1} \\(cut off"
        with pytest.raises(NotJson, match=said):
            load_json(str(path))
    path.write_text('{"a": "x\ny"}')  # (a line break in a string: not cut off)
    with pytest.raises(
        NotJson, match=r"^not valid JSON at line 1, column 9: Invalid control character$"
    ):
        load_json(str(path))
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert read_json(link) is None


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        # A byte over the cap read "1.0 MiB, more than the 1.0 MiB read": two equal numbers.
        (1, "1,048,577 bytes, over the 1,048,576-byte (1.0 MiB) limit; keep final values in"),
        (2 * 1024 * 1024, "3.0 MiB, over the 1.0 MiB limit; keep final values in it, curves"),
    ],
)
def test_a_metrics_file_too_large_says_its_size_and_the_cap_apart(
    tmp_path: Path, extra: int, said: str
) -> None:
    (tmp_path / "metrics.json").write_bytes(b" " * (sweep_files.JSON_MAX_BYTES + extra))
    read = sweep_files.read_metrics(str(tmp_path))
    assert read["metrics"] == {}
    assert read["metrics_error"].startswith(f"{tmp_path}/metrics.json: {said}")


@pytest.mark.parametrize(
    ("data", "at"),
    [
        (b'\xff\xfe{\x00"\x00a', 6),  # read as UTF-16 (its byte order mark), cut off
        (b'{"note": "caf\xe9"}', 13),  # Latin-1
    ],
)
def test_a_metrics_file_that_is_not_utf8_text_says_so(tmp_path: Path, data: bytes, at: int) -> None:
    # Python's own words leaked: "not valid JSON: 'utf-16-le' codec can't decode byte 0x61 in
    # position 6: truncated data (cut off mid-write?)".
    (tmp_path / "metrics.json").write_bytes(data)
    read = sweep_files.read_metrics(str(tmp_path))
    assert read == {
        "metrics": {},
        "metrics_error": f"{tmp_path}/metrics.json: not UTF-8 text (at byte {at}); write it as"
        " UTF-8 JSON",
    }


WRITE_OBJECT = 'write one JSON object in it, {"name": value, ...}'
WRITE_WHOLE = "write it whole: to a temporary file, then rename that to metrics.json"


@pytest.mark.parametrize(
    ("make", "said"),
    [
        # Each was said without what to do, some with Python's words or the path twice:
        # "not read (/r/k=dir/metrics.json is not a plain file: not read)"; an empty file
        # "not valid JSON at line 1, column 1: Expecting value (cut off mid-write?)".
        (
            lambda p: p.write_text('{"acc": 0.3, '),
            "not valid JSON: it stops mid-value at line 1,"
            f" column 14 (cut off, or still being written?); {WRITE_WHOLE}",
        ),
        (lambda p: p.write_text(""), f"empty (cut off, or still being written?); {WRITE_WHOLE}"),
        (
            lambda p: p.write_text("acc=0.3\n"),
            f"not valid JSON at line 1, column 1: Expecting value; {WRITE_OBJECT}",
        ),
        (lambda p: p.write_text("[0.3]"), f"valid JSON, but a list, not an object; {WRITE_OBJECT}"),
        (lambda p: p.mkdir(), f"a folder, not a file; remove it and {WRITE_OBJECT}"),
        (os.mkfifo, f"not a plain file (a pipe, a device?); remove it and {WRITE_OBJECT}"),
        (
            lambda p: p.symlink_to(p.with_name("elsewhere.json")),
            "a symbolic link, which the daemon does not follow; write a plain metrics.json",
        ),
    ],
)
def test_each_unreadable_metrics_file_says_what_is_wrong_and_what_to_do(
    tmp_path: Path, make: Callable[[Path], object], said: str
) -> None:
    make(tmp_path / "metrics.json")
    read = sweep_files.read_metrics(str(tmp_path))
    assert read == {"metrics": {}, "metrics_error": f"{tmp_path}/metrics.json: {said}"}


def test_a_metrics_file_that_cannot_be_opened_says_why_in_its_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (The tests run as root, whom no mode keeps out: the open is made to fail as a user's.)
    (tmp_path / "metrics.json").write_text('{"acc": 1}')

    def refused(path: str) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)

    monkeypatch.setattr(sweep_files, "open_job_file", refused)
    read = sweep_files.read_metrics(str(tmp_path))
    assert read["metrics_error"] == (  # was "not read ([Errno 13] Permission denied: '/...')"
        f"{tmp_path}/metrics.json: cannot be read (Permission denied); make it readable by the"
        " daemon's user (chmod a+r)"
    )
