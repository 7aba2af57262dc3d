"""The `Gpuherd-Home` header (gpuherd.home_header): any path a home may have travels in it and
comes back as it was; a home is the same through a link, another folder is not, and a value
the daemon cannot read names no home (served, as a request without the header)."""

from __future__ import annotations

import os
from pathlib import Path

from gpuherd.home_header import asked, header_value, identity, is_home, same_home


def test_any_path_travels_as_ascii_and_comes_back(tmp_path: Path) -> None:
    # A space, a newline, a percent sign, a letter beyond ASCII, a byte in no encoding:
    home = Path(os.fsdecode(os.fsencode(tmp_path) + "/a b\n%20\u00e9".encode() + b"\xff"))
    home.mkdir()
    value = header_value(home)
    assert value.isascii() and value.isprintable()
    assert asked(value.encode()) == (identity(home), str(home))
    assert asked(header_value(tmp_path / "not made").encode()) == (None, str(tmp_path / "not made"))


def test_a_home_is_known_by_its_folder(tmp_path: Path) -> None:
    home, other, link = tmp_path / "home", tmp_path / "other", tmp_path / "link"
    home.mkdir()
    other.mkdir()
    link.symlink_to(home)
    own = identity(home)

    def served(path: Path) -> bool:
        request = asked(header_value(path).encode())
        assert request is not None
        return is_home(request, own, home)

    assert served(home) and served(link)
    assert not served(other) and not served(tmp_path / "not made")
    home.rename(tmp_path / "renamed")  # the daemon's home by its new name is still its home
    assert served(tmp_path / "renamed")
    home.mkdir()  # made again under the daemon: no other home's, by its path
    assert served(home)


def test_a_value_the_daemon_cannot_read_names_no_home() -> None:
    for value in (b"", b"/home/me", b"12 /home/me", b"1:x /home/me", b"1:2", b"-"):
        assert asked(value) is None, value


def test_same_home_is_the_same_folder_by_any_path(tmp_path: Path) -> None:
    home, other = tmp_path / "home", tmp_path / "other"
    home.mkdir()
    other.mkdir()
    (tmp_path / "link").symlink_to(home)
    assert same_home(home, tmp_path / "link") and same_home(str(home), home)
    assert not same_home(home, other)
    assert not same_home(tmp_path / "gone", other)  # (none there: by its text alone)
